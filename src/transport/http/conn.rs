//! One ACP connection over HTTP: its JSON-RPC engine on its own thread, a router thread
//! that numbers every outgoing frame (one sequence per connection, never restarted) and
//! files it under a scope (the connection, or a session whose stream the client opened),
//! a bounded replay buffer, and at most one live SSE stream per scope (a new GET takes
//! over). Frames produced while no stream of their scope is open wait in the buffer.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};

use crate::acp::AcpAgent;
use crate::jsonrpc::{self, Inbound, Outbox, Outgoing};
use crate::lock;
use crate::session::Services;

/// Frames queued toward one SSE writer before it counts as stalled.
const STREAM_QUEUE: usize = 1024;
/// How long closing a connection waits for its prompts to answer.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// Where a frame goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The connection's stream (GET with only `Acp-Connection-Id`).
    Connection,
    /// A session's stream (GET with `Acp-Session-Id` too).
    Session(String),
}

/// A frame on its way to a stream.
pub type Frame = (u64, Arc<[u8]>);

struct Event {
    seq: u64,
    scope: Scope,
    bytes: Arc<[u8]>,
}

struct Live {
    tx: Sender<Frame>,
    generation: u64,
}

#[derive(Default)]
struct State {
    seq: u64,
    buffer: VecDeque<Event>,
    buffered: usize,
    delivered: HashMap<Scope, u64>,
    streams: HashMap<Scope, Live>,
    claimed: HashSet<String>,
    waiters: HashMap<String, Sender<Vec<u8>>>,
    generation: u64,
    closed: bool,
}

/// A stream the caller must now write.
pub struct Stream {
    /// Frames to write, in order (the backlog first).
    pub rx: Receiver<Frame>,
    /// Identifies this stream among the scope's successive streams.
    pub generation: u64,
}

/// One ACP connection.
pub struct AcpConn {
    /// The `Acp-Connection-Id`.
    pub id: String,
    /// The session manager id of its engine (for session ownership checks).
    pub manager: u64,
    inbox: Mutex<Option<Sender<Inbound>>>,
    state: Mutex<State>,
    last_active: Mutex<Instant>,
    engine_done: Receiver<()>,
    router_done: Receiver<()>,
    buffer_cap: usize,
}

impl AcpConn {
    /// Starts the engine and the router of a new connection.
    pub fn start(services: Arc<Services>, buffer_cap: usize) -> std::io::Result<Arc<AcpConn>> {
        let id = uuid::Uuid::new_v4().to_string();
        let (in_tx, in_rx) = crossbeam_channel::bounded::<Inbound>(64);
        let (out_tx, out_rx) = crossbeam_channel::unbounded::<Outgoing>();
        let (done_tx, engine_done) = crossbeam_channel::bounded(1);
        let (routed_tx, router_done) = crossbeam_channel::bounded(1);
        let mut agent = AcpAgent::new(services);
        let conn = Arc::new(AcpConn {
            id: id.clone(),
            manager: agent.manager_id(),
            inbox: Mutex::new(Some(in_tx)),
            state: Mutex::new(State::default()),
            last_active: Mutex::new(Instant::now()),
            engine_done,
            router_done,
            buffer_cap,
        });
        let outbox = Outbox::new(out_tx);
        let short = id[..8].to_string();
        thread::Builder::new().name(format!("conn-{short}")).spawn(move || {
            jsonrpc::serve(&in_rx, &outbox, &mut agent);
            agent.shutdown(CLOSE_GRACE);
            drop(agent);
            outbox.fail_pending();
            let _ = done_tx.send(());
        })?;
        let router = Arc::clone(&conn);
        thread::Builder::new().name(format!("route-{short}")).spawn(move || {
            for outgoing in out_rx.iter() {
                router.route(outgoing);
            }
            let _ = routed_tx.send(());
        })?;
        Ok(conn)
    }

    /// Hands a frame to the engine. `false` if the connection is closed or jammed.
    pub fn submit(&self, inbound: Inbound) -> bool {
        self.touch();
        let Some(tx) = lock(&self.inbox).clone() else { return false };
        tx.send_timeout(inbound, Duration::from_secs(10)).is_ok()
    }

    /// Waits for the response to request `id` (as JSON text), which then bypasses the
    /// streams. Register before submitting the request.
    pub fn waiter(&self, id: &str) -> Receiver<Vec<u8>> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        lock(&self.state).waiters.insert(id.to_string(), tx);
        rx
    }

    /// Forgets a waiter (after a timeout).
    pub fn forget_waiter(&self, id: &str) {
        lock(&self.state).waiters.remove(id);
    }

    /// Marks the connection used now.
    pub fn touch(&self) {
        *lock(&self.last_active) = Instant::now();
    }

    /// Whether it has been idle (no request, no live stream) for `idle`.
    pub fn idle_for(&self, idle: Duration) -> bool {
        lock(&self.state).streams.is_empty() && lock(&self.last_active).elapsed() >= idle
    }

    /// Whether the session's scope was claimed by a stream of this connection.
    pub fn claimed(&self, session: &str) -> bool {
        lock(&self.state).claimed.contains(session)
    }

    /// Opens the stream of `scope`, taking over from an older one. Replays the frames
    /// after `last_id` (or, without it, those never delivered) from the buffer.
    pub fn open_stream(&self, scope: Scope, last_id: Option<u64>) -> Option<Stream> {
        self.touch();
        let mut state = lock(&self.state);
        if state.closed {
            return None;
        }
        if let Scope::Session(id) = &scope {
            state.claimed.insert(id.clone());
        }
        let after = last_id.unwrap_or_else(|| state.delivered.get(&scope).copied().unwrap_or(0));
        let backlog: Vec<Frame> = state
            .buffer
            .iter()
            .filter(|e| e.scope == scope && e.seq > after)
            .map(|e| (e.seq, Arc::clone(&e.bytes)))
            .collect();
        let (tx, rx) = crossbeam_channel::bounded(STREAM_QUEUE.max(backlog.len() + STREAM_QUEUE));
        if let Some(last) = backlog.last() {
            state.delivered.insert(scope.clone(), last.0);
        }
        for frame in backlog {
            let _ = tx.send(frame);
        }
        state.generation += 1;
        let generation = state.generation;
        // Dropping the old sender ends the old stream: two GETs never split the events.
        state.streams.insert(scope, Live { tx, generation });
        Some(Stream { rx, generation })
    }

    /// A stream ended after writing frames up to `written`.
    pub fn stream_ended(&self, scope: &Scope, generation: u64, written: Option<u64>) {
        self.touch();
        let mut state = lock(&self.state);
        if state.streams.get(scope).is_some_and(|live| live.generation == generation) {
            state.streams.remove(scope);
            // Frames queued to the dead writer but not written count as undelivered.
            let delivered = written.unwrap_or(0);
            state.delivered.insert(scope.clone(), delivered);
        }
    }

    /// Files one outgoing frame.
    fn route(&self, outgoing: Outgoing) {
        let mut state = lock(&self.state);
        if !state.waiters.is_empty()
            && let Some(id) = response_id(&outgoing.bytes)
            && let Some(waiter) = state.waiters.remove(&id)
        {
            let _ = waiter.send(outgoing.bytes);
            return;
        }
        if state.closed {
            return;
        }
        let scope = match outgoing.session {
            Some(session) if state.claimed.contains(&session) => Scope::Session(session),
            _ => Scope::Connection,
        };
        state.seq += 1;
        let seq = state.seq;
        let bytes: Arc<[u8]> = outgoing.bytes.into();
        state.buffered += bytes.len();
        state.buffer.push_back(Event { seq, scope: scope.clone(), bytes: Arc::clone(&bytes) });
        if let Some(live) = state.streams.get(&scope) {
            match live.tx.try_send((seq, bytes)) {
                Ok(()) => {
                    state.delivered.insert(scope, seq);
                }
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                    // A stalled or dead writer: end it; the client can come back with
                    // Last-Event-ID.
                    state.streams.remove(&scope);
                }
            }
        }
        self.trim(&mut state);
    }

    /// Keeps the buffer within its cap by dropping delivered frames; a buffer full of
    /// undelivered frames means a client that never reads: the connection is closed.
    fn trim(&self, state: &mut State) {
        while state.buffered > self.buffer_cap {
            let front = &state.buffer[0];
            let delivered = state.delivered.get(&front.scope).is_some_and(|d| *d >= front.seq);
            if !delivered {
                log::warn!("connection {}: event buffer overflow; closing it", self.id);
                state.closed = true;
                for (_, live) in state.streams.drain() {
                    // Sequence 0 marks a final error event.
                    let note = br#"{"error":"event buffer overflow: the client did not read its stream; connection closed"}"#;
                    let _ = live.tx.try_send((0, Arc::from(&note[..])));
                }
                state.buffer.clear();
                state.buffered = 0;
                lock(&self.inbox).take();
                return;
            }
            if let Some(event) = state.buffer.pop_front() {
                state.buffered -= event.bytes.len();
            }
        }
    }

    /// Whether the connection was closed (overflow, DELETE, expiry, shutdown).
    pub fn is_closed(&self) -> bool {
        lock(&self.state).closed
    }

    /// Closes: the engine stops taking frames, cancels its prompts (whose `cancelled`
    /// answers still reach the open streams) and frees its sessions; then every stream
    /// ends. Waits (bounded) for the engine and the router to finish.
    pub fn close(&self) {
        lock(&self.inbox).take();
        let deadline = CLOSE_GRACE + Duration::from_secs(1);
        if self.engine_done.recv_timeout(deadline).is_err() {
            log::warn!("connection {}: engine still busy after close", self.id);
        } else if self.router_done.recv_timeout(Duration::from_secs(1)).is_err() {
            log::warn!("connection {}: frames still being routed after close", self.id);
        }
        let mut state = lock(&self.state);
        state.closed = true;
        // Writers finish the frames already queued to them, then end their streams.
        state.streams.clear();
        state.waiters.clear();
    }
}

/// The id (as JSON text) of a response frame; `None` for requests and notifications.
fn response_id(bytes: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    if value.get("method").is_some() {
        return None;
    }
    value.get("id").map(|id| id.to_string())
}
