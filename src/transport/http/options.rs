//! What the HTTP transport is told from outside: where to listen, the token, its flags
//! (`HttpArgs`, filled by the command line), and the ACP side as two traits: a factory of
//! per-connection engines and a check of which session streams a connection may open. The
//! transport itself knows no ACP, no sessions and no command line.

use crossbeam_channel::Receiver;

use crate::jsonrpc::{Inbound, Outbox};

/// What `serve` needs to know.
pub struct Options {
    /// Address to bind.
    pub host: String,
    /// Port (0 picks one).
    pub port: u16,
    /// Required bearer token.
    pub token: Option<String>,
    /// Flags.
    pub args: HttpArgs,
}

/// Flags of the HTTP transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpArgs {
    /// `--allow-insecure-remote`.
    pub allow_insecure_remote: bool,
    /// `--allowed-origin`, repeatable.
    pub allowed_origins: Vec<String>,
    /// `--allowed-host`, repeatable.
    pub allowed_hosts: Vec<String>,
    /// `--max-connections`.
    pub max_connections: usize,
    /// `--max-body`.
    pub max_body: u64,
    /// `--idle-timeout`, seconds.
    pub idle_timeout: u64,
    /// `--sse-buffer`.
    pub sse_buffer: usize,
    /// `--request-timeout`, seconds.
    pub request_timeout: u64,
    /// Serve the web client at `/` (off with `--no-web`).
    pub web: bool,
}

impl Default for HttpArgs {
    fn default() -> HttpArgs {
        HttpArgs {
            allow_insecure_remote: false,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_connections: 2048,
            max_body: 16 << 20,
            idle_timeout: 1800,
            sse_buffer: 8 << 20,
            request_timeout: 30,
            web: true,
        }
    }
}

/// The protocol side of one ACP connection.
pub trait Engine: Send {
    /// Identifies this engine among the live ones (which one holds a session).
    fn owner(&self) -> u64;
    /// Handles inbound messages until the channel closes, then stops its work (bounded).
    fn run(&mut self, inbox: &Receiver<Inbound>, outbox: &Outbox);
}

/// What the HTTP server needs from the ACP side.
pub trait Engines: Send + Sync {
    /// The engine of a new connection.
    fn start(&self) -> Box<dyn Engine>;
    /// The session named `raw` (an `Acp-Session-Id`): its canonical id and whether
    /// connection `owner` holds it, or the HTTP status and why not (a malformed id). A
    /// session in any other state (unknown, held elsewhere, not loaded yet) gets its stream:
    /// a client opens it before `session/load` and reads that POST's answer there.
    fn session_scope(&self, raw: &str, owner: u64) -> Result<(String, bool), (u16, String)>;
    /// `GET /health`: whether this node can serve (its session store answers), as a
    /// status (200 or 503) and a JSON body: with `full` (the caller holds the token, or
    /// none is needed) everything, else only what a balancer needs (the status, the node's
    /// name when the operator gave one), never the host name or the pid.
    fn health(&self, _full: bool) -> (u16, String) {
        (200, r#"{"status":"ok"}"#.to_string())
    }
}
