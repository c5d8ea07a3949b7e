//! Checks of the fake MCP servers themselves, driven by hand-written clients: the pure
//! pieces of the script, a Streamable HTTP exchange (plain JSON and SSE answers, sessions,
//! a cancelled hang), a legacy HTTP+SSE exchange, and the stdio server as the re-executed
//! test binary.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use super::script::{big_text, list_page};
use super::*;
use crate::support::workspace::Workspace;

const WAIT: Duration = Duration::from_secs(10);

fn tools() -> Vec<FakeTool> {
    vec![
        FakeTool::new("echo", Behaviour::Echo),
        FakeTool::new("progress", Behaviour::Progress(2)),
        FakeTool::new("hang", Behaviour::Hang),
        FakeTool::new("roots", Behaviour::AskRoots),
        FakeTool::new("crash", Behaviour::Crash),
        FakeTool::new("change", Behaviour::ChangeList),
    ]
}

#[test]
fn big_texts_have_the_size_asked_with_head_and_tail() {
    for n in [0, 5, 17, 18, 60, 1000, 100_000] {
        let text = big_text(n);
        assert_eq!(text.len(), n, "{text:?}");
        if n >= 17 {
            assert!(text.starts_with("BIG-HEAD\n") && text.ends_with("\nBIG-TAIL"), "{text:?}");
        }
    }
}

#[test]
fn tool_lists_page_with_opaque_cursors() {
    let tools = tools();
    let first = list_page(&tools, Some(4), &json!({})).unwrap();
    assert_eq!(first["tools"].as_array().unwrap().len(), 4);
    assert_eq!(first["tools"][0]["inputSchema"]["type"], "object");
    let next = list_page(&tools, Some(4), &json!({"cursor": first["nextCursor"]})).unwrap();
    assert_eq!(next["tools"][1]["name"], "change");
    assert!(next.get("nextCursor").is_none());
    assert!(list_page(&tools, Some(4), &json!({"cursor": "bogus"})).is_err());
    assert!(list_page(&tools, None, &json!({})).unwrap().get("nextCursor").is_none());
}

/// A response read by hand: status, headers (lowercased) and body (Content-Length,
/// chunked, or up to the close).
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }

    /// The JSON data of each SSE event in the body.
    fn events(&self) -> Vec<Value> {
        self.body
            .split("\n\n")
            .filter_map(|event| event.lines().find_map(|l| l.strip_prefix("data: ")))
            .map(|data| serde_json::from_str(data).unwrap())
            .collect()
    }
}

fn read_head(reader: &mut impl BufRead) -> (u16, Vec<(String, String)>) {
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let status = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let Some((name, value)) = line.trim_end().split_once(':') else { break };
        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
    }
    (status, headers)
}

/// Reads one chunk's data; `None` at the last chunk.
fn read_chunk(reader: &mut impl BufRead) -> Option<String> {
    let mut size = String::new();
    reader.read_line(&mut size).unwrap();
    let size = usize::from_str_radix(size.trim(), 16).unwrap();
    let mut data = vec![0u8; size + 2];
    reader.read_exact(&mut data).unwrap();
    data.truncate(size);
    (size > 0).then(|| String::from_utf8(data).unwrap())
}

fn read_answer(reader: &mut impl BufRead) -> Answer {
    let (status, headers) = read_head(reader);
    let mut answer = Answer { status, headers, body: String::new() };
    if answer.header("transfer-encoding") == Some("chunked") {
        while let Some(chunk) = read_chunk(reader) {
            answer.body.push_str(&chunk);
        }
    } else {
        let len = answer.header("content-length").map_or(0, |v| v.parse().unwrap());
        let mut body = vec![0u8; len];
        reader.read_exact(&mut body).unwrap();
        answer.body = String::from_utf8(body).unwrap();
    }
    answer
}

fn send(stream: &mut TcpStream, method: &str, target: &str, headers: &[(&str, &str)], body: &str) {
    let mut request = format!("{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).unwrap();
}

/// One POST on a fresh connection.
fn post(server: &HttpMcp, target: &str, session: Option<&str>, message: &Value) -> Answer {
    let mut stream = TcpStream::connect(server.url.split('/').nth(2).unwrap()).unwrap();
    let mut headers = vec![("Authorization", "Bearer test-token")];
    headers.extend(session.map(|s| ("Mcp-Session-Id", s)));
    send(&mut stream, "POST", target, &headers, &message.to_string());
    read_answer(&mut BufReader::new(stream))
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments, "_meta": {"progressToken": "tok"}}})
}

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    }})
}

#[test]
fn streamable_http_answers_in_json_with_a_session() {
    let server = HttpMcp::start(Script::with_tools(tools()), HttpKind::Streamable);
    let init = post(&server, "/mcp", None, &initialize(1));
    assert_eq!(init.status, 200);
    assert_eq!(init.json()["result"]["protocolVersion"], "2025-03-26");
    assert_eq!(init.json()["result"]["capabilities"]["tools"]["listChanged"], true);
    let session = init.header("mcp-session-id").unwrap().to_owned();

    assert_eq!(post(&server, "/mcp", None, &call(2, "echo", json!({}))).status, 400);
    assert_eq!(post(&server, "/mcp", Some("nope"), &call(2, "echo", json!({}))).status, 404);
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(&server, "/mcp", Some(&session), &note).status, 202);
    let echoed = post(&server, "/mcp", Some(&session), &call(3, "echo", json!({"text": "hi"})));
    assert_eq!(echoed.json()["result"]["content"][0]["text"], "hi");
    let changed = post(&server, "/mcp", Some(&session), &call(4, "change", json!({})));
    assert_eq!(changed.json()["result"]["content"][0]["text"], "changed");
    let list = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"});
    let listed = post(&server, "/mcp", Some(&session), &list);
    assert_eq!(listed.json()["result"]["tools"], json!([]), "after the change: no tools");

    let mut stream = TcpStream::connect(server.url.split('/').nth(2).unwrap()).unwrap();
    send(&mut stream, "GET", "/mcp", &[("Mcp-Session-Id", &session)], "");
    assert_eq!(read_answer(&mut BufReader::new(&stream)).status, 405);
    send(&mut stream, "DELETE", "/mcp", &[("Mcp-Session-Id", &session)], "");
    assert_eq!(read_answer(&mut BufReader::new(&stream)).status, 200);
    assert_eq!(server.deleted(), 1);
    assert_eq!(post(&server, "/mcp", Some(&session), &list).status, 404);

    assert!(server.wait_for(has_method("notifications/initialized"), WAIT).is_some());
    assert!(
        server
            .headers_seen()
            .iter()
            .flatten()
            .any(|(n, v)| n == "authorization" && v == "Bearer test-token")
    );
}

#[test]
fn streamable_http_streams_a_call_and_holds_a_hang_until_cancelled() {
    let script = Script { sse_responses: true, ..Script::with_tools(tools()) };
    let server = HttpMcp::start(script, HttpKind::Streamable);
    let session =
        post(&server, "/mcp", None, &initialize(1)).header("mcp-session-id").unwrap().to_owned();
    let streamed = post(&server, "/mcp", Some(&session), &call(2, "progress", json!({})));
    assert_eq!(streamed.header("content-type"), Some("text/event-stream"));
    let events = streamed.events();
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(events[0]["params"]["progressToken"], "tok");
    assert_eq!(events[1]["params"]["message"], "step 2");
    assert_eq!(events[2]["result"]["content"][0]["text"], "done");

    let mut hung = TcpStream::connect(server.url.split('/').nth(2).unwrap()).unwrap();
    let headers = [("Mcp-Session-Id", session.as_str())];
    send(&mut hung, "POST", "/mcp", &headers, &call(3, "hang", json!({})).to_string());
    let mut reader = BufReader::new(hung);
    let (status, _) = read_head(&mut reader);
    assert_eq!(status, 200, "an SSE answer opens at once");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 3, "reason": "user"}});
    assert_eq!(post(&server, "/mcp", Some(&session), &cancel).status, 202);
    let mut rest = String::new();
    let _ = reader.read_to_string(&mut rest);
    assert_eq!(rest, "", "closed without an answer");
    assert!(server.wait_hangs_ended(1, WAIT));
}

#[test]
fn streamable_http_talks_outside_calls_on_the_standing_stream() {
    let script = Script { get_stream: true, ..Script::with_tools(tools()) };
    let server = HttpMcp::start(script, HttpKind::Streamable);
    let (_, events) = standing_stream(&server);
    assert_eq!(server.change_tools(), 1);
    let notice: Value = serde_json::from_str(&events.recv_timeout(WAIT).unwrap().1).unwrap();
    assert_eq!(notice["method"], "notifications/tools/list_changed");

    // A call answered in plain JSON sends its request to the client on the standing stream.
    let roots = FakeTool::new("roots", Behaviour::AskRoots);
    let script = Script { get_stream: true, ..Script::with_tools(vec![roots]) };
    let server = HttpMcp::start(script, HttpKind::Streamable);
    let (session, events) = standing_stream(&server);
    let (url, session2) = (server.url.clone(), session.clone());
    let caller = thread::spawn(move || {
        let mut stream = TcpStream::connect(url.split('/').nth(2).unwrap()).unwrap();
        let body = call(2, "roots", json!({})).to_string();
        send(&mut stream, "POST", "/mcp", &[("Mcp-Session-Id", session2.as_str())], &body);
        read_answer(&mut BufReader::new(stream)).json()
    });
    let request: Value = serde_json::from_str(&events.recv_timeout(WAIT).unwrap().1).unwrap();
    assert_eq!(request["method"], "roots/list");
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": []}});
    assert_eq!(post(&server, "/mcp", Some(&session), &answer).status, 202);
    let result = caller.join().unwrap();
    assert_eq!(result["result"]["content"][0]["text"], r#"{"roots":[]}"#);
}

/// Initializes an MCP session and opens its standing GET stream: the session id and the
/// stream's events.
fn standing_stream(server: &HttpMcp) -> (String, Receiver<(String, String)>) {
    let init = post(server, "/mcp", None, &initialize(1));
    let session = init.header("mcp-session-id").unwrap().to_owned();
    let mut stream = TcpStream::connect(server.url.split('/').nth(2).unwrap()).unwrap();
    let headers = [("Accept", "text/event-stream"), ("Mcp-Session-Id", session.as_str())];
    send(&mut stream, "GET", "/mcp", &headers, "");
    let mut reader = BufReader::new(stream);
    assert_eq!(read_head(&mut reader).0, 200);
    let events = sse_events(reader);
    assert!(server.wait_streams(1, WAIT));
    (session, events)
}

/// Reads SSE events from a chunked stream on a thread: (event name, data).
fn sse_events(mut reader: BufReader<TcpStream>) -> Receiver<(String, String)> {
    let (tx, rx) = channel();
    thread::spawn(move || {
        while let Some(chunk) = read_chunk(&mut reader) {
            let mut name = "message".to_owned();
            let mut data = String::new();
            for line in chunk.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    name = v.to_owned();
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data = v.to_owned();
                }
            }
            if tx.send((name, data)).is_err() {
                return;
            }
        }
    });
    rx
}

#[test]
fn legacy_sse_answers_on_the_event_stream() {
    let server = HttpMcp::start(Script::with_tools(tools()), HttpKind::LegacySse);
    let mut stream = TcpStream::connect(server.url.split('/').nth(2).unwrap()).unwrap();
    send(&mut stream, "GET", "/sse", &[("Accept", "text/event-stream")], "");
    let mut reader = BufReader::new(stream);
    assert_eq!(read_head(&mut reader).0, 200);
    let events = sse_events(reader);
    let (name, endpoint) = events.recv_timeout(WAIT).unwrap();
    assert_eq!(name, "endpoint");
    assert!(endpoint.starts_with("/messages?sessionId="), "{endpoint}");
    assert_eq!(post(&server, &endpoint, None, &initialize(1)).status, 202);
    let (name, data) = events.recv_timeout(WAIT).unwrap();
    assert_eq!(name, "message");
    let answer: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(answer["result"]["protocolVersion"], "2025-03-26");

    // A call that asks the client for its roots: the request comes down the stream.
    assert_eq!(post(&server, &endpoint, None, &call(2, "roots", json!({}))).status, 202);
    let request: Value = serde_json::from_str(&events.recv_timeout(WAIT).unwrap().1).unwrap();
    assert_eq!(request["method"], "roots/list");
    let roots = json!({"jsonrpc": "2.0", "id": request["id"],
                       "result": {"roots": [{"uri": "file:///p", "name": "p"}]}});
    assert_eq!(post(&server, &endpoint, None, &roots).status, 202);
    let answer: Value = serde_json::from_str(&events.recv_timeout(WAIT).unwrap().1).unwrap();
    let text: Value =
        serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["roots"][0]["uri"], "file:///p");
    assert_eq!(post(&server, "/messages?sessionId=nope", None, &initialize(3)).status, 404);
}

/// Starts the stdio entry's command as the client would (a bare environment plus the
/// entry's), in `cwd`; its stdout lines come through the receiver.
fn spawn_stdio(
    handles: &StdioHandles,
    cwd: &std::path::Path,
) -> (std::process::Child, Receiver<String>) {
    let mut child = Command::new(&handles.command)
        .args(&handles.args)
        .env_clear()
        .envs(handles.env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = channel();
    thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    (child, rx)
}

#[test]
fn the_stdio_server_is_the_test_binary_speaking_on_its_stdout() {
    let ws = Workspace::new("fake-mcp-stdio");
    let script = Script { garbage_first: true, page_size: Some(4), ..Script::with_tools(tools()) };
    let (entry, handles) = stdio_entry("fake one", &script, ws.root());
    assert_eq!(entry["env"][0]["name"], "FAKE_MCP_SCRIPT");
    assert_eq!(handles.mcp_json_entry()["env"]["FAKE_MCP_LOG"], handles.log.display().to_string());
    let (mut child, lines) = spawn_stdio(&handles, &ws.project());
    let mut stdin = child.stdin.take().unwrap();
    let next = || serde_json::from_str::<Value>(&lines.recv_timeout(WAIT).unwrap()).ok();
    assert_eq!(next(), None, "the garbage line comes first");
    writeln!(stdin, "{}", initialize(1)).unwrap();
    assert_eq!(next().unwrap()["result"]["serverInfo"]["name"], "fake-mcp");
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).unwrap();
    assert_eq!(next().unwrap()["result"]["nextCursor"], "fake-cursor-4");
    assert_eq!(handles.pids().len(), 1, "one process carries the marker");

    writeln!(stdin, "{}", call(3, "roots", json!({}))).unwrap();
    let request = next().unwrap();
    assert_eq!(request["method"], "roots/list");
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": []}}))
        .unwrap();
    assert_eq!(next().unwrap()["result"]["content"][0]["text"], r#"{"roots":[]}"#);

    writeln!(stdin, "{}", call(4, "progress", json!({}))).unwrap();
    assert_eq!(next().unwrap()["method"], "notifications/progress");
    assert_eq!(next().unwrap()["params"]["progress"], 2);
    assert_eq!(next().unwrap()["result"]["content"][0]["text"], "done");

    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0), "EOF ends the server cleanly");
    let received = handles.received();
    assert_eq!(received[0]["params"]["protocolVersion"], "2025-03-26");
    assert_eq!(with_method(&received, "tools/call").len(), 2);
    assert!(received.iter().any(|m| m["result"]["roots"] == json!([])), "the answer is logged");
    assert!(handles.pids().is_empty());
}

#[test]
fn a_crashing_stdio_call_exits_with_code_3() {
    let ws = Workspace::new("fake-mcp-crash");
    let (_, handles) = stdio_entry("crashy", &Script::with_tools(tools()), ws.root());
    let (mut child, _lines) = spawn_stdio(&handles, &ws.project());
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", call(1, "crash", json!({}))).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(CRASH_EXIT_CODE));
    assert!(wait_for(&handles.log, has_method("tools/call"), WAIT).is_some());
}
