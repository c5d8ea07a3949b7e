//! The WebSocket profile of `/acp`: the handshake, one ACP connection per socket (a
//! streamed prompt, a permission, cancel), the same checks as every request (token, Origin),
//! close codes (1000, 1001, 1003, 1009), ping, an abrupt close mid-prompt, and 500 sockets
//! at once.

use std::net::Shutdown;
use std::time::Duration;

use serde_json::{Value, json};
use tungstenite::Message;
use tungstenite::protocol::CloseFrame;
use tungstenite::protocol::frame::coding::CloseCode;

use crate::support::fake_llm::{Event as LlmEvent, FakeLlm, Reply, text_reply, tool_reply};
use crate::support::http_client::HttpServer;
use crate::support::workspace::Workspace;
use crate::support::ws_client::{ACCEPT, WsClient, connect};

fn update(message: &Value) -> &str {
    message["params"]["update"]["sessionUpdate"].as_str().unwrap_or("")
}

fn new_session(client: &mut WsClient, cwd: &std::path::Path, id: i64) -> String {
    let answer = client.call(id, "session/new", json!({"cwd": cwd, "mcpServers": []}));
    answer.last().unwrap()["result"]["sessionId"].as_str().unwrap().to_string()
}

fn prompt(client: &mut WsClient, session: &str, id: i64, text: &str) {
    client.request(
        id,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
    );
}

#[test]
fn a_websocket_is_one_acp_connection() {
    let ws = Workspace::new("ws-conversation");
    let llm = FakeLlm::start(vec![
        text_reply("Hello over a socket"),
        tool_reply("w1", "write_file", json!({"path": "main.tf", "content": "terraform {}\n"})),
        text_reply("written"),
        Reply::Hang(vec![LlmEvent::Text("thinking".into())]),
    ]);
    let server = HttpServer::spawn(&ws, Some(&llm), &[], &[]);
    let mut client = connect(&server.addr, &[]).expect("101");
    assert_eq!(client.header("sec-websocket-accept"), Some(ACCEPT), "RFC 6455's sample key");
    let conn = client.header("acp-connection-id").expect("Acp-Connection-Id").to_string();
    assert!(uuid_like(&conn), "{conn}");
    assert!(client.header("sec-websocket-protocol").is_none());
    assert!(client.header("sec-websocket-extensions").is_none());
    assert_eq!(client.initialize()["protocolVersion"], 1);
    // The connection is a socket: it takes no POST and has no event stream.
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}});
    assert_eq!(server.post(Some(&conn), &list).status, 400);
    assert_eq!(server.stream(&conn, None, None).status, 400);

    let session = new_session(&mut client, &ws.project(), 2);
    let commands = client.next();
    assert_eq!(update(&commands), "available_commands_update", "after the answer");
    prompt(&mut client, &session, 3, "hello");
    let events = client.until(|m| m["id"] == 3);
    let text: String = events
        .iter()
        .filter(|m| update(m) == "agent_message_chunk")
        .filter_map(|m| m["params"]["update"]["content"]["text"].as_str())
        .collect();
    assert_eq!(text, "Hello over a socket");
    assert_eq!(events.last().unwrap()["result"]["stopReason"], "end_turn");

    prompt(&mut client, &session, 4, "write it");
    let asked = client.until(|m| m["method"] == "session/request_permission");
    let question = asked.last().unwrap();
    let selected = json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}});
    client.send(&json!({"jsonrpc": "2.0", "id": question["id"], "result": selected}));
    let events = client.until(|m| m["id"] == 4);
    assert_eq!(events.last().unwrap()["result"]["stopReason"], "end_turn");
    assert_eq!(ws.read("main.tf"), "terraform {}\n");

    assert_eq!(&client.ping(b"are you there")[..], b"are you there");

    prompt(&mut client, &session, 5, "think");
    client.until(|m| m["params"]["update"]["content"]["text"] == "thinking");
    client.send(
        &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
    );
    let events = client.until(|m| m["id"] == 5);
    assert_eq!(events.last().unwrap()["result"]["stopReason"], "cancelled");
    assert!(llm.wait_hang_dropped(Duration::from_secs(20)), "the LLM request was dropped");

    let bye = CloseFrame { code: CloseCode::Normal, reason: "bye".into() };
    client.socket.close(Some(bye)).expect("close");
    assert_eq!(client.close_code().0, 1000, "the server answers a close with a close");
    server.wait_log(&format!("connection {conn} closed"));
}

fn uuid_like(id: &str) -> bool {
    id.len() == 36 && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

#[test]
fn the_upgrade_is_judged_like_any_request() {
    let ws = Workspace::new("ws-judged");
    let token = "s3cret-token-for-ws";
    let server = HttpServer::spawn(&ws, None, &[], &[("IACCODE_ACP_HTTP_TOKEN", token)]);
    let refused = connect(&server.addr, &[]).err().expect("no upgrade without the token");
    assert_eq!(refused.status, 401);
    assert_eq!(refused.header("www-authenticate"), Some("Bearer"));
    let bearer = format!("Bearer {token}");
    let wrong = connect(&server.addr, &[("Authorization", "Bearer nope")]).err().expect("401");
    assert_eq!(wrong.status, 401);
    let origin = [("Authorization", bearer.as_str()), ("Origin", "https://evil.example")];
    assert_eq!(connect(&server.addr, &origin).err().expect("403").status, 403);
    let mut client = connect(&server.addr, &[("Authorization", &bearer)]).expect("101");
    assert_eq!(client.initialize()["protocolVersion"], 1);
    // A bad handshake is a clear error, not an upgrade.
    let old = server.request(
        "GET",
        "/acp",
        &[
            ("Authorization", &bearer),
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ("Sec-WebSocket-Version", "8"),
        ],
        b"",
    );
    assert_eq!((old.status, old.header("sec-websocket-version")), (426, Some("13")));
    assert!(old.json()["error"].is_string());
    let keyless = server.request(
        "GET",
        "/acp",
        &[
            ("Authorization", &bearer),
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade"),
            ("Sec-WebSocket-Version", "13"),
        ],
        b"",
    );
    assert_eq!(keyless.status, 400);
    assert!(keyless.json()["error"].as_str().unwrap().contains("Sec-WebSocket-Key"));
}

#[test]
fn bad_frames_get_their_close_codes_and_the_server_keeps_serving() {
    let ws = Workspace::new("ws-limits");
    let server = HttpServer::spawn(&ws, None, &["--max-body", "4096"], &[]);
    let mut client = connect(&server.addr, &[]).expect("101");
    client.initialize();
    // Not JSON: a JSON-RPC parse error, and the socket goes on.
    client.socket.send(Message::text("{not json")).expect("send");
    assert_eq!(client.next()["error"]["code"], -32700);
    let answer = client.call(1, "session/list", json!({}));
    assert!(answer.last().unwrap()["result"]["sessions"].is_array());
    // Over --max-body: 1009.
    let big = json!({"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {"x": "y".repeat(5000)}});
    client.socket.send(Message::text(big.to_string())).expect("send");
    assert_eq!(client.close_code().0, 1009);
    // A binary frame: 1003.
    let mut binary = connect(&server.addr, &[]).expect("101");
    binary.socket.send(Message::binary(b"{}".to_vec())).expect("send");
    assert_eq!(binary.close_code().0, 1003);
    // The server still serves.
    let mut next = connect(&server.addr, &[]).expect("101");
    assert_eq!(next.initialize()["protocolVersion"], 1);
    let answer = next.call(1, "session/list", json!({}));
    assert!(answer.last().unwrap()["result"]["sessions"].is_array());
}

#[test]
fn an_abrupt_close_mid_prompt_cleans_up_like_a_dropped_connection() {
    let ws = Workspace::new("ws-abrupt");
    let llm = FakeLlm::start(vec![Reply::Hang(vec![LlmEvent::Text("half an answer".into())])]);
    let server = HttpServer::spawn(&ws, Some(&llm), &[], &[]);
    let mut first = connect(&server.addr, &[]).expect("101");
    let conn = first.header("acp-connection-id").unwrap().to_string();
    first.initialize();
    let session = new_session(&mut first, &ws.project(), 1);
    prompt(&mut first, &session, 2, "go");
    first.until(|m| m["params"]["update"]["content"]["text"] == "half an answer");
    // The TCP connection goes away with no close frame.
    first.socket.get_ref().shutdown(Shutdown::Both).expect("shutdown");
    drop(first);
    assert!(llm.wait_hang_dropped(Duration::from_secs(20)), "the prompt was cancelled");
    server.wait_log(&format!("connection {conn} closed"));
    // The session was freed: another socket loads it.
    let mut second = connect(&server.addr, &[]).expect("101");
    second.initialize();
    let load = json!({"sessionId": session, "cwd": ws.project(), "mcpServers": []});
    let events = second.call(3, "session/load", load);
    assert!(events.last().unwrap()["result"].is_object(), "{:?}", events.last());
    assert!(events.iter().any(|m| update(m) == "user_message_chunk"), "the replay");
}

#[test]
fn sigterm_closes_sockets_with_going_away() {
    let ws = Workspace::new("ws-sigterm");
    let mut server = HttpServer::spawn(&ws, None, &[], &[]);
    let mut client = connect(&server.addr, &[]).expect("101");
    client.initialize();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    assert_eq!(client.close_code().0, 1001);
    assert!(server.wait_exit().success());
}

/// Raises this process's soft limit on open files (its sockets) when it is low, with
/// util-linux's `prlimit`, which needs no unsafe code here.
fn enough_descriptors(wanted: u64) {
    let limits = std::fs::read_to_string("/proc/self/limits").expect("limits");
    let line = limits.lines().find(|l| l.starts_with("Max open files")).expect("open files");
    let numbers: Vec<u64> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    let (soft, hard) = (numbers[0], numbers[1]);
    if soft >= wanted {
        return;
    }
    assert!(hard >= wanted, "the hard limit on open files ({hard}) is below {wanted}");
    let pid = std::process::id().to_string();
    let status = std::process::Command::new("prlimit")
        .args(["--pid", &pid, &format!("--nofile={hard}:{hard}")])
        .status()
        .expect("prlimit");
    assert!(status.success());
}

#[test]
fn five_hundred_websockets_at_once() {
    const N: usize = 500;
    enough_descriptors(2 * N as u64 + 256);
    let ws = Workspace::new("ws-many");
    let server = HttpServer::spawn(&ws, None, &[], &[]);
    let mut clients: Vec<WsClient> =
        (0..N).map(|_| connect(&server.addr, &[]).expect("101")).collect();
    let mut ids: Vec<String> =
        clients.iter().map(|c| c.header("acp-connection-id").unwrap().to_string()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), N, "one ACP connection per socket");
    let init = json!({"protocolVersion": 1, "clientCapabilities": {}});
    for client in &mut clients {
        client.request(0, "initialize", init.clone());
        client.request(1, "session/list", json!({}));
    }
    for client in &mut clients {
        let answers = client.until(|m| m["id"] == 1);
        assert_eq!(answers[0]["result"]["protocolVersion"], 1);
        assert!(answers.last().unwrap()["result"]["sessions"].is_array());
    }
}
