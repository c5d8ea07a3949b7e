//! One MCP server of a session (`Server`): it connects on its own thread as the session
//! opens, then is ready, failed or closed. A server that fails (at start, by not answering
//! a call, by crashing, by breaking the protocol) loses its tools and is queued to be told
//! once, at the start of the next turn. A stdio server that crashed or hung keeps its
//! tools and is restarted once, on the next call of one of them. Its connection is
//! replaced and closed outside its lock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Instant;

use serde_json::Value;

use super::conn::{self, Conn, RemoteTool, Setup};
use super::names::sanitize;
use super::peer::CallError;
use super::spec::{BadEntry, Origin, ServerSpec, Transport, TransportKind};
use super::tool::Calls;
use crate::sync::lock;
use crate::tools::{ToolContext, ToolError};

/// How often a wait for a connecting server looks whether it should stop.
const STOP_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// What the model gets for a call cut short by a cancel (the agent's own words).
const CANCELLED: &str = "Tool call cancelled by the user.";

/// One server's state as shown to users (`/mcp`, the session response's `_meta`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub name: String,
    /// How it is reached (`None` for an entry that could not be read).
    pub transport: Option<TransportKind>,
    pub state: Phase,
    /// Tools offered now.
    pub tools: usize,
    /// Why it failed, or its last error.
    pub error: Option<String>,
    /// Where its entry came from (`None` for an entry that could not be read).
    pub origin: Option<Origin>,
    /// Tools it lists that are not offered, and why (one line per reason).
    pub left_out: Vec<String>,
}

/// Where a server is in its life, as shown to users and clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Connecting,
    Ready,
    Failed,
    Closed,
}

impl Phase {
    /// `connecting`, `ready`, `failed` or `closed`.
    pub fn id(self) -> &'static str {
        match self {
            Phase::Connecting => "connecting",
            Phase::Ready => "ready",
            Phase::Failed => "failed",
            Phase::Closed => "closed",
        }
    }
}

enum State {
    Connecting,
    Ready {
        conn: Arc<Conn>,
        tools: Vec<RemoteTool>,
    },
    /// Failed; `last` keeps the tools of a crashed stdio server that may be restarted.
    Failed {
        reason: String,
        last: Option<Vec<RemoteTool>>,
    },
    Closed,
}

/// One server of a session.
pub struct Server {
    spec: Option<ServerSpec>,
    name: String,
    setup: Setup,
    state: Mutex<State>,
    changed: Condvar,
    restarted: std::sync::atomic::AtomicBool,
    shared: Arc<Shared>,
    /// What its last tool list held that is not offered, and why.
    left_out: Mutex<Vec<String>>,
}

impl Server {
    /// The name the user gave it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Moves to `state`, unless the server was closed meanwhile (then `state`, a fresh
    /// connection perhaps, is dropped). What is replaced, a connection perhaps, is dropped
    /// outside the lock: closing one may take a request to the server.
    fn set(&self, state: State) {
        let failed = match &state {
            State::Failed { reason, .. } => Some(reason.clone()),
            _ => None,
        };
        let old = {
            let mut current = lock(&self.state);
            if matches!(*current, State::Closed) {
                Err(state)
            } else {
                Ok(std::mem::replace(&mut *current, state))
            }
        };
        let Ok(old) = old else { return };
        if let Some(reason) = failed {
            lock(&self.shared.notices).push(format!("MCP server '{}' failed: {reason}", self.name));
        }
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_all();
        drop(old);
    }

    fn connect(&self) {
        let Some(spec) = &self.spec else { return };
        let started = Instant::now();
        let state = match conn::connect(spec, &self.setup) {
            Ok((conn, tools)) => {
                log::info!(
                    "MCP server {} ({}, {}, protocol {}) ready in {} ms: {} tools",
                    self.name,
                    spec.transport.kind().id(),
                    conn.server_info,
                    conn.version,
                    started.elapsed().as_millis(),
                    tools.len()
                );
                self.left_out(conn.left_out.clone());
                State::Ready { conn: Arc::new(conn), tools }
            }
            Err(reason) => State::Failed { reason, last: None },
        };
        self.set(state);
    }

    /// Waits until it is no longer connecting, at most until `deadline`, or until `stop`
    /// (looked at every `STOP_EVERY`) says to stop.
    pub(super) fn wait(&self, deadline: Instant, stop: &dyn Fn() -> bool) {
        let mut state = lock(&self.state);
        while matches!(*state, State::Connecting) && !stop() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            state = self
                .changed
                .wait_timeout(state, left.min(STOP_EVERY))
                .map_or_else(|e| e.into_inner().0, |r| r.0);
        }
    }

    /// Notices a connection that broke since, and reads a changed tool list again.
    pub(super) fn check(&self) {
        let (conn, broken) = match &*lock(&self.state) {
            State::Ready { conn, .. } => (Arc::clone(conn), conn.peer.broken()),
            _ => return,
        };
        if let Some(reason) = broken {
            self.broke(reason, &conn);
            return;
        }
        if conn.peer.stale.swap(false, Ordering::SeqCst) {
            match conn::list_tools(&conn, self.setup.connect_timeout) {
                Ok(conn::Listing { tools, left_out }) => {
                    self.left_out(left_out);
                    if let State::Ready { tools: current, .. } = &mut *lock(&self.state) {
                        log::info!(
                            "MCP server {}: tool list changed ({} tools)",
                            self.name,
                            tools.len()
                        );
                        *current = tools;
                    }
                    self.shared.generation.fetch_add(1, Ordering::SeqCst);
                }
                Err(err) => {
                    self.broke(format!("reading its changed tool list failed: {err}"), &conn);
                }
            }
        }
    }

    /// Keeps (and logs) what the server's tool list held that is not offered.
    fn left_out(&self, left_out: Vec<String>) {
        for why in &left_out {
            log::warn!("MCP server {}: left out {why}", self.name);
        }
        *lock(&self.left_out) = left_out;
    }

    /// The connection `conn` broke (or hangs): it is closed, and a stdio server not
    /// restarted yet keeps its tools. A connection already replaced is left alone.
    fn broke(&self, reason: String, conn: &Arc<Conn>) {
        let last = match &*lock(&self.state) {
            State::Ready { tools, conn: current } if Arc::ptr_eq(current, conn) => {
                Some(tools.clone())
            }
            _ => return,
        };
        let restartable =
            matches!(self.spec.as_ref().map(|s| &s.transport), Some(Transport::Stdio { .. }))
                && !self.restarted.load(Ordering::SeqCst);
        self.set(State::Failed { reason, last: last.filter(|_| restartable) });
    }

    pub(super) fn offered(&self) -> Vec<RemoteTool> {
        match &*lock(&self.state) {
            State::Ready { tools, .. } => tools.clone(),
            State::Failed { last: Some(tools), .. } => tools.clone(),
            _ => Vec::new(),
        }
    }

    /// The connection for a call: restarts a crashed stdio server once.
    fn conn_for_call(&self) -> Result<Arc<Conn>, String> {
        self.check();
        let restart = match &*lock(&self.state) {
            State::Ready { conn, .. } => return Ok(Arc::clone(conn)),
            State::Failed { last: Some(_), reason } => reason.clone(),
            State::Failed { reason, .. } => return Err(reason.clone()),
            State::Connecting => return Err("it is still connecting".to_string()),
            State::Closed => return Err("the session closed it".to_string()),
        };
        self.restarted.store(true, Ordering::SeqCst);
        log::info!("MCP server {}: restarting after: {restart}", self.name);
        self.connect();
        match &*lock(&self.state) {
            State::Ready { conn, .. } => Ok(Arc::clone(conn)),
            State::Failed { reason, .. } => Err(format!("restarting it failed: {reason}")),
            _ => Err("it is not available".to_string()),
        }
    }

    pub(super) fn status(&self) -> Status {
        let transport = self.spec.as_ref().map(|s| s.transport.kind());
        let origin = self.spec.as_ref().map(|s| s.origin);
        let (state, tools, error) = match &*lock(&self.state) {
            State::Connecting => (Phase::Connecting, 0, None),
            State::Ready { tools, conn } => match conn.peer.broken() {
                Some(reason) => (Phase::Failed, 0, Some(reason)),
                None => (Phase::Ready, tools.len(), None),
            },
            State::Failed { reason, last } => {
                (Phase::Failed, last.as_ref().map_or(0, Vec::len), Some(reason.clone()))
            }
            State::Closed => (Phase::Closed, 0, None),
        };
        let left_out = lock(&self.left_out).clone();
        Status { name: self.name.clone(), transport, state, tools, error, origin, left_out }
    }

    pub(super) fn close(&self) {
        let old = std::mem::replace(&mut *lock(&self.state), State::Closed);
        self.changed.notify_all();
        if let State::Ready { conn, .. } = old {
            conn.close();
        }
    }
}

impl Calls for Server {
    fn server(&self) -> &str {
        &self.name
    }

    /// Calls a tool (`params` of `tools/call`) for a running tool call.
    fn call(&self, params: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let name = &self.name;
        let conn = self.conn_for_call().map_err(|why| {
            ToolError::Model(format!("MCP server '{name}' is not available: {why}"))
        })?;
        let progress = |text: String| (ctx.progress)(text);
        let timeout = self.setup.call_timeout;
        match conn.peer.request("tools/call", params, timeout, Some(ctx.cancel), &progress) {
            Ok(result) => Ok(result),
            Err(CallError::Cancelled) => Err(ToolError::Model(CANCELLED.to_string())),
            Err(CallError::Rpc(code, message)) => Err(ToolError::Model(format!(
                "MCP server '{name}' refused the call: {message} ({code})"
            ))),
            Err(CallError::Broken(why)) => {
                self.broke(why.clone(), &conn);
                Err(ToolError::Model(format!("MCP server '{name}' failed during the call: {why}")))
            }
            Err(CallError::Timeout(after)) => {
                // A server that does not answer is failed (a stdio one is restarted once).
                let why = format!("gave no answer to a call in {} s", after.as_secs());
                self.broke(why.clone(), &conn);
                Err(ToolError::Model(format!("MCP server '{name}' {why}; the call was cancelled")))
            }
        }
    }
}

impl Server {
    /// A server for `entry`, connecting on its own thread; an entry that cannot be read is
    /// a failed server from the start.
    pub(super) fn start(
        entry: Result<ServerSpec, BadEntry>,
        setup: &Setup,
        shared: &Arc<Shared>,
    ) -> Arc<Server> {
        let (spec, name, state) = match entry {
            Ok(spec) => {
                let name = spec.name.clone();
                (Some(spec), name, State::Connecting)
            }
            Err(bad) => (None, bad.name, State::Failed { reason: bad.reason, last: None }),
        };
        let server = Arc::new(Server {
            spec,
            name,
            setup: setup.clone(),
            state: Mutex::new(State::Connecting),
            changed: Condvar::new(),
            restarted: Default::default(),
            shared: Arc::clone(shared),
            left_out: Mutex::default(),
        });
        match state {
            State::Connecting => {
                let connecting = Arc::clone(&server);
                let spawned = thread::Builder::new()
                    .name(format!("mcp-connect-{}", crate::text::clip(&sanitize(&server.name), 8)))
                    .spawn(move || connecting.connect());
                if let Err(err) = spawned {
                    server
                        .set(State::Failed { reason: format!("cannot start: {err}"), last: None });
                }
            }
            other => server.set(other),
        }
        server
    }
}

/// What a session's servers share.
pub(super) struct Shared {
    /// Bumped whenever any server's tools change.
    pub(super) generation: AtomicU64,
    /// Failures not told yet.
    pub(super) notices: Mutex<Vec<String>>,
}

impl Shared {
    pub(super) fn new() -> Arc<Shared> {
        Arc::new(Shared { generation: AtomicU64::new(1), notices: Mutex::default() })
    }
}
