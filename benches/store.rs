//! The shared session store and several nodes: with Redis on loopback beside the file
//! store, one journal append, `session/load` of a 5,000-message session and `session/list`
//! over 10,000 sessions through the real binary; then, on `deploy/local-cluster.sh` (Redis,
//! two nodes, HAProxy), failover (kill -9 the node holding a session → the other node has
//! replayed it) and 1,000 concurrent connections through HAProxy. Run with
//! `cargo bench --bench store` (needs redis-server and haproxy; says so and stops without).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[allow(dead_code)]
#[path = "support/acp_http.rs"]
mod acp_http;
#[allow(dead_code)]
#[path = "support/agent.rs"]
mod agent;
#[path = "support/builds.rs"]
mod builds;
#[allow(dead_code)]
#[path = "../tests/support/redis.rs"]
mod redis;
#[allow(dead_code)]
#[path = "../tests/support/skip.rs"]
mod skip;
#[allow(dead_code)]
#[path = "support/summary.rs"]
mod summary;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use std::time::{Duration, Instant};

use acp_http::{initialize, open_stream, post, read_events};
use agent::Agent;
use iac_code::session::record::Record;
use iac_code::session::store::{FileStore, Meta, RedisStore, SessionStore};
use redis::Redis;
use serde_json::{Value, json};

const MESSAGES: usize = 5_000;
const SESSIONS: usize = 10_000;
const CONNECTIONS: usize = 1_000;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn meta(cwd: &Path) -> Meta {
    Meta::new(cwd.display().to_string(), Some("bench".into()))
}

fn user(n: usize) -> Record {
    Record::User {
        id: None,
        text: format!("message {n}: terraform plan for the vpc module"),
        images: Vec::new(),
    }
}

/// One store's figures: append (library), load and list (the binary).
fn store(label: &str, store: &dyn SessionStore, env: &[(&str, String)], bin: &Path, cwd: &Path) {
    let journal = store.create(meta(cwd)).unwrap();
    let mut times = Vec::with_capacity(2_000);
    for n in 0..2_000 {
        let start = Instant::now();
        journal.append(&user(n)).unwrap();
        times.push(start.elapsed());
    }
    let append = median(times);
    let long = journal.meta().session_id;
    for n in 2_000..MESSAGES {
        journal.append(&user(n)).unwrap();
    }
    drop(journal);
    for _ in 1..SESSIONS {
        drop(store.create(meta(cwd)).unwrap());
    }
    let mut agent = Agent::spawn_bin(bin, env);
    agent.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}}));
    let mut loads = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let id =
            agent.send("session/load", json!({"sessionId": long, "cwd": cwd, "mcpServers": []}));
        let (replayed, response) = agent.wait(id);
        loads.push(start.elapsed());
        assert!(response.get("result").is_some(), "{response}");
        assert!(replayed >= MESSAGES, "{replayed}");
        agent.call("session/close", json!({"sessionId": long}));
    }
    let mut lists = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let list = agent.call("session/list", json!({}));
        lists.push(start.elapsed());
        assert!(list.get("result").is_some(), "{list}");
    }
    let (load, list) = (median(loads), median(lists));
    println!(
        "[{label}] append {:.3} ms, session/load of {MESSAGES} messages {:.1} ms, session/list over {SESSIONS} sessions {:.1} ms",
        ms(append),
        ms(load),
        ms(list)
    );
    summary::at_most(&format!("[{label}] one journal append (median)"), ms(append), 0.3, "ms");
    summary::at_most(&format!("[{label}] session/load, {MESSAGES} messages"), ms(load), 50.0, "ms");
    summary::at_most(
        &format!("[{label}] session/list, {SESSIONS} sessions"),
        ms(list),
        100.0,
        "ms",
    );
}

/// `deploy/local-cluster.sh` on free ports; its balancer, node addresses and pids.
struct Cluster {
    script: Child,
    lb: String,
    nodes: Vec<(u32, String)>,
}

impl Cluster {
    fn start(bin: &Path, home: &Path, base: u16) -> Cluster {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/local-cluster.sh");
        let mut child = Command::new("bash")
            .arg(script)
            .env("IAC_CODE_BIN", bin)
            .env("BASE_PORT", base.to_string())
            .env("HOME", home)
            .env("IAC_CODE_CONFIG_DIR", home.join("config"))
            .env("IAC_CODE_LEASE_TTL", "2")
            .env("IAC_CODE_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut nodes = Vec::new();
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let line = line.unwrap();
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["ready:", ..] => break,
                ["token", token] => {
                    let _ = acp_http::TOKEN.set(token.to_string());
                }
                [name, "pid", pid, "port", port] if name.starts_with("node") => {
                    nodes.push((pid.parse().unwrap(), format!("127.0.0.1:{port}")));
                }
                _ => {}
            }
        }
        Cluster { script: child, lb: format!("127.0.0.1:{base}"), nodes }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.script.id().to_string()]).status();
        let _ = self.script.wait();
    }
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Sends `message` on `conn` at `addr` and reads its stream until the answer.
fn call(
    addr: &str,
    conn: &str,
    stream: &mut BufReader<std::net::TcpStream>,
    message: Value,
) -> Value {
    let id = message["id"].clone();
    let (status, _, _) = post(addr, Some(conn), &message);
    assert_eq!(status, 202);
    let mut answer = Value::Null;
    read_events(stream, |event| {
        let done = event.get("id") == Some(&id) && event.get("method").is_none();
        if done {
            answer = event;
        }
        !done
    });
    answer
}

/// Kill -9 the node holding a session; time until the other node has replayed it.
fn failover(cluster: &Cluster, redis_url: &str, cwd: &Path) {
    let url = redis_url.to_string();
    let store = RedisStore::new(&url, "iac:", "bench", Duration::from_secs(2), None).unwrap();
    let journal = store.create(meta(cwd)).unwrap();
    for n in 0..100 {
        journal.append(&user(n)).unwrap();
    }
    let id = journal.meta().session_id;
    drop(journal);
    let (pid, first) = &cluster.nodes[0];
    let conn = initialize(first);
    let mut stream = open_stream(first, &conn);
    let params = json!({"sessionId": id, "cwd": cwd, "mcpServers": []});
    let loaded = call(first, &conn, &mut stream, rpc(1, "session/load", params.clone()));
    assert!(loaded.get("result").is_some(), "{loaded}");
    let killed = Instant::now();
    Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
    let conn = initialize(&cluster.lb);
    let mut stream = open_stream(&cluster.lb, &conn);
    let mut n = 2;
    loop {
        let answer = call(&cluster.lb, &conn, &mut stream, rpc(n, "session/load", params.clone()));
        n += 1;
        if answer.get("result").is_some() {
            break;
        }
        assert!(killed.elapsed() < Duration::from_secs(10), "{answer}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = killed.elapsed();
    println!("failover: kill -9 → the other node has replayed the session in {:.0} ms", ms(took));
    summary::at_most("failover: kill -9 → replayed elsewhere (TTL 2 s)", ms(took), 3000.0, "ms");
}

/// 1,000 connections through HAProxy at once, each with its stream open, then a session
/// created on each: how many were served.
fn concurrent(cluster: &Cluster, cwd: &Path) {
    let (ready_tx, ready) = crossbeam_channel::unbounded::<bool>();
    let (go_tx, go) = crossbeam_channel::bounded::<()>(0);
    let threads: Vec<_> = (0..CONNECTIONS)
        .map(|_| {
            let (lb, cwd, ready_tx, go) =
                (cluster.lb.clone(), cwd.to_path_buf(), ready_tx.clone(), go.clone());
            std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn(move || {
                    let opened = std::panic::catch_unwind(|| {
                        let conn = initialize(&lb);
                        let stream = open_stream(&lb, &conn);
                        (conn, stream)
                    });
                    let _ = ready_tx.send(opened.is_ok());
                    let Ok((conn, mut stream)) = opened else { return false };
                    // Every stream is open before any session starts.
                    let _ = go.recv();
                    let params = json!({"cwd": cwd, "mcpServers": []});
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        call(&lb, &conn, &mut stream, rpc(1, "session/new", params))
                            .pointer("/result/sessionId")
                            .is_some()
                    }))
                    .unwrap_or(false)
                })
                .unwrap()
        })
        .collect();
    drop(ready_tx);
    let opened = ready.iter().take(CONNECTIONS).filter(|ok| *ok).count();
    let started = Instant::now();
    drop(go_tx);
    let served = threads.into_iter().filter_map(|t| t.join().ok()).filter(|ok| *ok).count();
    println!(
        "{CONNECTIONS} connections through HAProxy: {opened} streams open at once, {served} \
         sessions created in {:.0} ms",
        ms(started.elapsed())
    );
    summary::at_least(
        "HAProxy, 2 nodes: concurrent streams open",
        opened as f64,
        CONNECTIONS as f64,
        "",
    );
    summary::at_least(
        "HAProxy, 2 nodes: connections served",
        served as f64,
        CONNECTIONS as f64,
        "",
    );
}

fn main() {
    iac_code::child::init();
    let root = std::env::temp_dir().join(format!("iac-code-bench-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let cwd = root.join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let Some(server) = Redis::start(&root) else {
        println!("no redis-server: apt-get install redis-server");
        return;
    };
    let bin: PathBuf = builds::builds().last().map(|(_, bin)| bin.clone()).unwrap();
    let file_home = root.join("file");
    let file = FileStore::new(&file_home.join("config"));
    let file_env = [
        ("IAC_CODE_CONFIG_DIR", file_home.join("config").display().to_string()),
        ("IAC_CODE_LOG", "warn".to_string()),
    ];
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    if only.is_empty() || only.contains("store") {
        store("file", &file, &file_env, &bin, &cwd);
    }
    let url = server.url();
    let redis_store =
        RedisStore::new(&url, "iac:", "bench", Duration::from_secs(10), None).unwrap();
    let redis_env = [("IAC_CODE_SESSION_STORE", url), ("IAC_CODE_LOG", "warn".to_string())];
    if only.is_empty() || only.contains("store") {
        store("redis", &redis_store, &redis_env, &bin, &cwd);
    }
    drop(redis_store);
    server.command("FLUSHALL");
    let base = 18_700;
    let cluster = Cluster::start(&bin, &root, base);
    let cluster_redis = format!("redis://127.0.0.1:{}/0", base + 50);
    failover(&cluster, &cluster_redis, &cwd);
    concurrent(&cluster, &cwd);
    drop(cluster);
    let _ = std::fs::remove_dir_all(&root);
    summary::print("store");
}
