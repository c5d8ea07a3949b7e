//! The Streamable HTTP transport of the fake MCP server, on one endpoint `/mcp`: `POST`
//! carries one JSON-RPC message (a request is answered with `application/json`, or with a
//! `text/event-stream` of the call's notifications and requests then its response when
//! the script says `sse_responses`; anything else gets 202), `initialize` hands out an
//! `Mcp-Session-Id` every later request must carry (400 without, 404 once ended), `GET`
//! opens a standing SSE stream when the script says `get_stream` (405 otherwise), and
//! `DELETE` ends the session.

use std::io::{self, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;

use serde_json::{Value, json};

use super::engine::{Incoming, Peer, Reply, list_changed};
use super::http::{
    HttpRequest, write_event, write_full, write_json, write_last_chunk, write_sse_head,
};
use super::shared::Shared;

/// Serves one request; whether the connection stays open for the next.
pub(super) fn serve(
    shared: &Arc<Shared>,
    stream: &TcpStream,
    request: &HttpRequest,
) -> io::Result<bool> {
    let body = shared.record(request);
    if request.route() != "/mcp" {
        write_full(stream, 404, &[], None, b"")?;
        return Ok(true);
    }
    let session = request.header("mcp-session-id");
    match request.method.as_str() {
        "POST" => post(shared, stream, body, session),
        "GET" if !shared.engine.script.get_stream => {
            write_full(stream, 405, &[("Allow", "POST, DELETE")], None, b"")?;
            Ok(true)
        }
        "GET" => match shared.check_session(session) {
            Ok(session) => {
                write_sse_head(stream, &[])?;
                shared.serve_stream(stream, &session, None);
                Ok(false)
            }
            Err(code) => refuse(stream, code),
        },
        "DELETE" => match shared.check_session(session) {
            Ok(_) if shared.engine.script.ignore_delete => {
                write_full(stream, 200, &[], None, b"")?;
                Ok(true)
            }
            Ok(session) => {
                shared.end_session(&session, true);
                write_full(stream, 200, &[], None, b"")?;
                Ok(true)
            }
            Err(code) => refuse(stream, code),
        },
        _ => {
            write_full(stream, 405, &[("Allow", "GET, POST, DELETE")], None, b"")?;
            Ok(true)
        }
    }
}

/// A 400 or 404 with a JSON-RPC error body.
fn refuse(stream: &TcpStream, code: u16) -> io::Result<bool> {
    let message = if code == 400 { "missing Mcp-Session-Id" } else { "session not found" };
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": message}});
    write_json(stream, code, &[], &body.to_string())?;
    Ok(true)
}

fn post(
    shared: &Arc<Shared>,
    stream: &TcpStream,
    body: Option<Value>,
    session: Option<&str>,
) -> io::Result<bool> {
    let Some(message) = body else {
        let error = json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": -32700, "message": "parse error"},
        });
        write_json(stream, 400, &[], &error.to_string())?;
        return Ok(true);
    };
    let incoming = Incoming::of(&message);
    let initialize =
        matches!(&incoming, Incoming::Request { method, .. } if method == "initialize");
    let session = if initialize {
        shared.new_session()
    } else {
        match shared.check_session(session) {
            Ok(session) => session,
            Err(code) => return refuse(stream, code),
        }
    };
    let Incoming::Request { id, method, params } = incoming else {
        if let Incoming::Response { id } = &incoming {
            shared.pending.deliver(id, &message);
        }
        let code = if matches!(incoming, Incoming::Invalid) { 400 } else { 202 };
        write_full(stream, code, &[], None, b"")?;
        return Ok(true);
    };
    let headers: &[(&str, &str)] =
        if initialize { &[("Mcp-Session-Id", session.as_str())] } else { &[] };
    if shared.engine.script.sse_responses {
        write_sse_head(stream, headers)?;
        let peer = ResponsePeer { shared, stream };
        match shared.engine.handle(&id, &method, &params, &peer) {
            Reply::Answer(answer) => {
                write_event(stream, None, &answer.to_string())?;
                write_last_chunk(stream)?;
                Ok(true)
            }
            Reply::Changed(answer) => {
                // The response must be the stream's last event: the notice goes first.
                shared.engine.switch_tools();
                write_event(stream, None, &list_changed().to_string())?;
                write_event(stream, None, &answer.to_string())?;
                write_last_chunk(stream)?;
                Ok(true)
            }
            Reply::Hang => {
                shared.hold(stream, &id);
                Ok(false)
            }
            Reply::Crash => cut(stream, b"40\r\ndata: {\"jsonrpc\":\"2.0\",\"id\""),
        }
    } else {
        let peer = StandingPeer { shared };
        match shared.engine.handle(&id, &method, &params, &peer) {
            Reply::Answer(answer) => {
                write_json(stream, 200, headers, &answer.to_string())?;
                Ok(true)
            }
            Reply::Changed(answer) => {
                shared.engine.switch_tools();
                write_json(stream, 200, headers, &answer.to_string())?;
                shared.push(None, &list_changed());
                Ok(true)
            }
            Reply::Hang => {
                shared.hold(stream, &id);
                Ok(false)
            }
            Reply::Crash => cut(
                stream,
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n\
                  {\"jsonrpc\":\"2.0\",\"id\"",
            ),
        }
    }
}

/// Writes `partial` and closes the connection: a response cut in the middle.
fn cut(mut stream: &TcpStream, partial: &[u8]) -> io::Result<bool> {
    let _ = stream.write_all(partial).and_then(|()| stream.flush());
    let _ = stream.shutdown(Shutdown::Both);
    Ok(false)
}

/// A call answered with an SSE stream talks to the client on that stream.
struct ResponsePeer<'a> {
    shared: &'a Shared,
    stream: &'a TcpStream,
}

impl Peer for ResponsePeer<'_> {
    fn notify(&self, message: Value) {
        let _ = write_event(self.stream, None, &message.to_string());
    }

    fn request(&self, message: Value) -> Option<Value> {
        self.shared.pending.expect(&message);
        write_event(self.stream, None, &message.to_string()).ok()?;
        self.shared.pending.wait(&message)
    }
}

/// A call answered with plain JSON talks to the client on the standing streams, if any.
struct StandingPeer<'a> {
    shared: &'a Shared,
}

impl Peer for StandingPeer<'_> {
    fn notify(&self, message: Value) {
        self.shared.push(None, &message);
    }

    fn request(&self, message: Value) -> Option<Value> {
        self.shared.ask(None, message)
    }
}
