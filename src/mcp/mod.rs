//! Our MCP client: synchronous, on threads and blocking I/O like the rest of the server (no
//! async runtime). `spec` reads server entries (ACP `mcpServers`, `settings.json`, a
//! project's `.mcp.json`); `stdio`, `http` (Streamable HTTP) and `sse` are the three transports behind one `Link`;
//! `peer` is the JSON-RPC side of a connection; `conn` opens one (version negotiation,
//! tool list); `servers` is one server's state (connecting, ready, failed,
//! closed); `set` is a session's servers and implements `tools::ExternalTools`, through which the agent sees their tools (`tool`), named by
//! `names`. `project` remembers which `.mcp.json` files the user approved.

mod conn;
pub(crate) mod fuzz;
mod http;
mod names;
mod peer;
pub mod project;
mod servers;
mod set;
pub mod spec;
mod sse;
mod stdio;
mod tool;

use std::time::Duration;

pub use conn::{Conn, RemoteTool, Setup, VERSIONS, connect};
pub use names::tool_name;
pub use servers::Status;
pub use set::Servers;
pub use spec::{BadEntry, Origin, ServerSpec, Transport};

/// The setup for connections of a session in `cwd`.
pub fn setup(
    cwd: &std::path::Path,
    connect_timeout: Duration,
    call_timeout: Duration,
    tls: Option<&ureq::tls::TlsConfig>,
) -> Setup {
    Setup {
        cwd: cwd.to_path_buf(),
        connect_timeout,
        call_timeout,
        agent: http::agent(tls, call_timeout),
    }
}

/// The entries of a session: the client's first, then the settings' and the project's
/// whose names the client did not take.
pub fn merge(layers: Vec<Vec<Result<ServerSpec, BadEntry>>>) -> Vec<Result<ServerSpec, BadEntry>> {
    let mut names = std::collections::HashSet::new();
    let mut out = Vec::new();
    for layer in layers {
        for entry in layer {
            let name = match &entry {
                Ok(spec) => spec.name.clone(),
                Err(bad) => bad.name.clone(),
            };
            if names.insert(name.clone()) {
                out.push(entry);
            } else {
                log::info!("MCP server '{name}' is configured twice; the first entry wins");
            }
        }
    }
    out
}
