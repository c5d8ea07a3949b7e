//! `elicitation/create` (form mode, scoped to a session and a tool call) and its answer.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `elicitation/create` params: a form about one tool call of a session.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateElicitationRequest<'a> {
    pub session_id: &'a str,
    pub tool_call_id: &'a str,
    /// Always `form`.
    pub mode: &'static str,
    /// What the user reads.
    pub message: &'a str,
    /// The form's fields (an object of primitive properties).
    pub requested_schema: &'a Value,
}

/// `elicitation/create` result: `accept` (with `content`), `decline`, `cancel`, or an
/// action of a later version.
#[derive(Debug, Deserialize)]
pub struct CreateElicitationResponse {
    pub action: String,
    /// What the user entered (with `accept`).
    #[serde(default)]
    pub content: Option<Map<String, Value>>,
}
