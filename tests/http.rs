//! The HTTP+SSE transport over raw loopback HTTP: the seed's curl workflow, every status
//! code, auth, Host/Origin checks, permission over POST, isolation, lossless reconnection,
//! takeover, two stream scopes, expiry, hostile clients, and SIGTERM.

use std::io::Write;
use std::net::TcpStream;

use serde_json::{Value, json};

use crate::support::command::iac_code;
use crate::support::fake_llm::{Event as LlmEvent, FakeLlm, Reply, text_reply, tool_reply};
use crate::support::http_client::{Event, HttpServer, Sse};
use crate::support::workspace::Workspace;

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn is_response(id: i64) -> impl Fn(&Event) -> bool {
    move |e| e.data.get("id") == Some(&json!(id)) && e.data.get("method").is_none()
}

/// Creates a session over `conn`, whose response arrives on `sse`.
fn new_session(
    server: &HttpServer,
    conn: &str,
    sse: &Sse,
    cwd: &std::path::Path,
    id: i64,
) -> String {
    let response =
        server.post(Some(conn), &rpc(id, "session/new", json!({"cwd": cwd, "mcpServers": []})));
    assert_eq!(response.status, 202);
    assert!(response.body.is_empty());
    let events = sse.until(is_response(id));
    events.last().unwrap().data["result"]["sessionId"].as_str().unwrap().to_string()
}

#[test]
fn the_seed_curl_workflow_works() {
    let ws = Workspace::new("http-seed");
    let llm = FakeLlm::start(vec![text_reply("Hello from the agent")]);
    let server = HttpServer::spawn(&ws, Some(&llm), &[], &[]);
    let conn = server.initialize();
    let sse = server.stream(&conn, None, None);
    assert_eq!(sse.status, 200);
    let content_type =
        sse.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("content-type")).unwrap();
    assert!(content_type.1.starts_with("text/event-stream"));
    let session = new_session(&server, &conn, &sse, &ws.project(), 2);
    let prompt = rpc(
        3,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "Hello"}]}),
    );
    assert_eq!(server.post(Some(&conn), &prompt).status, 202);
    let events = sse.until(is_response(3));
    let text: String = events
        .iter()
        .filter(|e| e.data["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .map(|e| e.data["params"]["update"]["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Hello from the agent");
    assert_eq!(events.last().unwrap().data["result"]["stopReason"], "end_turn");
    let ids: Vec<u64> = events.iter().map(|e| e.id.unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "one sequence: {ids:?}");
    let delete = server.request("DELETE", "/acp", &[("Acp-Connection-Id", &conn)], b"");
    assert_eq!(delete.status, 200);
    assert!(sse.next().is_none() && sse.ended_cleanly(), "DELETE ends the stream cleanly");
    let after = server.post(Some(&conn), &rpc(4, "session/list", json!({})));
    assert_eq!((after.status, &after.json()["code"]), (400, &json!("unknown_connection")));
}

#[test]
fn every_status_code() {
    let ws = Workspace::new("http-status");
    let server = HttpServer::spawn(&ws, None, &["--max-body", "4096"], &[]);
    let conn = server.initialize();
    let list = rpc(1, "session/list", json!({}));
    // The status, and the code a client acts on (never the words, which may change).
    type Case<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>, Vec<u8>, (u16, &'a str));
    let cases: Vec<Case> = vec![
        ("POST", "/acp", vec![], list.to_string().into_bytes(), (400, "no_connection")),
        (
            "POST",
            "/acp",
            vec![("Acp-Connection-Id", "nope")],
            list.to_string().into_bytes(),
            (400, "unknown_connection"),
        ),
        (
            "POST",
            "/acp",
            vec![("Acp-Connection-Id", &conn)],
            b"{not json".to_vec(),
            (400, "invalid_json"),
        ),
        (
            "POST",
            "/acp",
            vec![("Acp-Connection-Id", &conn), ("Content-Type", "text/plain")],
            list.to_string().into_bytes(),
            (415, "unsupported_media_type"),
        ),
        ("POST", "/acp", vec![("Acp-Connection-Id", &conn)], vec![b'x'; 5000], (413, "too_large")),
        ("PUT", "/acp", vec![], vec![], (405, "method_not_allowed")),
        ("GET", "/nowhere", vec![], vec![], (404, "not_found")),
        (
            "GET",
            "/acp",
            vec![("Acp-Connection-Id", &conn), ("Accept", "text/html")],
            vec![],
            (406, "not_acceptable"),
        ),
        ("GET", "/acp", vec![], vec![], (400, "no_connection")),
        (
            "GET",
            "/acp",
            vec![("Acp-Connection-Id", &conn), ("Acp-Session-Id", "not an id")],
            vec![],
            (400, "invalid_session_id"),
        ),
        (
            "DELETE",
            "/acp",
            vec![("Acp-Connection-Id", "nope")],
            vec![],
            (400, "unknown_connection"),
        ),
        ("POST", "/health", vec![], vec![], (405, "method_not_allowed")),
    ];
    for (method, path, headers, body, (want, code)) in cases {
        let response = server.request(method, path, &headers, &body);
        assert_eq!(
            response.status,
            want,
            "{method} {path} {headers:?}: {:?}",
            String::from_utf8_lossy(&response.body)
        );
        let json = response.json();
        assert!(json["error"].is_string(), "a clear error body");
        assert_eq!(json["code"], code, "{method} {path} {headers:?}: {json}");
    }
    let put = server.request("PUT", "/acp", &[], b"");
    assert_eq!(put.header("allow"), Some("GET, POST, DELETE"));
    let health = server.request("GET", "/health", &[], b"");
    let body = health.json();
    assert_eq!((health.status, &body["status"]), (200, &json!("ok")), "{body}");
    let kind = if crate::support::command::store_under_test().is_some() { "redis" } else { "file" };
    assert_eq!((&body["store"]["kind"], &body["store"]["ok"]), (&json!(kind), &json!(true)));
    assert!(body["node"].as_str().is_some_and(|n| !n.is_empty()), "{body}");
    let mismatch = server.request(
        "POST",
        "/acp",
        &[("Acp-Connection-Id", &conn), ("Acp-Session-Id", "00000000-0000-4000-8000-000000000001")],
        rpc(2, "session/cancel", json!({"sessionId": "00000000-0000-4000-8000-000000000002"}))
            .to_string()
            .as_bytes(),
    );
    assert_eq!(mismatch.status, 400);
}

#[test]
fn token_guards_every_acp_route_but_not_health() {
    let ws = Workspace::new("http-auth");
    let server = HttpServer::spawn(&ws, None, &[], &[("IACCODE_ACP_HTTP_TOKEN", "s3cret")]);
    let init = rpc(0, "initialize", json!({"protocolVersion": 1}));
    for auth in [None, Some("Bearer wrong"), Some("s3cret"), Some("Bearer s3cre")] {
        let mut headers = vec![("Content-Type", "application/json")];
        if let Some(auth) = auth {
            headers.push(("Authorization", auth));
        }
        for method in ["POST", "GET", "DELETE"] {
            let response = server.request(method, "/acp", &headers, init.to_string().as_bytes());
            assert_eq!(response.status, 401, "{method} with {auth:?}");
            assert_eq!(response.header("www-authenticate"), Some("Bearer"));
        }
    }
    let ok = server.request(
        "POST",
        "/acp",
        &[("Authorization", "Bearer s3cret")],
        init.to_string().as_bytes(),
    );
    assert_eq!(ok.status, 200);
    assert_eq!(server.request("GET", "/health", &[], b"").status, 200);
    // A huge declared body is refused before auth and before reading it.
    // A huge declared body is refused on its head alone: without the token before
    // anything else, with it before a byte of the body is read.
    let huge = server.request("POST", "/acp", &[("Content-Length", "1099511627776")], b"");
    assert_eq!(huge.status, 401);
    let huge = server.request(
        "POST",
        "/acp",
        &[("Content-Length", "1099511627776"), ("Authorization", "Bearer s3cret")],
        b"",
    );
    assert_eq!(huge.status, 413);
}

#[test]
fn host_and_origin_are_checked_against_dns_rebinding() {
    let ws = Workspace::new("http-origin");
    let server = HttpServer::spawn(&ws, None, &["--allowed-origin", "https://editor.example"], &[]);
    for host in ["evil.example:8765", "[::1", "localhost.evil.example", ""] {
        let bad_host = server.request("GET", "/health", &[("Host", host)], b"");
        assert_eq!(bad_host.status, 403, "Host {host:?}");
    }
    for host in ["LocalHost:1", "[::1]:8765", "127.0.0.1"] {
        assert_eq!(server.request("GET", "/health", &[("Host", host)], b"").status, 200, "{host}");
    }
    // Another page on the loopback (another port) is another site: only the server's own
    // origin (its web page) and the named one pass.
    let own = format!("http://{}", server.addr);
    for (origin, want) in [
        ("http://evil.example", 403),
        ("null", 403),
        ("http://localhost:3000", 403),
        ("http://127.0.0.1", 403),
        (own.as_str(), 200),
        ("https://editor.example", 200),
    ] {
        let response = server.request("GET", "/health", &[("Origin", origin)], b"");
        assert_eq!(response.status, want, "{origin}");
    }
}

#[test]
fn a_remote_bind_needs_a_token_or_an_explicit_flag() {
    let ws = Workspace::new("http-remote");
    let output = iac_code(&ws)
        .args(["acp", "--transport", "http", "--host", "0.0.0.0", "--port", "0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("IACCODE_ACP_HTTP_TOKEN") && stderr.contains("--allow-insecure-remote"),
        "{stderr}"
    );
    let server =
        HttpServer::spawn(&ws, None, &["--host", "0.0.0.0", "--allow-insecure-remote"], &[]);
    assert!(server.addr.starts_with("0.0.0.0:"));
}

#[test]
fn permission_round_trip_over_post() {
    let ws = Workspace::new("http-permission");
    let llm = FakeLlm::start(vec![
        tool_reply("w1", "write_file", json!({"path": "main.tf", "content": "terraform {}\n"})),
        text_reply("written"),
    ]);
    let server = HttpServer::spawn(&ws, Some(&llm), &[], &[]);
    let conn = server.initialize();
    let sse = server.stream(&conn, None, None);
    let session = new_session(&server, &conn, &sse, &ws.project(), 1);
    let prompt = rpc(
        2,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "write"}]}),
    );
    server.post(Some(&conn), &prompt);
    let asked = sse.until(|e| e.data["method"] == "session/request_permission");
    let question = &asked.last().unwrap().data;
    let answer = json!({"jsonrpc": "2.0", "id": question["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}});
    assert_eq!(server.post(Some(&conn), &answer).status, 202);
    let events = sse.until(is_response(2));
    assert_eq!(events.last().unwrap().data["result"]["stopReason"], "end_turn");
    assert_eq!(ws.read("main.tf"), "terraform {}\n");
}

#[test]
fn two_clients_are_isolated() {
    let ws = Workspace::new("http-isolated");
    let server = HttpServer::spawn(&ws, None, &[], &[]);
    let (a, b) = (server.initialize(), server.initialize());
    let (sse_a, sse_b) = (server.stream(&a, None, None), server.stream(&b, None, None));
    let session = new_session(&server, &a, &sse_a, &ws.project(), 1);
    server.post(
        Some(&b),
        &rpc(7, "session/set_mode", json!({"sessionId": session, "modeId": "plan"})),
    );
    let error = sse_b.until(is_response(7));
    assert_eq!(error.last().unwrap().data["error"]["code"], -32602, "B cannot touch A's session");
    server.post(
        Some(&b),
        &rpc(
            8,
            "session/load",
            json!({"sessionId": session, "cwd": ws.project(), "mcpServers": []}),
        ),
    );
    let busy = sse_b.until(is_response(8));
    assert_eq!(busy.last().unwrap().data["error"]["code"], -32001, "nor load it");
    // B may open a stream under that session's id (a client does before its load), but
    // it carries only B's own frames: nothing of A's session.
    let stolen = server.stream(&b, Some(&session), None);
    assert_eq!(stolen.status, 200);
    server.post(
        Some(&a),
        &rpc(9, "session/set_mode", json!({"sessionId": session, "modeId": "plan"})),
    );
    sse_a.until(is_response(9));
    server.post(Some(&b), &rpc(11, "session/list", json!({})));
    sse_b.until(is_response(11));
    assert_eq!(stolen.waiting(), 0, "nothing of A's session reached B");
}

/// Opens connection + session streams, starts a streamed prompt of `chunks` pieces.
fn streaming_setup(name: &str, chunks: usize) -> (Workspace, FakeLlm, HttpServer, String, String) {
    let ws = Workspace::new(name);
    let mut events: Vec<LlmEvent> = (0..chunks).map(|i| LlmEvent::Text(format!("<{i}>"))).collect();
    events.extend([LlmEvent::Finish("stop"), LlmEvent::Done]);
    let llm = FakeLlm::start(vec![Reply::Stream(events)]);
    let server = HttpServer::spawn(&ws, Some(&llm), &[], &[]);
    let conn = server.initialize();
    let session = {
        let sse = server.stream(&conn, None, None);
        let session = new_session(&server, &conn, &sse, &ws.project(), 1);
        // The commands follow the response; read them here, or the next stream to take
        // over would rightly be handed them if this one had not been written to yet.
        sse.until(|e| e.data["params"]["update"]["sessionUpdate"] == "available_commands_update");
        session
    };
    (ws, llm, server, conn, session)
}

#[test]
fn reconnecting_with_last_event_id_loses_and_duplicates_nothing() {
    let (_ws, _llm, server, conn, session) = streaming_setup("http-resume", 400);
    let first = server.stream(&conn, None, None);
    server.post(
        Some(&conn),
        &rpc(
            2,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
        ),
    );
    let seen = first.until(|e| e.data["params"]["update"]["content"]["text"] == "<50>");
    let last = seen.last().unwrap().id.unwrap();
    first.disconnect();
    let second = server.stream(&conn, None, Some(last));
    let rest = second.until(is_response(2));
    let mut ids: Vec<u64> = seen.iter().chain(&rest).map(|e| e.id.unwrap()).collect();
    let len = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), len, "no duplicates");
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "no gaps: {ids:?}");
    let text: String = seen
        .iter()
        .chain(&rest)
        .filter_map(|e| e.data["params"]["update"]["content"]["text"].as_str())
        .collect();
    let expected: String = (0..400).map(|i| format!("<{i}>")).collect();
    assert_eq!(text, expected);
}

#[test]
fn a_hole_in_the_replay_buffer_is_an_event_with_its_code() {
    let ws = Workspace::new("http-gap");
    let mut events: Vec<LlmEvent> =
        (0..400).map(|i| LlmEvent::Text(format!("<{i}> {}", "x".repeat(300)))).collect();
    events.extend([LlmEvent::Finish("stop"), LlmEvent::Done]);
    let llm = FakeLlm::start(vec![Reply::Stream(events)]);
    let server = HttpServer::spawn(&ws, Some(&llm), &["--sse-buffer", "65536"], &[]);
    let conn = server.initialize();
    let first = server.stream(&conn, None, None);
    let session = new_session(&server, &conn, &first, &ws.project(), 1);
    server.post(
        Some(&conn),
        &rpc(
            2,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
        ),
    );
    // About 130 KB went by over a 64 KiB buffer: the earliest events are gone from it.
    let seen = first.until(is_response(2));
    first.disconnect();
    let earliest = seen.first().unwrap().id.unwrap();
    let again = server.stream(&conn, None, Some(earliest));
    let gap = again.next().expect("an event");
    assert_eq!(gap.event, "replay_gap", "{gap:?}");
    assert_eq!(gap.data["code"], "replay_gap", "{gap:?}");
    assert_eq!(gap.data["from"], earliest + 1, "{gap:?}");
    assert!(gap.id.is_none(), "not a numbered frame: {gap:?}");
}

#[test]
fn a_second_get_takes_over_and_never_splits_events() {
    let (_ws, _llm, server, conn, session) = streaming_setup("http-takeover", 50);
    let first = server.stream(&conn, None, None);
    let second = server.stream(&conn, None, None);
    assert!(first.next().is_none(), "the older stream was closed");
    server.post(
        Some(&conn),
        &rpc(
            2,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
        ),
    );
    let events = second.until(is_response(2));
    let chunks = events
        .iter()
        .filter(|e| e.data["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .count();
    assert_eq!(chunks, 50);
}

#[test]
fn connection_and_session_streams_see_each_message_once() {
    let (_ws, _llm, server, conn, session) = streaming_setup("http-scopes", 30);
    let conn_stream = server.stream(&conn, None, None);
    let session_stream = server.stream(&conn, Some(&session), None);
    assert_eq!(session_stream.status, 200);
    server.post(
        Some(&conn),
        &rpc(
            2,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
        ),
    );
    let on_session = session_stream.until(is_response(2));
    let updates: Vec<&str> = on_session
        .iter()
        .filter(|e| e.data["method"] == "session/update")
        .map(|e| e.data["params"]["update"]["sessionUpdate"].as_str().unwrap_or(""))
        .collect();
    let info = updates.iter().filter(|u| **u == "session_info_update").count();
    assert_eq!(updates.len() - info, 31, "30 chunks and usage: {updates:?}");
    assert_eq!(info, 2, "the title at the start, updatedAt at the end");
    server.post(Some(&conn), &rpc(3, "session/list", json!({})));
    let on_conn = conn_stream.until(is_response(3));
    assert_eq!(on_conn.len(), 1, "the connection stream got only the list answer: {on_conn:?}");
}

#[test]
fn idle_connections_expire() {
    let ws = Workspace::new("http-expiry");
    let server = HttpServer::spawn(&ws, None, &["--idle-timeout", "1"], &[]);
    let conn = server.initialize();
    server.wait_log(&format!("connection {conn} expired"));
    server.wait_log(&format!("connection {conn} closed"));
    assert_eq!(server.post(Some(&conn), &rpc(1, "session/list", json!({}))).status, 400);
}

#[test]
fn hostile_clients_do_not_stop_the_server() {
    let ws = Workspace::new("http-hostile");
    let server = HttpServer::spawn(&ws, None, &["--request-timeout", "2"], &[]);
    let healthy = || assert_eq!(server.request("GET", "/health", &[], b"").status, 200);
    // A head of 10 MiB.
    let mut big = TcpStream::connect(&server.addr).unwrap();
    let _ = big.write_all(b"GET /acp HTTP/1.1\r\nX-Junk: ");
    let junk = vec![b'a'; 10 << 20];
    let _ = big.write_all(&junk);
    healthy();
    drop(big);
    // 1,000 half-open connections.
    let idle: Vec<TcpStream> =
        (0..1000).map(|_| TcpStream::connect(&server.addr).unwrap()).collect();
    healthy();
    drop(idle);
    // A byte every 300 ms is cut at the request deadline.
    let mut slow = TcpStream::connect(&server.addr).unwrap();
    slow.set_read_timeout(Some(std::time::Duration::from_millis(300))).unwrap();
    let mut cut = false;
    for byte in
        b"POST /acp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}".iter().cycle().take(200)
    {
        if slow.write_all(&[*byte]).is_err() {
            cut = true;
            break;
        }
        let mut buf = [0u8; 64];
        if let Ok(n) = std::io::Read::read(&mut slow, &mut buf) {
            cut = n == 0 || String::from_utf8_lossy(&buf[..n]).contains("408");
            if cut {
                break;
            }
        }
    }
    assert!(cut, "the slow client was cut");
    healthy();
    // A declared 1 TiB body.
    let huge = server.request("POST", "/acp", &[("Content-Length", "1099511627776")], b"");
    assert_eq!(huge.status, 413);
    healthy();
    let conn = server.initialize();
    assert!(!conn.is_empty());
}

#[test]
fn a_client_that_never_reads_is_cut_off() {
    let ws = Workspace::new("http-never-reads");
    let mut events: Vec<LlmEvent> =
        (0..40_000).map(|i| LlmEvent::Text(format!("{i:>200}"))).collect();
    events.extend([LlmEvent::Finish("stop"), LlmEvent::Done]);
    let llm = FakeLlm::start(vec![Reply::Stream(events)]);
    let server = HttpServer::spawn(&ws, Some(&llm), &["--sse-buffer", "65536"], &[]);
    let conn = server.initialize();
    let session = {
        let sse = server.stream(&conn, None, None);
        new_session(&server, &conn, &sse, &ws.project(), 1)
    };
    // A raw GET that is never read.
    let mut sink = TcpStream::connect(&server.addr).unwrap();
    let get =
        format!("GET /acp HTTP/1.1\r\nHost: {}\r\nAcp-Connection-Id: {conn}\r\n\r\n", server.addr);
    sink.write_all(get.as_bytes()).unwrap();
    // Read the response head only: the stream is open, and its body is never read.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        std::io::Read::read_exact(&mut sink, &mut byte).unwrap();
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&head));
    server.post(
        Some(&conn),
        &rpc(
            2,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
        ),
    );
    server.wait_log(&format!("connection {conn}: a stream stopped reading"));
    server.wait_log(&format!("connection {conn}: event buffer overflow"));
    server.wait_log(&format!("connection {conn} closed"));
    assert_eq!(server.request("GET", "/health", &[], b"").status, 200);
    assert_eq!(server.post(Some(&conn), &rpc(3, "session/list", json!({}))).status, 400);
    drop(sink);
}

#[test]
fn sigterm_cancels_prompts_ends_streams_and_exits_zero() {
    let ws = Workspace::new("http-sigterm");
    let llm = FakeLlm::start(vec![Reply::Hang(vec![LlmEvent::Text("working".into())])]);
    let mut server = HttpServer::spawn(&ws, Some(&llm), &[], &[]);
    let conn = server.initialize();
    let sse = server.stream(&conn, None, None);
    let session = new_session(&server, &conn, &sse, &ws.project(), 1);
    server.post(
        Some(&conn),
        &rpc(
            2,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
        ),
    );
    sse.until(|e| e.data["params"]["update"]["sessionUpdate"] == "agent_message_chunk");
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let rest = sse.until(is_response(2));
    assert_eq!(rest.last().unwrap().data["result"]["stopReason"], "cancelled");
    assert!(sse.next().is_none() && sse.ended_cleanly(), "the stream ends cleanly");
    assert!(server.wait_exit().success());
}

#[test]
fn acp_connections_are_capped() {
    let ws = Workspace::new("http-cap");
    let server = HttpServer::spawn(&ws, None, &["--max-connections", "2"], &[]);
    server.initialize();
    server.initialize();
    let third = server.post(None, &rpc(0, "initialize", json!({"protocolVersion": 1})));
    assert_eq!(third.status, 503);
    assert!(third.json()["error"].as_str().unwrap().contains("too many"));
    assert_eq!(third.json()["code"], "unavailable");
}

#[test]
fn a_new_get_without_last_event_id_repeats_nothing_already_delivered() {
    let ws = Workspace::new("http-no-repeat");
    let server = HttpServer::spawn(&ws, None, &[], &[]);
    let conn = server.initialize();
    let first = server.stream(&conn, None, None);
    new_session(&server, &conn, &first, &ws.project(), 1);
    let delivered =
        first.until(|e| e.data["params"]["update"]["sessionUpdate"] == "available_commands_update");
    let last = delivered.last().unwrap().id.unwrap();
    // A second stream that writes nothing and goes away, then a third.
    let second = server.stream(&conn, None, None);
    assert!(first.next().is_none(), "taken over");
    second.disconnect();
    let third = server.stream(&conn, None, None);
    server.post(Some(&conn), &rpc(3, "session/list", json!({})));
    let events = third.until(is_response(3));
    assert_eq!(events.len(), 1, "nothing delivered before is repeated: {events:?}");
    assert_eq!(events[0].id, Some(last + 1));
}

#[test]
fn a_session_stream_that_closes_hands_its_events_back_to_the_connection_stream() {
    let (_ws, llm, server, conn, session) = streaming_setup("http-scope-handback", 5);
    llm.push(text_reply("second turn"));
    let conn_stream = server.stream(&conn, None, None);
    {
        let session_stream = server.stream(&conn, Some(&session), None);
        server.post(
            Some(&conn),
            &rpc(
                2,
                "session/prompt",
                json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
            ),
        );
        session_stream.until(is_response(2));
        session_stream.disconnect();
    }
    server.wait_log(&format!("of Session(\"{session}\") ended"));
    // Once the server noticed the closed session stream, the session's events reach the
    // connection stream.
    server.post(
        Some(&conn),
        &rpc(
            3,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "again"}]}),
        ),
    );
    let events = conn_stream.until(is_response(3));
    assert_eq!(events.last().unwrap().data["result"]["stopReason"], "end_turn");
}

#[test]
fn a_session_stream_opened_before_load_gets_the_replay_and_the_answer() {
    let ws = Workspace::new("http-load-stream");
    let llm = FakeLlm::start(vec![text_reply("remembered")]);
    let server = HttpServer::spawn(&ws, Some(&llm), &[], &[]);
    let a = server.initialize();
    let sse_a = server.stream(&a, None, None);
    let session = new_session(&server, &a, &sse_a, &ws.project(), 1);
    server.post(
        Some(&a),
        &rpc(
            2,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "remember this"}]}),
        ),
    );
    sse_a.until(is_response(2));
    assert_eq!(server.request("DELETE", "/acp", &[("Acp-Connection-Id", &a)], b"").status, 200);

    // As the SDK clients do: the session stream first, then session/load.
    let b = server.initialize();
    let conn_stream = server.stream(&b, None, None);
    let session_stream = server.stream(&b, Some(&session), None);
    assert_eq!(session_stream.status, 200);
    let load = rpc(
        3,
        "session/load",
        json!({"sessionId": session, "cwd": ws.project(), "mcpServers": []}),
    );
    assert_eq!(server.post(Some(&b), &load).status, 202);
    let events = session_stream.until(is_response(3));
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| e.data["params"]["update"]["sessionUpdate"].as_str())
        .collect();
    assert_eq!(kinds, ["user_message_chunk", "agent_message_chunk"], "the replay, then the answer");
    assert!(events.last().unwrap().data["result"].is_object());
    let commands = session_stream.next().unwrap();
    assert_eq!(commands.data["params"]["update"]["sessionUpdate"], "available_commands_update");
    server.post(Some(&b), &rpc(4, "session/list", json!({})));
    assert_eq!(
        conn_stream.until(is_response(4)).len(),
        1,
        "nothing of the session leaked to the connection stream"
    );
}
