#!/usr/bin/env bash
# A local cluster to try several nodes: Redis, N iac-code nodes sharing their sessions in it,
# and HAProxy in front (deploy/haproxy.cfg), all on loopback ports. Prints the URL to give
# an ACP client, then one line per process; Ctrl-C (or SIGTERM) stops everything.
#
#   deploy/local-cluster.sh                 # 2 nodes, HAProxy on 127.0.0.1:8700
#   NODES=3 BASE_PORT=9700 deploy/local-cluster.sh
#
# Needs redis-server and haproxy (apt-get install redis-server haproxy) and iac-code
# (IAC_CODE_BIN, else the one on PATH, else ~/.local/bin/iac-code). The nodes read the
# provider settings as iac-code always does (environment, settings.json). Ports: HAProxy
# on BASE_PORT, node i on BASE_PORT+i, Redis on BASE_PORT+50, the peers port BASE_PORT+51.
set -euo pipefail

nodes=${NODES:-2}
base=${BASE_PORT:-8700}
case "$nodes$base" in
    *[!0-9]*)
        echo "local-cluster: NODES and BASE_PORT must be numbers" >&2
        exit 2
        ;;
esac
if [ "$base" -lt 1024 ] || [ "$base" -gt 65480 ]; then
    echo "local-cluster: BASE_PORT must be 1024-65480" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
bin=${IAC_CODE_BIN:-$(command -v iac-code || echo "$HOME/.local/bin/iac-code")}
for program in redis-server haproxy "$bin"; do
    if ! command -v "$program" >/dev/null 2>&1; then
        echo "local-cluster: $program not found" >&2
        exit 2
    fi
done
if [ "$nodes" -lt 2 ] || [ "$nodes" -gt 40 ]; then
    echo "local-cluster: NODES must be 2-40" >&2
    exit 2
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/iac-cluster.XXXXXX")
pids=()
stop() {
    trap - EXIT INT TERM
    kill "${pids[@]}" 2>/dev/null || true
    # At most 5 s for everything to go, then SIGKILL.
    for _ in $(seq 50); do
        kill -0 "${pids[@]}" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "${pids[@]}" 2>/dev/null || true
    wait 2>/dev/null || true
    echo "local-cluster: stopped; logs kept in $dir" >&2
}
trap stop EXIT
trap 'exit 130' INT TERM

# Waits (at most 10 s) until process $2 accepts connections on 127.0.0.1:$1.
wait_port() {
    for _ in $(seq 100); do
        if ! kill -0 "$2" 2>/dev/null; then
            echo "local-cluster: the process for port $1 ended (logs in $dir)" >&2
            exit 1
        fi
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    echo "local-cluster: nothing listens on port $1 (logs in $dir)" >&2
    exit 1
}

redis_port=$((base + 50))
# Durable as the man page asks (SEVERAL NODES, Durability): every write reaches the AOF before Redis answers.
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$dir" --save "" \
    --appendonly yes --appendfsync always --daemonize no >"$dir/redis.log" 2>&1 &
redis_pid=$!
pids+=("$redis_pid")
echo "redis pid $redis_pid port $redis_port"
wait_port "$redis_port" "$redis_pid"

store="redis://127.0.0.1:$redis_port/0"
# Every request needs this token (HAProxy passes the Authorization header through): with
# the nodes behind a balancer, the peer check would see only HAProxy's user.
token=${IACCODE_ACP_HTTP_TOKEN:-$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')}
export IACCODE_ACP_HTTP_TOKEN=$token
echo "token $token"
node_pids=()
for i in $(seq "$nodes"); do
    port=$((base + i))
    "$bin" acp --transport http --host 127.0.0.1 --port "$port" --session-store "$store" \
        --node-id "node$i" --log-file "$dir/node$i.log" >"$dir/node$i.out" 2>&1 &
    pids+=($!)
    node_pids+=($!)
    echo "node$i pid $! port $port"
done
for i in $(seq "$nodes"); do
    wait_port $((base + i)) "${node_pids[$((i - 1))]}"
done

# The repository's configuration, with a `server` line per node past the second.
cfg="$dir/haproxy.cfg"
cp "$here/haproxy.cfg" "$cfg"
for i in $(seq 3 "$nodes"); do
    echo "    server node$i 127.0.0.1:$((base + i))" >>"$cfg"
done
IAC_LB_BIND="127.0.0.1:$base" IAC_NODE1="127.0.0.1:$((base + 1))" \
    IAC_NODE2="127.0.0.1:$((base + 2))" IAC_LB_PEER=lb1 IAC_LB_PEER_ADDR="127.0.0.1:$((base + 51))" \
    haproxy -db -L lb1 -f "$cfg" >"$dir/haproxy.log" 2>&1 &
lb=$!
pids+=("$lb")
echo "haproxy pid $lb port $base"
wait_port "$base" "$lb"

echo "ready: http://127.0.0.1:$base/acp with 'Authorization: Bearer $token' (logs in $dir; Ctrl-C stops everything)"
# A node may die (try it: kill -9 one, the others take its sessions over); the cluster
# ends with HAProxy.
wait "$lb" || true
echo "local-cluster: haproxy ended; stopping" >&2
exit 1
