//! Settings that are policies rather than provider details: what `web_fetch` may do with
//! public hosts, whether tools use what the client offers, and how many bytes of MCP tool
//! definitions a session offers the model.

use super::Env;
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
