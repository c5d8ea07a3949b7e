//! Settings that are policies rather than provider details: what `web_fetch` may do with
//! public hosts, whether tools use what the client offers, which MCP servers a client may
//! have the node start, whether a client's MCP URLs may reach internal addresses, and how
//! many bytes of MCP tool definitions a session offers the model.

use super::{Env, McpConfig};
use crate::error::{Error, Result};

/// The `web_fetch` policy for public hosts (internal addresses always ask, or are refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebFetch {
    /// Fetch without asking (the default: fetching is read-only).
    Allow,
    /// The first fetch of each host asks; "always" remembers the host for the session.
    Ask,
    /// Never fetch.
    Deny,
}

impl WebFetch {
    /// Every value, as written in settings.
    pub const NAMES: [&str; 3] = ["allow", "ask", "deny"];

    /// Parses a setting.
    pub fn parse(text: &str) -> Option<WebFetch> {
        match text.trim().to_ascii_lowercase().as_str() {
            "allow" => Some(WebFetch::Allow),
            "ask" => Some(WebFetch::Ask),
            "deny" => Some(WebFetch::Deny),
            _ => None,
        }
    }

    /// The setting's name.
    pub fn name(self) -> &'static str {
        match self {
            WebFetch::Allow => "allow",
            WebFetch::Ask => "ask",
            WebFetch::Deny => "deny",
        }
    }
}

pub(super) fn web_fetch(env: &dyn Env) -> Result<WebFetch> {
    match env.get("IAC_CODE_WEB_FETCH") {
        None => Ok(WebFetch::Allow),
        Some(text) => WebFetch::parse(&text).ok_or_else(|| {
            Error::Config(format!(
                "IAC_CODE_WEB_FETCH (webFetch) must be one of {}, not '{text}'",
                WebFetch::NAMES.join(", ")
            ))
        }),
    }
}

/// `IAC_CODE_CLIENT_TOOLS` (`clientTools`): `auto` (the default: use the client's files and
/// terminals when it offers them) or `off`.
pub(super) fn client_tools(env: &dyn Env) -> Result<bool> {
    let value = env.get("IAC_CODE_CLIENT_TOOLS").map(|v| v.trim().to_ascii_lowercase());
    match value.as_deref() {
        None | Some("auto") => Ok(true),
        Some("off") => Ok(false),
        Some(other) => Err(Error::Config(format!(
            "IAC_CODE_CLIENT_TOOLS (clientTools) must be auto or off, not '{other}'"
        ))),
    }
}

/// Which MCP servers a client's `mcpServers` may have the node start
/// (`IAC_CODE_CLIENT_MCP`, `clientMcp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientMcp {
    /// Any: programs too (the default over stdio, where the client already runs us).
    Stdio,
    /// Only servers reached by URL (`http`, `sse`): the default over HTTP.
    Http,
    /// None of a client's entries.
    None,
}

impl ClientMcp {
    /// The setting's name.
    pub fn name(self) -> &'static str {
        match self {
            ClientMcp::Stdio => "stdio",
            ClientMcp::Http => "http",
            ClientMcp::None => "none",
        }
    }
}

pub(super) fn client_mcp(env: &dyn Env) -> Result<Option<ClientMcp>> {
    let value = env.get("IAC_CODE_CLIENT_MCP").map(|v| v.trim().to_ascii_lowercase());
    match value.as_deref() {
        None => Ok(None),
        Some("stdio") => Ok(Some(ClientMcp::Stdio)),
        Some("http") => Ok(Some(ClientMcp::Http)),
        Some("none") => Ok(Some(ClientMcp::None)),
        Some(other) => Err(Error::Config(format!(
            "IAC_CODE_CLIENT_MCP (clientMcp) must be stdio, http or none, not '{other}'"
        ))),
    }
}

/// `IAC_CODE_MCP_INTERNAL` (`mcpInternal`): `allow` lets a client's MCP URLs reach
/// internal addresses, `deny` refuses them; `None`: not set (the transport decides).
pub(super) fn mcp_internal(env: &dyn Env) -> Result<Option<bool>> {
    let value = env.get("IAC_CODE_MCP_INTERNAL").map(|v| v.trim().to_ascii_lowercase());
    match value.as_deref() {
        None => Ok(None),
        Some("allow") => Ok(Some(true)),
        Some("deny") => Ok(Some(false)),
        Some(other) => Err(Error::Config(format!(
            "IAC_CODE_MCP_INTERNAL (mcpInternal) must be allow or deny, not '{other}'"
        ))),
    }
}

impl McpConfig {
    /// Serving ACP over HTTP: what is not set defaults to what a token holder may be
    /// given (servers reached by URL only, and no internal address).
    pub fn over_http(&mut self) {
        self.client.get_or_insert(ClientMcp::Http);
        self.internal.get_or_insert(false);
    }

    /// Which of a client's entries the node starts (over stdio, by default, all: the
    /// client already runs us).
    pub fn client_mcp(&self) -> ClientMcp {
        self.client.unwrap_or(ClientMcp::Stdio)
    }

    /// Whether a client's MCP URLs may reach internal addresses (over stdio, by default,
    /// yes: the client already runs us, and may have us run any program).
    pub fn client_internal(&self) -> bool {
        self.internal.unwrap_or(true)
    }
}

/// `McpConfig::tools_max_bytes` unless configured.
pub const MCP_TOOLS_MAX_BYTES: usize = 256 << 10;

/// `IAC_CODE_MCP_TOOLS_MAX_BYTES` (`mcpToolsMaxBytes`): bytes of MCP tool definitions a
/// session offers the model together, 0 to 64 MiB.
pub(super) fn mcp_tools_max_bytes(env: &dyn Env) -> Result<usize> {
    let max = super::number(
        env,
        "IAC_CODE_MCP_TOOLS_MAX_BYTES",
        MCP_TOOLS_MAX_BYTES as u64,
        0,
        64 << 20,
    )?;
    Ok(max as usize)
}
