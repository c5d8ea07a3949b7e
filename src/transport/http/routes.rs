//! The routes: `POST /acp` (initialize answers at once with `Acp-Connection-Id`, everything
//! else 202 with the answer on a stream), `GET /acp` (an SSE stream for the connection or
//! one session, resumable with `Last-Event-ID`), `DELETE /acp`, `GET /health`, and the
//! web page's files (`GET /`, `GET /web/…`, unless `--no-web`).

use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::Hub;
use super::codes::Code;
use super::conn::{AcpConn, Scope};
use super::request::{Refusal, Request};
use super::response::{self, error};
use super::sse;
use crate::jsonrpc::{self, Message};
use crate::sync::lock;
use crate::web;

/// Most streams a connection may hold open for sessions it does not hold.
pub(super) const MAX_UNHELD_STREAMS: usize = 16;
/// How long `initialize` may take before 504.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(30);

/// What the socket does after a response.
pub(super) enum Next {
    KeepAlive,
    Close,
}

fn done(ok: bool, keep_alive: bool) -> Next {
    if ok && keep_alive { Next::KeepAlive } else { Next::Close }
}

/// Judges a request on its head alone, before its body is read or `100 Continue` sent:
/// Host and Origin, the path, the method, and the token.
pub(super) fn admit(hub: &Hub, req: &Request) -> Result<(), Refusal> {
    let refuse = |status: u16, why: String, headers: Vec<(&'static str, &'static str)>| {
        Err(Refusal { status, why, headers })
    };
    if let Err(why) = hub.check_origin(req) {
        return refuse(403, why, Vec::new());
    }
    let page = hub.args.web && web::asset(&req.path).is_some();
    match (req.path.as_str(), req.method.as_str()) {
        (_, "GET") if page => Ok(()),
        _ if page => refuse(405, "method not allowed".into(), vec![("Allow", "GET")]),
        ("/health", "GET") => Ok(()),
        ("/health", _) => refuse(405, "method not allowed".into(), vec![("Allow", "GET")]),
        ("/acp", _) if !hub.authorized(req) => {
            refuse(401, "Unauthorized".into(), vec![("WWW-Authenticate", "Bearer")])
        }
        ("/acp", "POST" | "GET" | "DELETE") => Ok(()),
        ("/acp", _) => {
            refuse(405, "method not allowed".into(), vec![("Allow", "GET, POST, DELETE")])
        }
        _ => refuse(404, "not found".into(), Vec::new()),
    }
}

/// Answers one admitted request.
pub(super) fn handle(hub: &Hub, stream: &TcpStream, req: Request) -> Next {
    let keep = req.keep_alive;
    match (req.path.as_str(), req.method.as_str()) {
        ("/acp", "POST") => post(hub, stream, req),
        ("/acp", "GET") => get(hub, stream, &req),
        ("/acp", "DELETE") => delete(hub, stream, &req),
        (path, _) if path != "/health" => page(stream, &req),
        _ => {
            // Without the token, only the status (the balancer's check needs no more).
            let (status, body) = hub.engines.health(hub.authorized(&req));
            let headers = [("Content-Type", "application/json"), ("Cache-Control", "no-store")];
            let ok = response::send(stream, status, &headers, body.as_bytes(), keep);
            done(ok.is_ok(), keep)
        }
    }
}

/// A file of the web page (admitted only when it exists and `--no-web` was not given); no
/// token is needed for it: the page holds no secret, and asks for the token itself.
fn page(stream: &TcpStream, req: &Request) -> Next {
    let keep = req.keep_alive;
    let Some(asset) = web::asset(&req.path) else {
        return done(error(stream, (404, Code::NotFound), "not found", &[], keep).is_ok(), keep);
    };
    let mut headers = vec![("Content-Type", asset.content_type), ("ETag", asset.etag)];
    headers.extend_from_slice(web::HEADERS);
    let fresh = req.header("if-none-match").is_some_and(|tags| {
        tags.split(',').any(|t| t.trim().trim_start_matches("W/") == asset.etag)
    });
    let sent = if fresh {
        response::send(stream, 304, &headers, b"", keep)
    } else {
        response::send(stream, 200, &headers, asset.body, keep)
    };
    done(sent.is_ok(), keep)
}

/// The connection a request names; else why not.
fn connection(hub: &Hub, req: &Request) -> Result<Arc<AcpConn>, (Code, &'static str)> {
    let id = req
        .header("acp-connection-id")
        .ok_or((Code::NoConnection, "missing Acp-Connection-Id header"))?;
    hub.get(id).ok_or((
        Code::UnknownConnection,
        "Connection not found. Send 'initialize' first or provide a valid Acp-Connection-Id header.",
    ))
}

/// Answers with an error body and says what the socket does next.
fn failed(stream: &TcpStream, status: u16, code: Code, why: &str, keep: bool) -> Next {
    done(error(stream, (status, code), why, &[], keep).is_ok(), keep)
}

fn post(hub: &Hub, stream: &TcpStream, req: Request) -> Next {
    let keep = req.keep_alive;
    let fail = |status: u16, code: Code, why: &str| failed(stream, status, code, why, keep);
    if let Some(kind) = req.header("content-type")
        && !kind.to_ascii_lowercase().starts_with("application/json")
    {
        return fail(415, Code::UnsupportedMediaType, "Content-Type must be application/json");
    }
    let message = match jsonrpc::parse(&req.body) {
        Ok(message) => message,
        Err((_, err)) if err.code == jsonrpc::code::PARSE_ERROR => {
            return fail(400, Code::InvalidJson, "Invalid JSON");
        }
        Err((_, err)) => return fail(400, Code::InvalidMessage, &err.message),
    };
    if let Message::Request(request) = &message
        && request.method == "initialize"
    {
        return initialize(hub, stream, message.clone(), keep);
    }
    let conn = match connection(hub, &req) {
        Ok(conn) if conn.is_socket() => {
            return fail(400, Code::WebSocketConnection, "that connection is a WebSocket");
        }
        Ok(conn) => conn,
        Err((code, why)) => return fail(400, code, why),
    };
    let params = match &message {
        Message::Request(r) => Some(&r.params),
        Message::Notification(n) => Some(&n.params),
        Message::Response(_) => None,
    };
    if let (Some(header), Some(param)) = (
        req.header("acp-session-id"),
        params.and_then(|p| p.get("sessionId")).and_then(Value::as_str),
    ) && header != param
    {
        let why = "Acp-Session-Id does not match params.sessionId";
        return fail(400, Code::SessionMismatch, why);
    }
    if !conn.submit(Ok(message)) {
        return fail(503, Code::Unavailable, "the connection is closing or too busy");
    }
    done(response::send(stream, 202, &[], b"", keep).is_ok(), keep)
}

fn initialize(hub: &Hub, stream: &TcpStream, message: Message, keep: bool) -> Next {
    let fail = |status: u16, code: Code, why: &str| failed(stream, status, code, why, keep);
    let Message::Request(request) = &message else {
        return fail(400, Code::InvalidMessage, "not a request");
    };
    let conn = match hub.open(None) {
        Ok(conn) => conn,
        Err(why) => return fail(503, Code::Unavailable, &why),
    };
    let id = serde_json::to_string(&request.id).unwrap_or_default();
    let answer = conn.waiter(&id);
    if !conn.submit(Ok(message)) {
        hub.close(&conn.id);
        return fail(503, Code::Unavailable, "the connection could not start");
    }
    match answer.recv_timeout(INITIALIZE_TIMEOUT) {
        Ok(body) => {
            let headers =
                [("Content-Type", "application/json"), ("Acp-Connection-Id", conn.id.as_str())];
            log::info!("connection {} initialized", conn.id);
            done(response::send(stream, 200, &headers, &body, keep).is_ok(), keep)
        }
        Err(_) => {
            conn.forget_waiter(&id);
            hub.close(&conn.id);
            fail(504, Code::InitializeTimeout, "Initialize timeout")
        }
    }
}

fn get(hub: &Hub, stream: &TcpStream, req: &Request) -> Next {
    let keep = req.keep_alive;
    let fail = |status: u16, code: Code, why: &str| failed(stream, status, code, why, keep);
    if let Some(accept) = req.header("accept")
        && !(accept.contains("text/event-stream") || accept.contains("*/*"))
    {
        return fail(406, Code::NotAcceptable, "GET /acp serves text/event-stream");
    }
    let conn = match connection(hub, req) {
        Ok(conn) => conn,
        Err((code, why)) => return fail(400, code, why),
    };
    if conn.is_socket() {
        let why = "that connection is a WebSocket: it has no event streams";
        return fail(400, Code::WebSocketConnection, why);
    }
    // Session streams are judged and opened one at a time, so that their cap holds.
    let admitting = lock(&conn.admitting);
    let scope = match req.header("acp-session-id") {
        None => Scope::Connection,
        Some(raw) => match session_scope(hub, &conn, raw) {
            Ok(scope) => scope,
            // A malformed id, or one stream too many.
            Err((400, why)) => return fail(400, Code::InvalidSessionId, &why),
            Err((status, why)) => return fail(status, Code::TooManyStreams, &why),
        },
    };
    let last_id = req.header("last-event-id").and_then(|v| v.trim().parse::<u64>().ok());
    let Ok(socket) = stream.try_clone() else { return Next::Close };
    let Some(events) = conn.open_stream(scope.clone(), last_id, socket) else {
        return fail(400, Code::ConnectionClosed, "the connection is closed");
    };
    drop(admitting);
    sse::write_stream(stream, &events);
    conn.stream_ended(&scope, &events);
    Next::Close
}

/// The stream of session `raw`, whatever its state: the official clients open it before
/// they POST `session/load`, and read that POST's answer (an error too) there. Streams of
/// sessions this connection does not hold are capped, as the SDK's own server caps them.
fn session_scope(hub: &Hub, conn: &AcpConn, raw: &str) -> Result<Scope, (u16, String)> {
    let (id, held) = hub.engines.session_scope(raw, conn.owner)?;
    if !held {
        let unheld = conn
            .session_streams()
            .iter()
            // Taking over a stream adds none.
            .filter(|open| ***open != *id)
            .filter(|open| !matches!(hub.engines.session_scope(open, conn.owner), Ok((_, true))))
            .count();
        if unheld >= MAX_UNHELD_STREAMS {
            return Err((
                404,
                format!(
                    "unknown session: this connection already has {MAX_UNHELD_STREAMS} streams \
                     open for sessions it does not hold; close one, or load a session first"
                ),
            ));
        }
    }
    Ok(Scope::Session(id.into()))
}

fn delete(hub: &Hub, stream: &TcpStream, req: &Request) -> Next {
    let keep = req.keep_alive;
    let conn = match connection(hub, req) {
        Ok(conn) => conn,
        Err((code, why)) => return failed(stream, 400, code, why, keep),
    };
    hub.close(&conn.id);
    done(response::send(stream, 200, &[], b"", keep).is_ok(), keep)
}
