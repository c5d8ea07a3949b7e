//! ACP wire types, named as in the official schema, camelCase on the wire. Inbound types
//! are lenient (unknown fields ignored); outbound types are built, never hand-written JSON.

mod auth;
mod elicit;
mod session;
mod steering;
mod update;

pub use auth::*;
pub use elicit::*;
pub use session::*;
pub use steering::*;
pub use update::*;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `{}`: the empty result, and the value of capability objects.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Empty {}

/// `initialize` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeRequest {
    /// The client's protocol version: a number, or (from some clients in the wild) a
    /// string.
    pub protocol_version: Value,
    /// What the client can do.
    #[serde(default)]
    pub client_capabilities: Value,
    /// Who the client is.
    #[serde(default)]
    pub client_info: Option<Value>,
}

/// `initialize` result.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResponse {
    pub protocol_version: u16,
    /// What we can do.
    pub agent_capabilities: AgentCapabilities,
    /// Who we are.
    pub agent_info: Implementation,
    /// How a client signs in (`acp/auth.rs`).
    pub auth_methods: Vec<AuthMethod>,
    /// Extensions: `steering.supported` (`_session/steering`).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// Our capabilities; only what works is advertised.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// `session/load`.
    pub load_session: bool,
    /// Prompt content we accept.
    pub prompt_capabilities: PromptCapabilities,
    /// MCP transports we connect to.
    pub mcp_capabilities: McpCapabilities,
    /// Optional session methods.
    pub session_capabilities: SessionCapabilities,
    /// `logout`.
    pub auth: AgentAuthCapabilities,
}

/// Prompt content capabilities.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptCapabilities {
    /// Images (degraded to a marker when false).
    pub image: bool,
    /// Audio (degraded to a marker when false).
    pub audio: bool,
    pub embedded_context: bool,
}

/// MCP capabilities.
#[derive(Debug, Serialize)]
pub struct McpCapabilities {
    /// HTTP MCP servers.
    pub http: bool,
    /// SSE MCP servers.
    pub sse: bool,
}

/// Optional session methods (`{}` = supported).
#[derive(Debug, Serialize)]
pub struct SessionCapabilities {
    /// `session/list`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list: Option<Empty>,
    /// `session/close`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close: Option<Empty>,
    /// `session/resume`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume: Option<Empty>,
    /// `session/fork` (unstable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fork: Option<Empty>,
    /// `session/delete`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delete: Option<Empty>,
    /// `additionalDirectories` on new, load, resume and fork, and in `session/list`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(rename = "additionalDirectories")]
    pub additional_directories: Option<Empty>,
}

/// Name and version.
#[derive(Debug, Serialize)]
pub struct Implementation {
    pub name: &'static str,
    /// Display name.
    pub title: &'static str,
    pub version: &'static str,
}
