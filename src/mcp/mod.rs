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
mod logs;
mod names;
mod peer;
pub mod project;
mod reach;
mod servers;
mod set;
pub mod spec;
mod sse;
mod stdio;
mod tool;

use std::time::Duration;

use crate::config::ClientMcp;

pub use conn::{
    Conn, DEFAULT_TOOLS_MAX_BYTES, MAX_TOOL_NAME, RemoteTool, Setup, VERSIONS, connect,
};
pub use names::tool_name;
pub use servers::{Phase, Status};
pub use set::Servers;
pub use spec::{BadEntry, Origin, ServerSpec, Transport, TransportKind};

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
        client_internal: true,
        approvals: None,
        tools_max_bytes: conn::DEFAULT_TOOLS_MAX_BYTES,
    }
}

/// A client's `mcpServers` as this node takes them (`IAC_CODE_CLIENT_MCP`): under `http`
/// a program to start is an entry refused on its own, under `none` every entry is.
pub fn from_client(
    entries: &serde_json::Value,
    policy: ClientMcp,
) -> Vec<Result<ServerSpec, BadEntry>> {
    let refuse = |name: String, why: &str| BadEntry {
        name,
        reason: format!(
            "refused: {why} (IAC_CODE_CLIENT_MCP={}); the node's operator may allow it \
             (IAC_CODE_CLIENT_MCP, clientMcp in settings.json) or configure the server in \
             settings.json",
            policy.name()
        ),
    };
    let programs = "this node does not start programs a client names; a client's MCP \
                    servers must be reached by URL (http or sse)";
    spec::parse_servers(entries, Origin::Client)
        .into_iter()
        .map(|entry| match (entry, policy) {
            (Ok(spec), ClientMcp::None) => {
                Err(refuse(spec.name, "this node takes no MCP servers from its clients"))
            }
            (Err(bad), ClientMcp::None) => {
                Err(refuse(bad.name, "this node takes no MCP servers from its clients"))
            }
            (Ok(spec), ClientMcp::Http) if matches!(spec.transport, Transport::Stdio { .. }) => {
                Err(refuse(spec.name, programs))
            }
            (entry, _) => entry,
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clients_entries_are_taken_as_the_node_allows() {
        let entries = serde_json::json!([{"name": "run", "command": "/bin/true"},
            {"name": "web", "type": "http", "url": "https://h/mcp"}]);
        let kept = |policy| -> Vec<String> {
            let out = from_client(&entries, policy);
            out.iter()
                .map(|e| match e {
                    Ok(spec) => format!("{} ok", spec.name),
                    Err(bad) => format!("{} {}", bad.name, bad.reason),
                })
                .collect()
        };
        assert_eq!(kept(ClientMcp::Stdio), ["run ok", "web ok"]);
        let http = kept(ClientMcp::Http);
        assert!(http[0].starts_with("run refused: this node does not start programs"), "{http:?}");
        assert!(http[0].contains("IAC_CODE_CLIENT_MCP=http"), "{http:?}");
        assert_eq!(http[1], "web ok");
        let none = kept(ClientMcp::None);
        assert!(none.iter().all(|e| e.contains("IAC_CODE_CLIENT_MCP=none")), "{none:?}");
    }
}
