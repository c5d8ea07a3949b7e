//! One ACP connection over HTTP: its JSON-RPC engine on its own thread, a router (run on
//! the sending thread) that numbers every outgoing frame (one sequence per connection,
//! never restarted) and files it under a scope (a session whose stream is open, else the
//! connection), a bounded replay buffer, and at most one live SSE stream per scope (a new
//! GET takes over). Frames produced while no stream of their scope is open wait in the
//! buffer. The router writes a frame to an idle stream's socket itself when the socket
//! takes it at once, else queues it to the stream's thread (`sse.rs`). A WebSocket
//! connection has an `Outlet` instead: every frame goes to its socket's writer.

use std::collections::{HashMap, VecDeque};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::options::Engine;
use super::response::{push_sse_event, response_id};
use super::sse::{self, Direct, Frame, Lane, Progress, Stream};
use super::ws::Outlet;
use crate::jsonrpc::{Inbound, Outbox, Outgoing};
use crate::sync::lock;

/// Bytes queued toward one SSE writer before it counts as stalled.
const STREAM_QUEUE_BYTES: usize = 4 << 20;
/// How long closing a connection waits for its prompts to answer.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// Where a frame goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The connection's stream (GET with only `Acp-Connection-Id`).
    Connection,
    /// A session's stream (GET with `Acp-Session-Id` too). Shared, so that filing a frame
    /// copies no string.
    Session(Arc<str>),
}

struct Event {
    seq: u64,
    scope: Scope,
    bytes: Arc<[u8]>,
}

struct Live {
    tx: Sender<Frame>,
    generation: u64,
    progress: Arc<Progress>,
    lane: Arc<Lane>,
    socket: TcpStream,
    /// Where the stream started: frames after this were queued to it.
    after: u64,
}

impl Live {
    /// Stops the writer at once (its next write fails) and says how far it got.
    fn stop(self) -> u64 {
        let _ = self.socket.shutdown(Shutdown::Both);
        self.progress.written.load(Ordering::SeqCst).max(self.after)
    }
}

#[derive(Default)]
struct State {
    seq: u64,
    buffer: VecDeque<Event>,
    buffered: usize,
    delivered: HashMap<Scope, u64>,
    streams: HashMap<Scope, Live>,
    waiters: HashMap<String, Sender<Vec<u8>>>,
    /// The newest frame of each scope dropped from the buffer.
    evicted: HashMap<Scope, u64>,
    generation: u64,
    closed: bool,
    /// The stream that frames being filed now are written to directly, and the last one.
    direct: Option<(Scope, u64)>,
    /// Those frames, as SSE events (kept between bursts).
    scratch: Vec<u8>,
}

/// One ACP connection.
pub struct AcpConn {
    /// The `Acp-Connection-Id`.
    pub id: String,
    /// Its engine's owner id (for session ownership checks).
    pub owner: u64,
    inbox: Mutex<Option<Sender<Inbound>>>,
    state: Mutex<State>,
    last_active: Mutex<Instant>,
    engine_done: Receiver<()>,
    buffer_cap: usize,
    outlet: Option<Arc<dyn Outlet>>,
    /// Taken while a GET for a session stream is judged and opened (their number is capped).
    pub admitting: Mutex<()>,
}

impl AcpConn {
    /// Starts the engine and the router of a new connection.
    pub fn start(
        mut engine: Box<dyn Engine>,
        buffer_cap: usize,
        outlet: Option<Arc<dyn Outlet>>,
    ) -> std::io::Result<Arc<AcpConn>> {
        let id = uuid::Uuid::new_v4().to_string();
        let (in_tx, in_rx) = crossbeam_channel::bounded::<Inbound>(64);
        let (done_tx, engine_done) = crossbeam_channel::bounded(1);
        let conn = Arc::new(AcpConn {
            id: id.clone(),
            owner: engine.owner(),
            inbox: Mutex::new(Some(in_tx)),
            state: Mutex::new(State::default()),
            last_active: Mutex::new(Instant::now()),
            engine_done,
            buffer_cap,
            outlet,
            admitting: Mutex::new(()),
        });
        // Frames are numbered and filed on the thread that sends them; only the socket
        // writes happen on the stream's own thread.
        let router = Arc::clone(&conn);
        let outbox = Outbox::direct(move |outgoing| router.route(outgoing));
        let short = id[..8].to_string();
        thread::Builder::new().name(format!("conn-{short}")).spawn(move || {
            engine.run(&in_rx, &outbox);
            drop(engine);
            outbox.fail_pending();
            let _ = done_tx.send(());
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
        // A WebSocket lives as long as its socket, whose reader watches for silence.
        self.outlet.is_none()
            && lock(&self.state).streams.is_empty()
            && lock(&self.last_active).elapsed() >= idle
    }

    /// Opens the stream of `scope` on `socket`, taking over from an older one (which is
    /// stopped). Queues the frames after `last_id` (or, without it, those never
    /// delivered) from the buffer.
    pub fn open_stream(
        &self,
        scope: Scope,
        last_id: Option<u64>,
        socket: TcpStream,
    ) -> Option<Stream> {
        self.touch();
        let mut state = lock(&self.state);
        if state.closed {
            return None;
        }
        if let Some(old) = state.streams.remove(&scope) {
            // Frames queued to the old writer but not written are delivered again.
            let written = old.stop();
            state.delivered.insert(scope.clone(), written);
        }
        let delivered = state.delivered.get(&scope).copied().unwrap_or(0);
        let after = last_id.unwrap_or(delivered);
        let evicted = state.evicted.get(&scope).copied().unwrap_or(0);
        let gap = last_id.filter(|last| *last < evicted).map(|last| (last + 1, evicted));
        let (tx, rx) = crossbeam_channel::unbounded();
        let progress = Arc::new(Progress::default());
        let mut last_queued = after;
        for event in state.buffer.iter().filter(|e| e.scope == scope && e.seq > after) {
            progress.queued.fetch_add(event.bytes.len(), Ordering::SeqCst);
            let _ = tx.send(Frame::Event(event.seq, Arc::clone(&event.bytes)));
            last_queued = event.seq;
        }
        if last_queued > delivered {
            state.delivered.insert(scope.clone(), last_queued);
        }
        state.generation += 1;
        let generation = state.generation;
        log::debug!(
            "connection {}: stream {generation} of {scope:?} opened after {after}",
            self.id
        );
        let lane = Arc::new(Lane::default());
        let live = Live {
            tx,
            generation,
            progress: Arc::clone(&progress),
            lane: Arc::clone(&lane),
            socket,
            after,
        };
        state.streams.insert(scope, live);
        Some(Stream { rx, generation, progress, lane, gap })
    }

    /// A stream ended (its client went away, or it was stopped).
    pub fn stream_ended(&self, scope: &Scope, stream: &Stream) {
        self.touch();
        let mut state = lock(&self.state);
        if state.streams.get(scope).is_some_and(|live| live.generation == stream.generation) {
            log::debug!("connection {}: stream {} of {scope:?} ended", self.id, stream.generation);
            if let Some(live) = state.streams.remove(scope) {
                // Frames queued to the dead writer but not written count as undelivered.
                let written = live.stop();
                state.delivered.insert(scope.clone(), written);
            }
        }
    }

    /// Files outgoing frames: to their session's stream if one is open, else to the
    /// connection's. Runs on the sending thread; never blocks on a socket. A burst of
    /// frames is filed under one lock, and goes out in one write (or wakes the stream's
    /// thread once). Gives the buffer back (the frames are copied into the replay buffer).
    fn route(&self, outgoing: Outgoing) -> Vec<u8> {
        if let Some(outlet) = &self.outlet {
            outgoing.frames().for_each(|frame| outlet.send(frame));
            return outgoing.bytes;
        }
        let mut state = lock(&self.state);
        for frame in outgoing.frames() {
            self.file(&mut state, outgoing.session.as_deref(), frame);
        }
        self.write_direct(&mut state);
        self.trim(&mut state);
        outgoing.bytes
    }

    /// Writes the frames gathered for a direct write; what the socket does not take at once
    /// goes to the stream's thread.
    fn write_direct(&self, state: &mut State) {
        let Some((scope, last)) = state.direct.take() else { return };
        let mut bytes = std::mem::take(&mut state.scratch);
        let live = state.streams.get(&scope);
        let outcome = live
            .map(|live| sse::write_direct(&live.socket, &live.lane, &live.progress, last, &bytes));
        // The buffer is kept for the next burst, unless a big one grew it.
        if bytes.capacity() <= 64 << 10 {
            bytes.clear();
            state.scratch = bytes;
        }
        let (Some(live), Some(outcome)) = (live, outcome) else { return };
        let dead = match outcome {
            Direct::Sent => false,
            Direct::Queue(frame, len) => {
                live.progress.queued.fetch_add(len, Ordering::SeqCst);
                live.tx.send(frame).is_err()
            }
            Direct::Dead => true,
        };
        if dead && let Some(live) = state.streams.remove(&scope) {
            let written = live.stop();
            state.delivered.insert(scope, written);
        }
    }

    fn file(&self, state: &mut State, session: Option<&str>, frame: &[u8]) {
        if !state.waiters.is_empty()
            && let Some(id) = response_id(frame)
            && let Some(waiter) = state.waiters.remove(&id)
        {
            let _ = waiter.send(frame.to_vec());
            return;
        }
        if state.closed {
            return;
        }
        let open = |key: &&Scope| matches!(key, Scope::Session(s) if Some(&**s) == session);
        let scope = state.streams.keys().find(open).cloned().unwrap_or(Scope::Connection);
        state.seq += 1;
        let seq = state.seq;
        let bytes: Arc<[u8]> = Arc::from(frame);
        state.buffered += bytes.len();
        state.buffer.push_back(Event { seq, scope: scope.clone(), bytes: Arc::clone(&bytes) });
        if let Some(live) = state.streams.get(&scope) {
            // Straight to the socket when the stream is idle: its head is out, nothing is
            // queued to its thread, and this burst has not gone another way.
            let direct = match &state.direct {
                Some((open, _)) => *open == scope,
                None => {
                    live.progress.started.load(Ordering::SeqCst)
                        && live.progress.queued.load(Ordering::SeqCst) == 0
                }
            };
            if direct {
                push_sse_event(&mut state.scratch, seq, &bytes);
                state.direct = Some((scope.clone(), seq));
                state.delivered.insert(scope, seq);
                return;
            }
            let queued = live.progress.queued.fetch_add(bytes.len(), Ordering::SeqCst);
            if queued > STREAM_QUEUE_BYTES || live.tx.send(Frame::Event(seq, bytes)).is_err() {
                // A stalled or dead writer: stop it; the client can come back with
                // Last-Event-ID, or a new GET gets what it missed.
                if let Some(live) = state.streams.remove(&scope) {
                    log::info!("connection {}: a stream stopped reading; closed it", self.id);
                    let written = live.stop();
                    state.delivered.insert(scope, written);
                }
            } else {
                state.delivered.insert(scope, seq);
            }
        }
    }

    /// Keeps the buffer within its cap by dropping delivered frames; a buffer full of
    /// undelivered frames means a client that never reads: the connection is closed.
    fn trim(&self, state: &mut State) {
        while state.buffered > self.buffer_cap {
            let front = &state.buffer[0];
            let delivered = state.delivered.get(&front.scope).is_some_and(|d| *d >= front.seq);
            if !delivered {
                log::warn!(
                    "connection {}: event buffer overflow; closing it (oldest undelivered frame {} of {:?}, {} streams open)",
                    self.id,
                    front.seq,
                    front.scope,
                    state.streams.len()
                );
                state.closed = true;
                let note = super::codes::overflow_note();
                for (_, live) in state.streams.drain() {
                    let _ = live.tx.send(Frame::Final(Arc::clone(&note)));
                }
                state.buffer.clear();
                state.buffered = 0;
                lock(&self.inbox).take();
                return;
            }
            if let Some(event) = state.buffer.pop_front() {
                state.buffered -= event.bytes.len();
                state.evicted.insert(event.scope, event.seq);
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
    pub fn close(&self, going_away: bool) {
        lock(&self.inbox).take();
        let deadline = CLOSE_GRACE + Duration::from_secs(1);
        if self.engine_done.recv_timeout(deadline).is_err() {
            log::warn!("connection {}: engine still busy after close", self.id);
        }
        let mut state = lock(&self.state);
        state.closed = true;
        // Dropping the senders: writers finish the frames already queued, then end their
        // streams cleanly.
        state.streams.clear();
        state.waiters.clear();
        drop(state);
        if let Some(outlet) = &self.outlet {
            outlet.close(going_away);
        }
    }

    /// The sessions whose streams are open.
    pub fn session_streams(&self) -> Vec<Arc<str>> {
        let state = lock(&self.state);
        let session = |scope: &Scope| match scope {
            Scope::Session(id) => Some(Arc::clone(id)),
            Scope::Connection => None,
        };
        state.streams.keys().filter_map(session).collect()
    }

    /// Whether this connection is a WebSocket (it has no streams, takes no POST).
    pub fn is_socket(&self) -> bool {
        self.outlet.is_some()
    }
}
