//! `_session/steering` (the extension claude-agent-acp and codex-acp implement): a message
//! for the session's running turn, or a new turn.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::session::SessionId;

/// `_session/steering` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SteeringRequest {
    pub session_id: SessionId,
    /// Content blocks, or (leniently) a string.
    pub prompt: Value,
    /// `{"steering": {"idleBehavior": "promptRequired"}}` asks for no new turn.
    #[serde(default, rename = "_meta")]
    pub meta: Option<Value>,
}

/// `_session/steering` result.
#[derive(Debug, Serialize)]
pub struct SteeringResponse {
    /// `injected`, `startedNewTurn`, `promptRequired` or `failed`.
    pub outcome: &'static str,
    /// Why, for `failed` and `promptRequired`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
