//! Session method params and results: new, prompt, cancel/close, list, modes, config options.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::session::SessionId;

/// `session/new` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSessionRequest {
    /// Absolute working directory.
    pub cwd: String,
    /// Further workspace roots (absolute, existing directories).
    #[serde(default)]
    pub additional_directories: Option<Vec<String>>,
    /// MCP servers to connect for this session (read by `mcp::spec`, entry by entry: one
    /// that cannot be used is reported, not refused).
    #[serde(default)]
    pub mcp_servers: Vec<Value>,
}

/// `session/new` result.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSessionResponse {
    /// The new session's id (new and fork; absent for load and resume).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Modes (legacy API, kept in step with `configOptions`).
    pub modes: SessionModeState,
    /// Mode and model selectors.
    pub config_options: Vec<SessionConfigOption>,
    /// Models (the seed's legacy object).
    pub models: SessionModelState,
    /// `{"iacCode": {"mcpServers": [{name, transport, status, tools, error}]}}` when the
    /// session has MCP servers.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// Current and available modes.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionModeState {
    pub current_mode_id: String,
    pub available_modes: Vec<SessionMode>,
}

/// One mode.
#[derive(Debug, Serialize)]
pub struct SessionMode {
    pub id: String,
    pub name: String,
    pub description: String,
}

/// A configuration option: a select, or a boolean (only to a client that takes them).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionConfigOption {
    /// Option id (`mode`, `model`, `thinking`).
    pub id: String,
    pub name: String,
    pub description: String,
    /// Category (`mode`, `model`, `thought_level`).
    pub category: String,
    /// `select` or `boolean`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// A value id (select) or a boolean.
    pub current_value: Value,
    /// A select's choices (none for a boolean).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<SessionConfigSelectOption>>,
}

/// One choice of a select option.
#[derive(Debug, Serialize)]
pub struct SessionConfigSelectOption {
    pub value: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The seed's legacy `models` object.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionModelState {
    pub current_model_id: String,
    pub available_models: Vec<ModelInfo>,
}

/// One model.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// Model id.
    pub model_id: String,
    pub name: String,
    pub description: String,
}

/// Params that only name a session (`session/cancel`, `session/close`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionIdParams {
    pub session_id: SessionId,
}

/// `session/prompt` params; content blocks are decoded one by one, leniently.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptRequest {
    pub session_id: SessionId,
    /// Content blocks.
    pub prompt: Vec<Value>,
}

/// `session/prompt` result.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptResponse {
    /// Why the turn ended.
    pub stop_reason: &'static str,
    /// Tokens over the whole turn (unstable ACP field).
    pub usage: Usage,
    /// Extension data, e.g. that usage was estimated.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// Token usage of a turn.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Every token: input (read at full price, read from and written to the cache) and
    /// output.
    pub total_tokens: u64,
    /// Input read at full price (neither from nor into the provider's cache).
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of the output, reasoning (when the provider says).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thought_tokens: Option<u64>,
    /// Input read from the provider's cache.
    pub cached_read_tokens: u64,
    /// Input written to the provider's cache.
    pub cached_write_tokens: u64,
}

/// `session/list` params.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSessionsRequest {
    /// Only sessions in this cwd.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Paging cursor from a previous answer.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// `session/list` result.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSessionsResponse {
    /// One page of sessions.
    pub sessions: Vec<SessionInfo>,
    /// Cursor for the next page, absent at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// One listed session.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    pub session_id: String,
    pub cwd: String,
    /// Its additional directories (none: omitted).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub additional_directories: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Last change (RFC 3339).
    pub updated_at: String,
    /// Extension data (`messageCount`).
    #[serde(rename = "_meta")]
    pub meta: Value,
}

/// `session/set_mode` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetSessionModeRequest {
    pub session_id: SessionId,
    /// The new mode.
    pub mode_id: String,
}

/// `session/set_config_option` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetSessionConfigOptionRequest {
    pub session_id: SessionId,
    /// Which option.
    pub config_id: String,
    /// The value id (a string, for a select) or a boolean (sent with `type: "boolean"`).
    pub value: Value,
}

/// `session/set_config_option` result: the complete option list.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetSessionConfigOptionResponse {
    /// Every option, with current values.
    pub config_options: Vec<SessionConfigOption>,
}

/// `session/set_model` params (legacy).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetSessionModelRequest {
    pub session_id: SessionId,
    /// The model.
    pub model_id: String,
}

/// `session/load`, `session/resume` and `session/fork` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadSessionRequest {
    pub session_id: SessionId,
    /// Absolute working directory.
    pub cwd: String,
    /// The whole list of further workspace roots from now on; absent: the journalled ones
    /// stay (an empty list clears them).
    #[serde(default)]
    pub additional_directories: Option<Vec<String>>,
    /// MCP servers to connect for this session (read by `mcp::spec`, entry by entry: one
    /// that cannot be used is reported, not refused).
    #[serde(default)]
    pub mcp_servers: Vec<Value>,
}
