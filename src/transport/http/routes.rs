//! The routes: `POST /acp` (initialize answers at once with `Acp-Connection-Id`, everything
//! else 202 with the answer on a stream), `GET /acp` (an SSE stream for the connection or
//! one session, resumable with `Last-Event-ID`), `DELETE /acp`, and `GET /health`.

use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{select, tick};
use serde_json::Value;

use super::Hub;
use super::conn::{AcpConn, Scope};
use super::request::Request;
use super::response::{self, error};
use crate::jsonrpc::{self, Message};
use crate::session::store;

/// How long `initialize` may take before 504.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(30);
/// SSE comment heartbeat.
const HEARTBEAT: Duration = Duration::from_secs(15);

/// What the socket does after a response.
pub(super) enum Next {
    KeepAlive,
    Close,
}

fn done(ok: bool, keep_alive: bool) -> Next {
    if ok && keep_alive { Next::KeepAlive } else { Next::Close }
}

/// Answers one request.
pub(super) fn handle(hub: &Hub, stream: &TcpStream, req: Request) -> Next {
    let keep = req.keep_alive;
    let fail = |status: u16, why: &str, extra: &[(&str, &str)]| {
        done(error(stream, status, why, extra, keep).is_ok(), keep)
    };
    if let Err(why) = hub.check_origin(&req) {
        return fail(403, &why, &[]);
    }
    match (req.path.as_str(), req.method.as_str()) {
        ("/health", "GET") => {
            let body = br#"{"status":"ok"}"#;
            let ok =
                response::send(stream, 200, &[("Content-Type", "application/json")], body, keep);
            done(ok.is_ok(), keep)
        }
        ("/health", _) => fail(405, "method not allowed", &[("Allow", "GET")]),
        ("/acp", method) => {
            if !hub.authorized(&req) {
                return fail(401, "Unauthorized", &[("WWW-Authenticate", "Bearer")]);
            }
            match method {
                "POST" => post(hub, stream, req),
                "GET" => get(hub, stream, &req),
                "DELETE" => delete(hub, stream, &req),
                _ => fail(405, "method not allowed", &[("Allow", "GET, POST, DELETE")]),
            }
        }
        _ => fail(404, "not found", &[]),
    }
}

fn connection(hub: &Hub, req: &Request) -> Result<Arc<AcpConn>, &'static str> {
    let id = req.header("acp-connection-id").ok_or("missing Acp-Connection-Id header")?;
    hub.get(id).ok_or(
        "Connection not found. Send 'initialize' first or provide a valid Acp-Connection-Id header.",
    )
}

fn post(hub: &Hub, stream: &TcpStream, req: Request) -> Next {
    let keep = req.keep_alive;
    let fail = |status: u16, why: &str| done(error(stream, status, why, &[], keep).is_ok(), keep);
    if let Some(kind) = req.header("content-type")
        && !kind.to_ascii_lowercase().starts_with("application/json")
    {
        return fail(415, "Content-Type must be application/json");
    }
    let message = match jsonrpc::parse(&req.body) {
        Ok(message) => message,
        Err((_, err)) if err.code == -32700 => return fail(400, "Invalid JSON"),
        Err((_, err)) => return fail(400, &err.message),
    };
    if let Message::Request(request) = &message
        && request.method == "initialize"
    {
        return initialize(hub, stream, message.clone(), keep);
    }
    let conn = match connection(hub, &req) {
        Ok(conn) => conn,
        Err(why) => return fail(400, why),
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
        return fail(400, "Acp-Session-Id does not match params.sessionId");
    }
    if !conn.submit(Ok(message)) {
        return fail(503, "the connection is closing or too busy");
    }
    done(response::send(stream, 202, &[], b"", keep).is_ok(), keep)
}

fn initialize(hub: &Hub, stream: &TcpStream, message: Message, keep: bool) -> Next {
    let fail = |status: u16, why: &str| done(error(stream, status, why, &[], keep).is_ok(), keep);
    let Message::Request(request) = &message else { return fail(400, "not a request") };
    let conn = match hub.open() {
        Ok(conn) => conn,
        Err(why) => return fail(503, &why),
    };
    let id = serde_json::to_string(&request.id).unwrap_or_default();
    let answer = conn.waiter(&id);
    if !conn.submit(Ok(message)) {
        hub.close(&conn.id);
        return fail(503, "the connection could not start");
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
            fail(504, "Initialize timeout")
        }
    }
}

fn get(hub: &Hub, stream: &TcpStream, req: &Request) -> Next {
    let keep = req.keep_alive;
    let fail = |status: u16, why: &str| done(error(stream, status, why, &[], keep).is_ok(), keep);
    if let Some(accept) = req.header("accept")
        && !(accept.contains("text/event-stream") || accept.contains("*/*"))
    {
        return fail(406, "GET /acp serves text/event-stream");
    }
    let conn = match connection(hub, req) {
        Ok(conn) => conn,
        Err(why) => return fail(400, why),
    };
    let scope = match req.header("acp-session-id") {
        None => Scope::Connection,
        Some(raw) => {
            let id = match store::check_id(raw) {
                Ok(id) => id,
                Err(err) => return fail(400, &err.to_string()),
            };
            match hub.services.holder(&id) {
                Some(holder) if holder != conn.manager => {
                    return fail(409, "that session is held by another connection");
                }
                None if !conn.claimed(&id)
                    && hub.services.store.peek(&id).ok().flatten().is_none() =>
                {
                    return fail(404, "unknown session");
                }
                _ => Scope::Session(id),
            }
        }
    };
    let last_id = req.header("last-event-id").and_then(|v| v.trim().parse::<u64>().ok());
    let Some(events) = conn.open_stream(scope.clone(), last_id) else {
        return fail(400, "the connection is closed");
    };
    if response::start_sse(stream).is_err() {
        conn.stream_ended(&scope, events.generation, None);
        return Next::Close;
    }
    let heartbeat = tick(HEARTBEAT);
    let mut written = None;
    loop {
        select! {
            recv(events.rx) -> frame => match frame {
                Ok((0, note)) => {
                    let _ = response::sse_error(stream, &note);
                    break;
                }
                Ok((seq, bytes)) => {
                    if response::sse_event(stream, seq, &bytes).is_err() {
                        break;
                    }
                    written = Some(seq);
                }
                // Taken over by a newer stream, or the connection closed.
                Err(_) => break,
            },
            recv(heartbeat) -> _ => {
                if response::sse_comment(stream, "keep-alive").is_err() {
                    break;
                }
            }
        }
    }
    let _ = response::end_chunks(stream);
    conn.stream_ended(&scope, events.generation, written);
    Next::Close
}

fn delete(hub: &Hub, stream: &TcpStream, req: &Request) -> Next {
    let keep = req.keep_alive;
    let conn = match connection(hub, req) {
        Ok(conn) => conn,
        Err(why) => return done(error(stream, 400, why, &[], keep).is_ok(), keep),
    };
    hub.close(&conn.id);
    done(response::send(stream, 200, &[], b"", keep).is_ok(), keep)
}
