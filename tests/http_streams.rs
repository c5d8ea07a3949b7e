//! Session streams as the official clients use them: a `GET /acp` with `Acp-Session-Id` is
//! accepted whatever the session's state (unknown, held by another connection), the error
//! of the POST that follows arrives on it, at most 16 such streams per connection, and a
//! malformed id is still 400.

use serde_json::{Value, json};

use crate::support::http_client::{Event, HttpServer, Sse};
use crate::support::workspace::Workspace;

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn is_response(id: i64) -> impl Fn(&Event) -> bool {
    move |e| e.data.get("id") == Some(&json!(id)) && e.data.get("method").is_none()
}

fn unknown(n: usize) -> String {
    format!("00000000-0000-4000-8000-{n:012}")
}

fn load(server: &HttpServer, conn: &str, id: i64, session: &str, cwd: &std::path::Path) {
    let params = json!({"sessionId": session, "cwd": cwd, "mcpServers": []});
    let response = server.post(Some(conn), &rpc(id, "session/load", params));
    assert_eq!(response.status, 202);
}

#[test]
fn the_error_of_a_load_arrives_on_the_stream_opened_before_it() {
    let ws = Workspace::new("http-streams-errors");
    let server = HttpServer::spawn(&ws, None, &[], &[]);
    // A holds a session.
    let a = server.initialize();
    let sse_a = server.stream(&a, None, None);
    server.post(Some(&a), &rpc(1, "session/new", json!({"cwd": ws.project(), "mcpServers": []})));
    let answer = sse_a.until(is_response(1));
    let held = answer.last().unwrap().data["result"]["sessionId"].as_str().unwrap().to_string();

    let b = server.initialize();
    let conn_stream = server.stream(&b, None, None);
    // Unknown: accepted, and the load's error comes down that stream.
    let missing = unknown(1);
    let stream = server.stream(&b, Some(&missing), None);
    assert_eq!(stream.status, 200);
    load(&server, &b, 2, &missing, &ws.project());
    let error = stream.until(is_response(2));
    assert_eq!(error.last().unwrap().data["error"]["code"], -32602, "{:?}", error.last());
    // Held by A: the same.
    let theirs = server.stream(&b, Some(&held), None);
    assert_eq!(theirs.status, 200);
    load(&server, &b, 3, &held, &ws.project());
    let error = theirs.until(is_response(3));
    assert_eq!(error.last().unwrap().data["error"]["code"], -32001, "{:?}", error.last());
    // The connection stream got neither.
    server.post(Some(&b), &rpc(4, "session/list", json!({})));
    assert_eq!(conn_stream.until(is_response(4)).len(), 1);
    // A malformed id is still refused.
    assert_eq!(server.stream(&b, Some("../../etc/passwd"), None).status, 400);
    // A header that contradicts the body is refused.
    let headers = [
        ("Content-Type", "application/json"),
        ("Acp-Connection-Id", b.as_str()),
        ("Acp-Session-Id", missing.as_str()),
    ];
    let body = rpc(5, "session/prompt", json!({"sessionId": held, "prompt": []}));
    let conflict = server.request("POST", "/acp", &headers, body.to_string().as_bytes());
    assert_eq!(conflict.status, 400);
    assert!(conflict.json()["error"].as_str().unwrap().contains("Acp-Session-Id"));
}

#[test]
fn at_most_sixteen_streams_for_sessions_a_connection_does_not_hold() {
    let ws = Workspace::new("http-streams-cap");
    let server = HttpServer::spawn(&ws, None, &[], &[]);
    let conn = server.initialize();
    let sse = server.stream(&conn, None, None);
    let mut open: Vec<Sse> = (0..16)
        .map(|n| {
            let stream = server.stream(&conn, Some(&unknown(n)), None);
            assert_eq!(stream.status, 200, "stream {n}");
            stream
        })
        .collect();
    let refused = server.stream(&conn, Some(&unknown(16)), None);
    assert_eq!(refused.status, 404, "the 17th");
    // Taking over one of the sixteen adds none.
    let again = server.stream(&conn, Some(&unknown(3)), None);
    assert_eq!(again.status, 200);
    // A session this connection holds does not count.
    server
        .post(Some(&conn), &rpc(1, "session/new", json!({"cwd": ws.project(), "mcpServers": []})));
    let answer = sse.until(is_response(1));
    let own = answer.last().unwrap().data["result"]["sessionId"].as_str().unwrap().to_string();
    assert_eq!(server.stream(&conn, Some(&own), None).status, 200);
    // One leaves: once the server sees it gone (its liveness check), its place is free.
    open.remove(0).disconnect();
    server.wait_log(&format!("of Session(\"{}\") ended", unknown(0)));
    assert_eq!(server.stream(&conn, Some(&unknown(16)), None).status, 200, "a freed place");
}
