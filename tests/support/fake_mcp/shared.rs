//! The state the fake MCP HTTP servers' connection threads share with the [`HttpMcp`]
//! handle: what was received (messages, HTTP requests), the sessions, the open standing
//! SSE streams, the cancelled requests, with the condvar tests wait on; and the two pieces
//! both HTTP transports use: a standing SSE stream fed through a channel, and a hung
//! request held until the client gives up or cancels it.
//!
//! [`HttpMcp`]: super::HttpMcp

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::engine::{Engine, Pending, cancelled_id};
use super::http::{HttpRequest, write_event};
use super::server::HttpKind;

/// One HTTP request the fake received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// The request target, query included.
    #[allow(
        dead_code,
        reason = "shown by Debug when an assertion on it fails; no test reads it directly"
    )]
    pub path: String,
    /// Header names are lowercased.
    pub headers: Vec<(String, String)>,
    /// The body as JSON, `Value::Null` if empty or not JSON.
    #[allow(
        dead_code,
        reason = "shown by Debug when an assertion on it fails; no test reads it directly"
    )]
    pub body: Value,
}

impl Seen {
    /// First value of the header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }
}

/// What goes down a standing SSE stream.
pub(super) enum Push {
    Message(Value),
    Close,
}

pub(super) struct Stream {
    id: u64,
    session: String,
    pub(super) tx: Sender<Push>,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) received: Vec<Value>,
    pub(super) requests: Vec<Seen>,
    /// Session id → alive.
    pub(super) sessions: HashMap<String, bool>,
    next_id: u64,
    pub(super) deleted: usize,
    /// `requestId`s of the `notifications/cancelled` received, as JSON text.
    cancelled: HashSet<String>,
    pub(super) streams: Vec<Stream>,
    pub(super) streams_closed: usize,
    /// Held (hung) requests whose connection the client closed.
    closed_holds: HashSet<u64>,
    pub(super) hangs_ended: usize,
}

pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    pub(super) changed: Condvar,
    pub(super) stop: AtomicBool,
    pub(super) kind: HttpKind,
    pub(super) engine: Engine,
    pub(super) pending: Pending,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `change` on the state and wakes every waiter.
    pub(super) fn update<T>(&self, change: impl FnOnce(&mut State) -> T) -> T {
        let out = change(&mut self.lock());
        self.changed.notify_all();
        out
    }

    /// Waits (woken by every change) until `done` holds; false on timeout.
    pub(super) fn wait_until(
        &self,
        timeout: Duration,
        mut done: impl FnMut(&State) -> bool,
    ) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.lock();
        loop {
            if done(&state) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline || self.stop.load(Ordering::SeqCst) {
                return false;
            }
            state = self
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Records `request` (and its body among the received messages if it is JSON): the body.
    pub(super) fn record(&self, request: &HttpRequest) -> Option<Value> {
        let body: Option<Value> = serde_json::from_slice(&request.body).ok();
        self.update(|state| {
            state.requests.push(Seen {
                method: request.method.clone(),
                path: request.path.clone(),
                headers: request.headers.clone(),
                body: body.clone().unwrap_or(Value::Null),
            });
            if let Some(message) = &body {
                if let Some(id) = cancelled_id(message) {
                    state.cancelled.insert(id);
                }
                state.received.push(message.clone());
            }
        });
        body
    }

    pub(super) fn new_session(&self) -> String {
        self.update(|state| {
            state.next_id += 1;
            let id = format!("fake-session-{}", state.next_id);
            state.sessions.insert(id.clone(), true);
            id
        })
    }

    /// `Ok` if `session` names a live session; else the status to answer (400 without
    /// one, 404 for one unknown or ended).
    pub(super) fn check_session(&self, session: Option<&str>) -> Result<String, u16> {
        let session = session.ok_or(400u16)?;
        match self.lock().sessions.get(session) {
            Some(true) => Ok(session.to_owned()),
            _ => Err(404),
        }
    }

    /// Ends `session` (closing its streams); `deleted` counts a client's DELETE.
    pub(super) fn end_session(&self, session: &str, deleted: bool) {
        self.update(|state| {
            state.sessions.insert(session.to_owned(), false);
            state.deleted += usize::from(deleted);
            for stream in state.streams.iter().filter(|s| s.session == session) {
                let _ = stream.tx.send(Push::Close);
            }
        });
    }

    /// Sends `message` down the open streams of `session` (all open streams if `None`):
    /// how many took it.
    pub(super) fn push(&self, session: Option<&str>, message: &Value) -> usize {
        let state = self.lock();
        state
            .streams
            .iter()
            .filter(|s| session.is_none_or(|session| s.session == session))
            .filter(|s| s.tx.send(Push::Message(message.clone())).is_ok())
            .count()
    }

    /// Sends a request down the streams of `session` (all if `None`) and waits for the
    /// answer; `None` if no stream is open or no answer came.
    pub(super) fn ask(&self, session: Option<&str>, request: Value) -> Option<Value> {
        self.pending.expect(&request);
        if self.push(session, &request) == 0 {
            return None;
        }
        self.pending.wait(&request)
    }

    /// Serves a standing SSE stream for `session` on `stream` (its head already written)
    /// until the client closes it, the session ends or the server stops; each message
    /// pushed becomes an event named `event` (no `event:` line if `None`).
    pub(super) fn serve_stream(&self, stream: &TcpStream, session: &str, event: Option<&str>) {
        let (tx, rx) = channel();
        let id = self.update(|state| {
            state.next_id += 1;
            let id = state.next_id;
            state.streams.push(Stream { id, session: session.to_owned(), tx: tx.clone() });
            id
        });
        if self.stop.load(Ordering::SeqCst) {
            let _ = tx.send(Push::Close);
        }
        if let Ok(mut watched) = stream.try_clone() {
            thread::spawn(move || {
                read_until_closed(&mut watched);
                let _ = tx.send(Push::Close);
            });
        }
        while let Ok(Push::Message(message)) = rx.recv() {
            if write_event(stream, event, &message.to_string()).is_err() {
                break;
            }
        }
        let _ = stream.shutdown(Shutdown::Both);
        self.update(|state| {
            state.streams.retain(|s| s.id != id);
            state.streams_closed += 1;
            if self.kind == HttpKind::LegacySse {
                state.sessions.insert(session.to_owned(), false);
            }
        });
    }

    /// Holds the request `id` on `stream` without answering until the client closes the
    /// connection, cancels the request, or the server stops; then closes the connection.
    pub(super) fn hold(self: &Arc<Shared>, stream: &TcpStream, id: &Value) {
        let key = id.to_string();
        let token = self.update(|state| {
            state.next_id += 1;
            state.next_id
        });
        if let Ok(mut watched) = stream.try_clone() {
            let shared = Arc::clone(self);
            // Ends at the client's close, or at the shutdown below.
            thread::spawn(move || {
                read_until_closed(&mut watched);
                shared.update(|state| state.closed_holds.insert(token));
            });
        }
        let mut state = self.lock();
        while !(state.cancelled.contains(&key)
            || state.closed_holds.contains(&token)
            || self.stop.load(Ordering::SeqCst))
        {
            state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        drop(state);
        let _ = stream.shutdown(Shutdown::Both);
        self.update(|state| state.hangs_ended += 1);
    }
}

/// Reads and drops whatever comes until the peer closes or the socket fails.
fn read_until_closed(stream: &mut TcpStream) {
    let mut buf = [0u8; 1024];
    while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
}
