//! Sessions in a real Redis, shared by several nodes: the journal, metadata and listings
//! live there (no session file on the node), another node lists and replays them, a
//! session is driven by one node at a time (a lease), a dead node's sessions free when its
//! lease expires, a paused node that lost its lease can never write again, and a store that
//! is down fails requests cleanly. Skipped, saying why, when redis-server is not installed.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, agent_text};
use crate::support::command::{code_and_texts, run_with_input};
use crate::support::fake_llm::{FakeLlm, text_reply};
use crate::support::redis::Redis;
use crate::support::workspace::Workspace;

/// A node on `redis` named `name`, with a short lease.
fn node(ws: &Workspace, llm: &FakeLlm, redis: &Redis, name: &str) -> AcpProcess {
    let url = redis.url();
    let env = [
        ("IAC_CODE_SESSION_STORE", url.as_str()),
        ("IAC_CODE_NODE_ID", name),
        ("IAC_CODE_LEASE_TTL", "2"),
        ("IAC_CODE_REDIS_PREFIX", "iac:"),
    ];
    let mut acp = AcpProcess::spawn_with_llm(ws, llm, &env);
    acp.initialize();
    acp
}

fn open(acp: &mut AcpProcess, method: &str, session: &str, ws: &Workspace) -> Value {
    let params = json!({"sessionId": session, "cwd": ws.project(), "mcpServers": []});
    let id = acp.request(method, params);
    let (_, response) = acp.until_response(&id);
    if response.get("result").is_some() {
        acp.expect_commands(session);
    }
    response
}

/// Loads `session` on `acp`, retrying while it is held elsewhere (a lease that has not
/// expired yet), for at most 10 s.
fn load_when_free(acp: &mut AcpProcess, session: &str, ws: &Workspace) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let response = open(acp, "session/load", session, ws);
        let busy = response.pointer("/error/code") == Some(&json!(-32001));
        if !busy || Instant::now() > deadline {
            return response;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn signal(pid: u32, sig: &str) {
    let status = std::process::Command::new("kill").args([sig, &pid.to_string()]).status();
    assert!(status.is_ok_and(|s| s.success()), "kill {sig} {pid}");
}

#[test]
fn sessions_live_in_redis_and_another_node_replays_them() {
    let ws = Workspace::new("redis-share");
    let Some(redis) = Redis::start(ws.root()) else { return };
    let llm = FakeLlm::start(vec![text_reply("first answer"), text_reply("second answer")]);
    let mut a = node(&ws, &llm, &redis, "node-a");
    let session = a.new_session(&ws.project());
    let (_, response) = a.prompt(&session, "remember the bucket name acme-logs");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let forked = a
        .call("session/fork", json!({"sessionId": session, "cwd": ws.project(), "mcpServers": []}));
    let fork_id = forked["result"]["sessionId"].as_str().unwrap().to_owned();
    a.expect_commands(&fork_id);
    a.close_stdin();
    assert!(a.wait_exit(Duration::from_secs(10)).is_some());
    assert!(!ws.config().join("sessions").exists(), "no session file on the node");
    assert!(redis.keys(&format!("iac:s:{session}:*")) >= 2, "journal and metadata in Redis");

    let mut b = node(&ws, &llm, &redis, "node-b");
    let list = b.call("session/list", json!({"cwd": ws.project()}));
    let sessions = list["result"]["sessions"].as_array().unwrap().clone();
    assert_eq!(sessions.len(), 2, "{list}");
    assert!(sessions.iter().any(|s| s["title"] == "remember the bucket name acme-logs"));
    let params = json!({"sessionId": session, "cwd": ws.project(), "mcpServers": []});
    let id = b.request("session/load", params);
    let (replay, response) = b.until_response(&id);
    assert!(response.get("result").is_some(), "{response}");
    b.expect_commands(&session);
    assert!(agent_text(&replay).contains("first answer"), "the other node replays the history");
    let (_, response) = b.prompt(&session, "which bucket?");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let context = llm.requests()[1].body.to_string();
    assert!(
        context.contains("acme-logs") && context.contains("first answer"),
        "the next prompt sees the context"
    );

    b.call("session/delete", json!({"sessionId": fork_id}));
    let list = b.call("session/list", json!({}));
    assert_eq!(list["result"]["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(redis.keys(&format!("iac:s:{fork_id}:*")), 0, "a deleted session leaves no key");
}

#[test]
fn one_node_drives_a_session_and_a_dead_nodes_lease_expires() {
    let ws = Workspace::new("redis-lease");
    let Some(redis) = Redis::start(ws.root()) else { return };
    let llm = FakeLlm::start(vec![text_reply("from b"), text_reply("from c")]);
    let mut a = node(&ws, &llm, &redis, "node-a");
    let session = a.new_session(&ws.project());
    let mut b = node(&ws, &llm, &redis, "node-b");
    let refused = open(&mut b, "session/load", &session, &ws);
    assert_eq!(refused["error"]["code"], -32001, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("node-a"), "{refused}");
    // A process of this host that died is known dead: its lease is taken over at once.
    a.kill();
    let loaded = open(&mut b, "session/load", &session, &ws);
    assert!(loaded.get("result").is_some(), "{loaded}");
    let (_, response) = b.prompt(&session, "go on");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    b.call("session/close", json!({"sessionId": session}));
    // A node of another host cannot be looked at: its lease must expire (TTL 2 s).
    let ghost = format!("SET iac:s:{session}:lease ghost|elsewhere|1|99 PX 2000");
    assert!(redis.command(&ghost).is_some_and(|r| r.starts_with("+OK")));
    let mut c = node(&ws, &llm, &redis, "node-c");
    let refused = open(&mut c, "session/load", &session, &ws);
    assert!(refused["error"]["message"].as_str().unwrap().contains("node ghost"), "{refused}");
    let started = Instant::now();
    let loaded = load_when_free(&mut c, &session, &ws);
    assert!(loaded.get("result").is_some(), "free once the lease expires: {loaded}");
    assert!(started.elapsed() < Duration::from_secs(4), "within the TTL and a little");
    let (_, response) = c.prompt(&session, "and on");
    assert_eq!(response["result"]["stopReason"], "end_turn");
}

#[test]
fn a_paused_node_that_lost_its_lease_never_writes_again() {
    let ws = Workspace::new("redis-fence");
    let Some(redis) = Redis::start(ws.root()) else { return };
    let llm =
        FakeLlm::start(vec![text_reply("one"), text_reply("b's answer"), text_reply("never")]);
    let mut a = node(&ws, &llm, &redis, "node-a");
    let session = a.new_session(&ws.project());
    a.prompt(&session, "first");
    signal(a.pid(), "-STOP");
    let mut b = node(&ws, &llm, &redis, "node-b");
    let loaded = load_when_free(&mut b, &session, &ws);
    assert!(loaded.get("result").is_some(), "{loaded}");
    let (_, response) = b.prompt(&session, "b takes over");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let journal = format!("XLEN iac:s:{session}:j");
    let before = redis.command(&journal).unwrap();
    signal(a.pid(), "-CONT");
    // Either its heartbeat finds the lease gone first (the session is stopped: -32001,
    // "load it again") or its first record is refused by the fence (-32001 lease_lost,
    // then "load it again"); never a write, never an LLM call.
    let (_, response) = a.prompt(&session, "a writes again?");
    assert_eq!(response["error"]["code"], -32001, "{response}");
    let message = response["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("lease"), "{message}");
    if response["error"]["data"]["reason"] == "lease_lost" {
        let (_, response) = a.prompt(&session, "and now?");
        assert_eq!(response["error"]["code"], -32001, "{response}");
    } else {
        assert!(message.contains("load it again"), "{message}");
    }
    assert_eq!(redis.command(&journal).unwrap(), before, "nothing of a's reached the journal");
    let (_, response) = a.prompt(&session, "still?");
    assert_eq!(response["error"]["code"], -32602, "the session was let go: {response}");
    assert_eq!(llm.requests().len(), 2, "a never asked the LLM after losing the lease");
}

#[test]
fn a_store_that_is_down_fails_requests_naming_it() {
    let ws = Workspace::new("redis-down");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("redis://:secret@127.0.0.1:{port}/0");
    let llm = FakeLlm::start(vec![]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[("IAC_CODE_SESSION_STORE", &url)]);
    acp.initialize();
    let response = acp.call("session/new", json!({"cwd": ws.project(), "mcpServers": []}));
    assert_eq!(response["error"]["code"], -32603, "{response}");
    let message = response["error"]["message"].as_str().unwrap();
    assert!(message.contains(&format!("127.0.0.1:{port}")), "names the store: {message}");
    assert!(!message.contains("secret"), "never its password: {message}");
    assert_eq!(response["error"]["data"]["reason"], "store_unavailable");
}

fn sessions_cli(ws: &Workspace, store: &str, args: &[&str], input: &str) -> (i32, String, String) {
    let mut command = crate::support::command::iac_code(ws);
    command.arg("sessions").args(args);
    command.env("IAC_CODE_SESSION_STORE", store).env("IAC_CODE_REDIS_PREFIX", "iac:");
    code_and_texts(&run_with_input(&mut command, input))
}

#[test]
fn export_import_and_migrate_move_sessions_between_stores_without_loss() {
    let ws = Workspace::new("redis-move");
    let Some(redis) = Redis::start(ws.root()) else { return };
    let llm = FakeLlm::start(vec![text_reply("first answer"), text_reply("other answer")]);
    let mut local = AcpProcess::spawn_with_llm(&ws, &llm, &[("IAC_CODE_SESSION_STORE", "file")]);
    local.initialize();
    let one = local.new_session(&ws.project());
    local.prompt(&one, "the first session");
    let two = local.new_session(&ws.project());
    local.prompt(&two, "the second session");
    local.close_stdin();
    assert!(local.wait_exit(Duration::from_secs(10)).is_some());

    let (code, exported, err) = sessions_cli(&ws, "file", &["export", &one], "");
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = exported.lines().collect();
    assert!(lines[0].contains(r#""type":"meta""#) && lines.len() > 3, "{exported}");
    let url = redis.url();
    let (code, out, err) = sessions_cli(&ws, &url, &["import"], &exported);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(&format!("imported {one}")), "{out}");
    let (code, _, err) = sessions_cli(&ws, &url, &["import"], &exported);
    assert_eq!(code, 2, "an id that exists is refused: {err}");
    let (code, _, _) = sessions_cli(&ws, &url, &["import"], "not an export\n");
    assert_eq!(code, 2);

    let (code, out, err) = sessions_cli(&ws, "file", &["migrate", "--to", &url], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("copied 1 sessions") && out.contains("skipped 1"), "{out}");

    // What Redis keeps replays as the file store's did, record for record.
    for id in [&one, &two] {
        let (_, from_file, _) = sessions_cli(&ws, "file", &["export", id], "");
        let (_, from_redis, _) = sessions_cli(&ws, &url, &["export", id], "");
        let records = |text: &str| text.lines().skip(1).map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(records(&from_file), records(&from_redis), "session {id}");
    }
    let mut node = node(&ws, &llm, &redis, "node-a");
    let list = node.call("session/list", json!({}));
    assert_eq!(list["result"]["sessions"].as_array().unwrap().len(), 2, "{list}");
    let params = json!({"sessionId": two, "cwd": ws.project(), "mcpServers": []});
    let id = node.request("session/load", params);
    let (replay, response) = node.until_response(&id);
    assert!(response.get("result").is_some(), "{response}");
    assert!(agent_text(&replay).contains("other answer"));
}

#[test]
fn two_nodes_loading_one_session_at_once_one_wins() {
    let ws = Workspace::new("redis-race");
    let Some(redis) = Redis::start(ws.root()) else { return };
    let llm = FakeLlm::start(vec![]);
    let mut a = node(&ws, &llm, &redis, "node-a");
    let session = a.new_session(&ws.project());
    a.call("session/close", json!({"sessionId": session}));
    let mut b = node(&ws, &llm, &redis, "node-b");
    let mut c = node(&ws, &llm, &redis, "node-c");
    let params = json!({"sessionId": session, "cwd": ws.project(), "mcpServers": []});
    // Both requests are out before either answer is read.
    let (id_b, id_c) =
        (b.request("session/load", params.clone()), c.request("session/load", params));
    let (_, from_b) = b.until_response(&id_b);
    let (_, from_c) = c.until_response(&id_c);
    let won = [&from_b, &from_c].iter().filter(|r| r.get("result").is_some()).count();
    let refused = [&from_b, &from_c].iter().filter(|r| r["error"]["code"] == -32001).count();
    assert_eq!((won, refused), (1, 1), "{from_b}\n{from_c}");
}

#[test]
fn health_says_503_while_the_store_is_down() {
    let ws = Workspace::new("redis-health");
    let Some(redis) = Redis::start(ws.root()) else { return };
    let url = redis.url();
    let server = crate::support::http_client::HttpServer::spawn(
        &ws,
        None,
        &["--session-store", &url, "--node-id", "node-h"],
        &[],
    );
    let health = server.request("GET", "/health", &[], b"");
    assert_eq!(health.status, 200, "{health:?}");
    assert_eq!(health.json()["node"], "node-h");
    assert_eq!(health.json()["store"]["kind"], "redis");
    assert!(!String::from_utf8_lossy(&health.body).contains(&url), "no store address");
    drop(redis);
    // The answer is kept for a second: ask until it reflects the store's state.
    let deadline = Instant::now() + Duration::from_secs(10);
    let down = loop {
        let health = server.request("GET", "/health", &[], b"");
        if health.status == 503 || Instant::now() > deadline {
            break health;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(down.status, 503, "{down:?}");
    assert_eq!(down.json()["store"]["ok"], false);
}

#[test]
fn doctor_checks_the_store_it_is_given() {
    let ws = Workspace::new("redis-doctor");
    let Some(redis) = Redis::start(ws.root()) else { return };
    assert!(
        redis
            .command("CONFIG SET maxmemory-policy allkeys-lru")
            .is_some_and(|r| r.starts_with("+OK"))
    );
    let out = crate::support::command::iac_code(&ws)
        .arg("doctor")
        .env("IAC_CODE_SESSION_STORE", redis.url())
        .output()
        .expect("doctor");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("answers in"), "{text}");
    assert!(text.contains("AOF is off"), "persistence is checked: {text}");
    assert!(text.contains("maxmemory-policy allkeys-lru"), "eviction is checked: {text}");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = crate::support::command::iac_code(&ws)
        .arg("doctor")
        .env("IAC_CODE_SESSION_STORE", format!("redis://127.0.0.1:{port}/0"))
        .output()
        .expect("doctor");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("unreachable"));
}

#[test]
fn a_store_that_stops_mid_turn_fails_the_turn_and_loses_nothing_acknowledged() {
    let ws = Workspace::new("redis-midturn");
    let Some(redis) = Redis::start(ws.root()) else { return };
    let pid = redis.pid();
    // The model's tool call stops Redis itself: the call's result cannot be kept.
    let stop = json!({"command": format!("kill -STOP {pid}")});
    let llm = FakeLlm::start(vec![
        crate::support::fake_llm::tool_reply("t1", "bash", stop),
        text_reply("never reached"),
    ]);
    let url = redis.url();
    let env = [
        ("IAC_CODE_SESSION_STORE", url.as_str()),
        ("IAC_CODE_NODE_ID", "node-a"),
        // Long enough that the store error, not the lease, ends the turn.
        ("IAC_CODE_LEASE_TTL", "60"),
        ("IAC_CODE_REDIS_PREFIX", "iac:"),
    ];
    let mut a = AcpProcess::spawn_with_llm(&ws, &llm, &env);
    a.initialize();
    // Default mode, and the test answers yes: the command runs outside the sandbox (whose
    // own process namespace would not see the store's pid).
    let session = a.new_session(&ws.project());
    a.set_timeout(Duration::from_secs(60));
    let (_, response) = a.prompt(&session, "remember the subnet 10.1.0.0/16, then stop the store");
    signal(pid, "-CONT");
    assert_eq!(response["error"]["code"], -32603, "{response}");
    assert_eq!(response["error"]["data"]["reason"], "store_unavailable", "{response}");
    assert_eq!(llm.requests().len(), 1, "the turn went no further");
    // The session is let go on that node (its lease with it); another node replays what
    // was acknowledged before the store stopped.
    let (_, response) = a.prompt(&session, "again?");
    assert!(response.get("error").is_some(), "{response}");
    let mut b = node(&ws, &llm, &redis, "node-b");
    let params = json!({"sessionId": session, "cwd": ws.project(), "mcpServers": []});
    let id = b.request("session/load", params);
    let (replay, response) = b.until_response(&id);
    assert!(response.get("result").is_some(), "{response}");
    let user: Vec<&Value> = replay
        .iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "user_message_chunk")
        .collect();
    assert!(
        user.iter().any(|m| m.to_string().contains("10.1.0.0/16")),
        "the prompt acknowledged before the stop is there: {replay:?}"
    );
}
