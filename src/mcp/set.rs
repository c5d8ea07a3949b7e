//! A session's set of MCP servers (`Servers`): started, added to, waited for, shown,
//! closed; their failures told once; and their tools offered together, under unique names
//! that stay the same while nothing changes (`tools::ExternalTools`). Their definitions go
//! with every LLM request, so together they get at most `Setup::tools_max_bytes`: the tools
//! that do not fit are left out, in the log and in `/mcp` (`Status::left_out`).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::conn::{DEFAULT_TOOLS_MAX_BYTES, Setup};
use super::names::tool_name;
use super::servers::{Server, Shared, Status};
use super::spec::{BadEntry, ServerSpec};
use super::tool::{Calls, McpTool};
use crate::sync::lock;
use crate::tools::{ExternalTools, Tool};

/// A session's MCP servers.
#[derive(Default)]
pub struct Servers {
    servers: Mutex<Vec<Arc<Server>>>,
    shared: Mutex<Option<Arc<Shared>>>,
    /// The tools built for the last generation seen.
    catalog: Mutex<Catalog>,
    /// Bytes of tool definitions offered at most (`Setup::tools_max_bytes`).
    budget: Mutex<Option<usize>>,
}

/// The tools offered for one generation of the servers' tool lists.
#[derive(Default)]
struct Catalog {
    generation: u64,
    tools: Vec<Arc<dyn Tool>>,
    /// Per server, how many of its tools are not offered (the budget), and why.
    left_out: HashMap<String, (usize, String)>,
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
        let shared = Arc::clone(lock(&self.shared).get_or_insert_with(Shared::new));
        *lock(&self.budget) = Some(setup.tools_max_bytes);
        let mut servers = Vec::new();
        for entry in entries {
            servers.push(Server::start(entry, setup, &shared));
        }
        lock(&self.servers).extend(servers);
        shared.generation.fetch_add(1, Ordering::SeqCst);
    }

    fn list(&self) -> Vec<Arc<Server>> {
        lock(&self.servers).clone()
    }

    /// Waits (at most `timeout`) for servers still connecting.
    pub fn wait(&self, timeout: Duration) {
        self.wait_unless(timeout, &|| false);
    }

    /// Waits as `wait` does, or until `stop` says to (a turn being cancelled).
    pub fn wait_unless(&self, timeout: Duration, stop: &dyn Fn() -> bool) {
        let deadline = Instant::now() + timeout;
        for server in self.list() {
            server.wait(deadline, stop);
        }
    }

    /// Whether any server is configured.
    pub fn is_empty(&self) -> bool {
        lock(&self.servers).is_empty()
    }

    /// Every server's state, with what the budget left out of the tools offered now.
    pub fn status(&self) -> Vec<Status> {
        self.current();
        let left_out = lock(&self.catalog).left_out.clone();
        let mut all: Vec<Status> = self.list().iter().map(|s| s.status()).collect();
        for status in &mut all {
            if let Some((count, why)) = left_out.get(&status.name) {
                status.tools = status.tools.saturating_sub(*count);
                status.left_out.push(why.clone());
            }
        }
        all
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
        // Taken out first: closing may wait on a server, and nobody else must wait for that.
        let servers = std::mem::take(&mut *lock(&self.servers));
        for server in servers {
            server.close();
        }
        *lock(&self.catalog) = Catalog::default();
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
        let budget = lock(&self.budget).unwrap_or(DEFAULT_TOOLS_MAX_BYTES);
        let mut catalog = lock(&self.catalog);
        if catalog.generation != generation {
            *catalog = build(&servers, generation, budget);
        }
        catalog.tools.clone()
    }
}

/// The tools of `servers`, in order, as long as their definitions fit in `budget` bytes
/// (a tool that does not fit is left out; a smaller one after it may still fit).
fn build(servers: &[Arc<Server>], generation: u64, budget: usize) -> Catalog {
    let mut taken = HashSet::new();
    let mut catalog = Catalog { generation, ..Catalog::default() };
    let mut used = 0usize;
    for server in servers {
        let mut left: Vec<String> = Vec::new();
        for remote in server.offered() {
            let name = tool_name(server.name(), &remote.name, &taken);
            taken.insert(name.clone());
            let calls: Arc<dyn Calls> = Arc::clone(server) as Arc<dyn Calls>;
            let tool = McpTool::new(name, remote, calls);
            let size = tool.name.len() + tool.description().len() + tool.schema().to_string().len();
            if used + size > budget {
                left.push(format!("{} ({} KiB)", tool.name, size.div_ceil(1024)));
                continue;
            }
            used += size;
            catalog.tools.push(Arc::new(tool));
        }
        if !left.is_empty() {
            let why = format!(
                "{} tool(s) whose definitions did not fit in the {} KiB a session gives MCP \
                 tool definitions (IAC_CODE_MCP_TOOLS_MAX_BYTES): {}",
                left.len(),
                budget >> 10,
                crate::text::middle_cut(&left.join(", "), 1000)
            );
            log::warn!("MCP server {}: left out {why}", server.name());
            catalog.left_out.insert(server.name().to_string(), (left.len(), why));
        }
    }
    catalog
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.close();
    }
}
