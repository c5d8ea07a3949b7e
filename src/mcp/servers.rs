//! A session's MCP servers: each connects on its own thread as the session opens; their
//! tools are offered together under unique names; a server that fails (at start, by
//! timing out, by crashing, by breaking the protocol) loses its tools and is reported once
//! at the start of the next turn. A crashed stdio server keeps its tools and is restarted
//! once, on the next call of one of them. Closing ends every connection.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::conn::{self, Conn, RemoteTool, Setup};
use super::names::tool_name;
use super::peer::CallError;
use super::spec::{BadEntry, ServerSpec, Transport};
use super::tool::{Calls, McpTool};
use crate::sync::lock;
use crate::tools::{ExternalTools, Tool, ToolContext, ToolError};

/// What the model gets for a call cut short by a cancel (the agent's own words).
const CANCELLED: &str = "Tool call cancelled by the user.";

/// One server's state as shown to users (`/mcp`, the session response's `_meta`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub name: String,
    /// `stdio`, `http`, `sse` (empty for an entry that could not be read).
    pub transport: &'static str,
    /// `connecting`, `ready`, `failed` or `closed`.
    pub state: &'static str,
    /// Tools offered now.
    pub tools: usize,
    /// Why it failed, or its last error.
    pub error: Option<String>,
    /// `client`, `settings` or `project`.
    pub origin: &'static str,
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
}

/// What a session's servers share.
struct Shared {
    /// Bumped whenever any server's tools change.
    generation: AtomicU64,
    /// Failures not told yet.
    notices: Mutex<Vec<String>>,
}

impl Server {
    /// The name the user gave it.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn set(&self, state: State) {
        if let State::Failed { reason, .. } = &state {
            lock(&self.shared.notices).push(format!("MCP server '{}' failed: {reason}", self.name));
        }
        *lock(&self.state) = state;
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_all();
    }

    fn connect(&self) {
        let Some(spec) = &self.spec else { return };
        let started = Instant::now();
        let state = match conn::connect(spec, &self.setup) {
            Ok((conn, tools)) => {
                log::info!(
                    "MCP server {} ({}, {}, protocol {}) ready in {} ms: {} tools",
                    self.name,
                    spec.transport.kind(),
                    conn.server_info,
                    conn.version,
                    started.elapsed().as_millis(),
                    tools.len()
                );
                State::Ready { conn: Arc::new(conn), tools }
            }
            Err(reason) => State::Failed { reason, last: None },
        };
        if matches!(*lock(&self.state), State::Closed) {
            return; // closed while connecting: `state` (and its connection) drops here
        }
        self.set(state);
    }

    /// Waits until it is no longer connecting, at most until `deadline`.
    fn wait(&self, deadline: Instant) {
        let mut state = lock(&self.state);
        while matches!(*state, State::Connecting) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            state =
                self.changed.wait_timeout(state, left).map_or_else(|e| e.into_inner().0, |r| r.0);
        }
    }

    /// Notices a connection that broke since, and reads a changed tool list again.
    fn check(&self) {
        let (conn, broken) = match &*lock(&self.state) {
            State::Ready { conn, .. } => (Arc::clone(conn), conn.peer.broken()),
            _ => return,
        };
        if let Some(reason) = broken {
            self.broke(reason);
            return;
        }
        if conn.peer.stale.swap(false, Ordering::SeqCst) {
            match conn::list_tools(&conn, self.setup.connect_timeout) {
                Ok(tools) => {
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
                Err(err) => self.broke(format!("reading its changed tool list failed: {err}")),
            }
        }
    }

    /// The connection broke: a stdio server not restarted yet keeps its tools.
    fn broke(&self, reason: String) {
        let last = match &*lock(&self.state) {
            State::Ready { tools, .. } => Some(tools.clone()),
            _ => return,
        };
        let restartable =
            matches!(self.spec.as_ref().map(|s| &s.transport), Some(Transport::Stdio { .. }))
                && !self.restarted.load(Ordering::SeqCst);
        self.set(State::Failed { reason, last: last.filter(|_| restartable) });
    }

    fn offered(&self) -> Vec<RemoteTool> {
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

    fn status(&self) -> Status {
        let transport = self.spec.as_ref().map_or("", |s| s.transport.kind());
        let origin = self.spec.as_ref().map_or("", |s| s.origin.id());
        let (state, tools, error) = match &*lock(&self.state) {
            State::Connecting => ("connecting", 0, None),
            State::Ready { tools, conn } => match conn.peer.broken() {
                Some(reason) => ("failed", 0, Some(reason)),
                None => ("ready", tools.len(), None),
            },
            State::Failed { reason, last } => {
                ("failed", last.as_ref().map_or(0, Vec::len), Some(reason.clone()))
            }
            State::Closed => ("closed", 0, None),
        };
        Status { name: self.name.clone(), transport, state, tools, error, origin }
    }

    fn close(&self) {
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
                self.broke(why.clone());
                Err(ToolError::Model(format!("MCP server '{name}' failed during the call: {why}")))
            }
            Err(CallError::Timeout(after)) => Err(ToolError::Model(format!(
                "MCP server '{name}' gave no answer in {} s; the call was cancelled",
                after.as_secs()
            ))),
        }
    }
}

/// A session's MCP servers.
#[derive(Default)]
pub struct Servers {
    servers: Mutex<Vec<Arc<Server>>>,
    shared: Mutex<Option<Arc<Shared>>>,
    /// The tools built for the last generation seen.
    catalog: Mutex<(u64, Vec<Arc<dyn Tool>>)>,
}

impl Servers {
    /// Starts connecting to `entries` (closing any servers started before). Entries that
    /// could not be read are failed servers from the start.
    pub fn start(&self, entries: Vec<Result<ServerSpec, BadEntry>>, setup: &Setup) {
        self.close();
        self.add(entries, setup);
    }

    /// Starts connecting to more servers, beside those already there.
    pub fn add(&self, entries: Vec<Result<ServerSpec, BadEntry>>, setup: &Setup) {
        let shared = Arc::clone(lock(&self.shared).get_or_insert_with(|| {
            Arc::new(Shared { generation: AtomicU64::new(1), notices: Mutex::default() })
        }));
        let mut servers = Vec::new();
        for entry in entries {
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
                shared: Arc::clone(&shared),
            });
            match state {
                State::Connecting => {
                    let connecting = Arc::clone(&server);
                    let spawned = thread::Builder::new()
                        .name(format!("mcp-connect-{}", crate::text::clip(&server.name, 8)))
                        .spawn(move || connecting.connect());
                    if let Err(err) = spawned {
                        server.set(State::Failed {
                            reason: format!("cannot start: {err}"),
                            last: None,
                        });
                    }
                }
                other => server.set(other),
            }
            servers.push(server);
        }
        lock(&self.servers).extend(servers);
        shared.generation.fetch_add(1, Ordering::SeqCst);
    }

    fn list(&self) -> Vec<Arc<Server>> {
        lock(&self.servers).clone()
    }

    /// Waits (at most `timeout`) for servers still connecting.
    pub fn wait(&self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        for server in self.list() {
            server.wait(deadline);
        }
    }

    /// Whether any server is configured.
    pub fn is_empty(&self) -> bool {
        lock(&self.servers).is_empty()
    }

    /// Every server's state.
    pub fn status(&self) -> Vec<Status> {
        self.list().iter().map(|s| s.status()).collect()
    }

    /// Failures not told yet (each told once).
    pub fn take_notices(&self) -> Vec<String> {
        for server in self.list() {
            server.check();
        }
        match &*lock(&self.shared) {
            Some(shared) => std::mem::take(&mut *lock(&shared.notices)),
            None => Vec::new(),
        }
    }

    /// Ends every connection.
    pub fn close(&self) {
        for server in std::mem::take(&mut *lock(&self.servers)) {
            server.close();
        }
        *lock(&self.catalog) = (0, Vec::new());
    }
}

impl ExternalTools for Servers {
    fn current(&self) -> Vec<Arc<dyn Tool>> {
        let servers = self.list();
        if servers.is_empty() {
            return Vec::new();
        }
        for server in &servers {
            server.check();
        }
        let generation =
            lock(&self.shared).as_ref().map_or(0, |s| s.generation.load(Ordering::SeqCst));
        let mut catalog = lock(&self.catalog);
        if catalog.0 != generation {
            let mut taken = HashSet::new();
            let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
            for server in &servers {
                for remote in server.offered() {
                    let name = tool_name(server.name(), &remote.name, &taken);
                    taken.insert(name.clone());
                    let calls: Arc<dyn Calls> = Arc::clone(server) as Arc<dyn Calls>;
                    tools.push(Arc::new(McpTool::new(name, remote, calls)));
                }
            }
            *catalog = (generation, tools);
        }
        catalog.1.clone()
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.close();
    }
}
