//! A session's set of MCP servers (`Servers`): started, added to, waited for, shown,
//! closed; their failures told once; and their tools offered together, under unique names
//! that stay the same while nothing changes (`tools::ExternalTools`).

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::conn::Setup;
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
        let shared = Arc::clone(lock(&self.shared).get_or_insert_with(Shared::new));
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
        // Taken out first: closing may wait on a server, and nobody else must wait for that.
        let servers = std::mem::take(&mut *lock(&self.servers));
        for server in servers {
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
