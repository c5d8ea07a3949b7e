//! The legacy HTTP+SSE transport (protocol 2024-11-05) of the fake MCP server: `GET /sse`
//! opens the session's event stream, whose first event is `endpoint` with data
//! `/messages?sessionId=<id>`; the client POSTs each JSON-RPC message there (202, or 404
//! for a session that is unknown or whose stream ended), and everything the server says
//! goes back as `event: message` on the stream. A crashing call cuts the stream.

use std::io;
use std::net::TcpStream;
use std::sync::Arc;
use std::thread;

use serde_json::Value;

use super::engine::{Incoming, Peer, Reply, list_changed};
use super::http::{HttpRequest, write_event, write_full, write_sse_head};
use super::shared::Shared;

/// Serves one request; whether the connection stays open for the next.
pub(super) fn serve(
    shared: &Arc<Shared>,
    stream: &TcpStream,
    request: &HttpRequest,
) -> io::Result<bool> {
    let body = shared.record(request);
    match (request.method.as_str(), request.route()) {
        ("GET", "/sse") => {
            let session = shared.new_session();
            write_sse_head(stream, &[])?;
            write_event(stream, Some("endpoint"), &format!("/messages?sessionId={session}"))?;
            shared.serve_stream(stream, &session, Some("message"));
            Ok(false)
        }
        ("POST", "/messages") => {
            let session = match shared.check_session(request.query("sessionId")) {
                Ok(session) => session,
                Err(code) => {
                    write_full(stream, code, &[], None, b"")?;
                    return Ok(true);
                }
            };
            let Some(message) = body else {
                write_full(stream, 400, &[], None, b"")?;
                return Ok(true);
            };
            write_full(stream, 202, &[], None, b"Accepted")?;
            // Answered on the stream, from another thread: the client may send its answer to
            // a request of this call on this very connection.
            let shared = Arc::clone(shared);
            thread::spawn(move || handle(&shared, &session, &message));
            Ok(true)
        }
        _ => {
            write_full(stream, 404, &[], None, b"")?;
            Ok(true)
        }
    }
}

fn handle(shared: &Shared, session: &str, message: &Value) {
    match Incoming::of(message) {
        Incoming::Request { id, method, params } => {
            let peer = SessionPeer { shared, session };
            match shared.engine.handle(&id, &method, &params, &peer) {
                Reply::Answer(answer) => {
                    shared.push(Some(session), &answer);
                }
                // As over the other transports: the notification before the answer.
                Reply::Changed(answer) => {
                    shared.engine.switch_tools();
                    shared.push(Some(session), &list_changed());
                    shared.push(Some(session), &answer);
                }
                Reply::Hang => {}
                Reply::Crash => shared.end_session(session, false),
            }
        }
        Incoming::Response { id } => {
            shared.pending.deliver(&id, message);
        }
        Incoming::Notification | Incoming::Invalid => {}
    }
}

/// Everything goes down the session's stream.
struct SessionPeer<'a> {
    shared: &'a Shared,
    session: &'a str,
}

impl Peer for SessionPeer<'_> {
    fn notify(&self, message: Value) {
        self.shared.push(Some(self.session), &message);
    }

    fn request(&self, message: Value) -> Option<Value> {
        self.shared.ask(Some(self.session), message)
    }
}
