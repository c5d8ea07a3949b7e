//! Several nodes behind a real HAProxy, sessions in a real Redis, all started by
//! `deploy/local-cluster.sh` with the repository's `deploy/haproxy.cfg`: the seed's
//! workflow through the balancer (sticky by `Acp-Connection-Id`), the same sessions listed
//! by both nodes, and failover: the node holding a session is killed, the client
//! initializes again through the balancer, and the other node replays the whole history
//! and the next prompt sees it. Skipped, saying why, without redis-server or haproxy.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::command::{BIN, llm_env};
use crate::support::fake_llm::{FakeLlm, text_reply};
use crate::support::http_client::{Endpoint, Event, Sse};
use crate::support::procs::alive;
use crate::support::redis::Redis;
use crate::support::skip::{Ci, skip};
use crate::support::workspace::Workspace;

/// A running local cluster.
struct Cluster {
    script: Child,
    /// The balancer's `host:port`.
    lb: String,
    /// The token every request needs (the script makes one).
    token: String,
    /// (name, pid, `host:port`) of each node.
    nodes: Vec<(String, u32, String)>,
    redis_port: u16,
}

impl Cluster {
    #[allow(clippy::print_stderr)]
    fn start(ws: &Workspace, llm: &FakeLlm) -> Option<Cluster> {
        for program in ["redis-server", "haproxy"] {
            let found = Command::new("sh")
                .args(["-c", &format!("command -v {program}")])
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !found {
                skip(&format!("{program} is not installed (apt-get install {program})"), Ci::Fails);
                return None;
            }
        }
        let base = free_base();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/local-cluster.sh");
        let mut command = Command::new("bash");
        command.arg(script).env_clear().envs(llm_env(llm));
        command
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", ws.root())
            .env("IAC_CODE_CONFIG_DIR", ws.config())
            .env("IAC_CODE_BIN", &*BIN)
            .env("IAC_CODE_LEASE_TTL", "2")
            .env("TMPDIR", ws.root())
            .env("BASE_PORT", base.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut script = command.spawn().expect("start deploy/local-cluster.sh");
        let stdout = script.stdout.take().expect("stdout");
        let (tx, lines) = crossbeam_channel::unbounded();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut cluster = Cluster {
            script,
            lb: format!("127.0.0.1:{base}"),
            token: String::new(),
            nodes: Vec::new(),
            redis_port: 0,
        };
        loop {
            let line = lines.recv_timeout(Duration::from_secs(60)).expect("the cluster starts");
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["ready:", ..] => return Some(cluster),
                ["redis", "pid", _, "port", port] => cluster.redis_port = port.parse().ok()?,
                ["token", token] => cluster.token = token.to_string(),
                [name, "pid", pid, "port", port] if name.starts_with("node") => {
                    cluster.nodes.push((
                        name.to_string(),
                        pid.parse().ok()?,
                        format!("127.0.0.1:{port}"),
                    ));
                }
                _ => {}
            }
        }
    }

    fn redis(&self, line: &str) -> String {
        Redis::command_at(self.redis_port, line).unwrap_or_default()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // SIGTERM: the script's trap stops Redis, the nodes and HAProxy.
        let _ = Command::new("kill").args(["-TERM", &self.script.id().to_string()]).status();
        let _ = self.script.wait();
    }
}

/// A base port with its neighbours free (HAProxy, two nodes, Redis, the peers port).
fn free_base() -> u16 {
    for _ in 0..200 {
        let probe = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = probe.local_addr().expect("addr").port();
        drop(probe);
        if base > 60_000 {
            continue;
        }
        let ports = [base, base + 1, base + 2, base + 50, base + 51];
        if ports.iter().all(|p| TcpListener::bind(("127.0.0.1", *p)).is_ok()) {
            return base;
        }
    }
    panic!("no free ports for the cluster");
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn answered(id: i64) -> impl Fn(&Event) -> bool {
    move |e| e.data.get("id") == Some(&json!(id)) && e.data.get("method").is_none()
}

/// Sends `message` on `conn` and reads the events up to its answer.
fn call(at: &Endpoint, conn: &str, sse: &Sse, message: Value) -> Vec<Event> {
    let id = message["id"].as_i64().unwrap();
    let posted = at.post(Some(conn), &message);
    assert_eq!(posted.status, 202, "{posted:?}");
    sse.until(answered(id))
}

fn text_of(events: &[Event]) -> String {
    events
        .iter()
        .filter(|e| e.data["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|e| e.data["params"]["update"]["content"]["text"].as_str())
        .collect()
}

fn prompt(text: &str, session: &str, id: i64) -> Value {
    let params = json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]});
    rpc(id, "session/prompt", params)
}

#[test]
fn the_seed_workflow_through_haproxy_survives_the_death_of_a_node() {
    let ws = Workspace::new("cluster");
    let llm = FakeLlm::start(vec![text_reply("noted: acme-logs"), text_reply("it is acme-logs")]);
    let Some(cluster) = Cluster::start(&ws, &llm) else { return };
    let lb = Endpoint::with_token(&cluster.lb, &cluster.token);
    let unauthorized = Endpoint::at(&cluster.lb).request("POST", "/acp", &[], b"{}");
    assert_eq!(unauthorized.status, 401, "the cluster wants its token");
    let cwd = ws.project();

    let conn = lb.initialize();
    let sse = lb.stream(&conn, None, None);
    let events =
        call(&lb, &conn, &sse, rpc(1, "session/new", json!({"cwd": cwd, "mcpServers": []})));
    let session = events.last().unwrap().data["result"]["sessionId"].as_str().unwrap().to_owned();
    let events = call(&lb, &conn, &sse, prompt("remember the bucket acme-logs", &session, 2));
    assert_eq!(events.last().unwrap().data["result"]["stopReason"], "end_turn");
    assert!(text_of(&events).contains("noted"), "streamed through the balancer");

    // Both nodes list the same sessions.
    let lists: Vec<Value> = cluster
        .nodes
        .iter()
        .map(|(_, _, addr)| {
            let node = Endpoint::with_token(addr, &cluster.token);
            let conn = node.initialize();
            let sse = node.stream(&conn, None, None);
            let events = call(&node, &conn, &sse, rpc(9, "session/list", json!({})));
            events.last().unwrap().data["result"]["sessions"].clone()
        })
        .collect();
    assert_eq!(lists[0], lists[1], "the same list from both nodes");
    assert_eq!(lists[0].as_array().map(Vec::len), Some(1));

    // Kill -9 the node that holds the session (its lease names it).
    let lease = cluster.redis(&format!("GET iac:s:{session}:lease"));
    let holder = cluster
        .nodes
        .iter()
        .find(|(name, _, _)| lease.contains(&format!("{name}|")))
        .unwrap_or_else(|| panic!("no node holds the lease: {lease}"));
    let status = Command::new("kill").args(["-KILL", &holder.1.to_string()]).status();
    assert!(status.is_ok_and(|s| s.success()));
    let killed = Instant::now();
    // A bounded wait for the kernel to finish the process.
    while alive(holder.1) && killed.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }

    // The old connection gets a clear answer, never a hang: 400 from the other node
    // ("send initialize first"), or 502 when the request raced the node's death.
    let asked = Instant::now();
    let stale = lb.post(Some(&conn), &rpc(3, "session/list", json!({})));
    assert!(matches!(stale.status, 400 | 502), "{stale:?}");
    assert!(asked.elapsed() < Duration::from_secs(5), "no hang");
    // A new connection through the balancer; the other node replays everything.
    let conn = lb.initialize();
    let sse = lb.stream(&conn, None, None);
    let mut id = 10;
    let replay = loop {
        let params = json!({"sessionId": session, "cwd": cwd, "mcpServers": []});
        let events = call(&lb, &conn, &sse, rpc(id, "session/load", params));
        id += 1;
        let busy = events.last().unwrap().data.pointer("/error/code") == Some(&json!(-32001));
        if !busy {
            break events;
        }
        assert!(killed.elapsed() < Duration::from_secs(10), "the lease never expired");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(replay.last().unwrap().data.get("result").is_some(), "{:?}", replay.last());
    assert!(killed.elapsed() < Duration::from_secs(4), "failover within TTL + 1 s and a little");
    assert!(text_of(&replay).contains("noted: acme-logs"), "the full history is replayed");
    let events = call(&lb, &conn, &sse, prompt("which bucket?", &session, id));
    assert_eq!(events.last().unwrap().data["result"]["stopReason"], "end_turn");
    let context = llm.requests()[1].body.to_string();
    assert!(context.contains("remember the bucket acme-logs"), "the next prompt sees the context");
}
