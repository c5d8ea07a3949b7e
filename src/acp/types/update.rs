//! `session/update` notifications and `session/request_permission`: content blocks, tool
//! calls, usage.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::text::Title;

/// A title goes on the wire as its text.
impl Serialize for Title {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// `session/update` params.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionNotification<'a> {
    pub session_id: &'a str,
    /// What happened.
    pub update: SessionUpdate,
}

/// The update variants we send.
#[derive(Debug, Serialize)]
#[serde(tag = "sessionUpdate", rename_all = "snake_case")]
pub enum SessionUpdate {
    /// User text (replayed history).
    #[serde(rename_all = "camelCase")]
    UserMessageChunk {
        /// The chunk.
        content: ContentBlock,
        /// The message it belongs to (the same on every chunk of it).
        #[serde(skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
    },
    /// Reply text.
    #[serde(rename_all = "camelCase")]
    AgentMessageChunk {
        /// The chunk.
        content: ContentBlock,
        /// The message it belongs to (the same on every chunk of it).
        #[serde(skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
    },
    /// Reasoning.
    #[serde(rename_all = "camelCase")]
    AgentThoughtChunk {
        /// The chunk.
        content: ContentBlock,
        /// The message it belongs to (the same on every chunk of it).
        #[serde(skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
    },
    /// A new tool call.
    #[serde(rename_all = "camelCase")]
    ToolCall {
        /// Id, unique in the session.
        tool_call_id: String,
        /// Only a sanitised `Title` can be sent.
        title: Title,
        kind: ToolKind,
        status: ToolCallStatus,
        /// Arguments.
        raw_input: Value,
        /// Paths touched.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        locations: Vec<ToolCallLocation>,
        /// Extension data (`iacCode.parentToolCallId` for a sub-agent's calls).
        #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    /// A change to a tool call.
    #[serde(rename_all = "camelCase")]
    ToolCallUpdate {
        tool_call_id: String,
        /// New status, if it changed.
        #[serde(skip_serializing_if = "Option::is_none")]
        status: Option<ToolCallStatus>,
        /// New content (replaces the old).
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<Vec<ToolCallContent>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        raw_output: Option<Value>,
        #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    /// The slash commands the session understands.
    #[serde(rename_all = "camelCase")]
    AvailableCommandsUpdate { available_commands: Vec<AvailableCommand> },
    /// The agent's plan: always the whole list (the client replaces what it had).
    Plan { entries: Vec<PlanEntry> },
    /// The mode changed by another route than the client's request.
    #[serde(rename_all = "camelCase")]
    CurrentModeUpdate { current_mode_id: String },
    /// The config options changed by another route than the client's request (the whole
    /// list).
    #[serde(rename_all = "camelCase")]
    ConfigOptionUpdate { config_options: Vec<super::session::SessionConfigOption> },
    /// The session's title or last change time.
    #[serde(rename_all = "camelCase")]
    SessionInfoUpdate {
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        updated_at: Option<String>,
        /// `iacCode.turnEnded`: how a turn that no request waits for ended (one started
        /// by `_session/steering`).
        #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    /// Context use.
    UsageUpdate {
        /// Tokens in context.
        used: u64,
        /// Context window.
        size: u64,
        /// What the session cost so far, when every price is known.
        #[serde(skip_serializing_if = "Option::is_none")]
        cost: Option<Cost>,
        /// Extension data.
        #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
}

/// A cumulative cost.
#[derive(Debug, Serialize)]
pub struct Cost {
    /// In units of the currency.
    pub amount: f64,
    /// ISO 4217.
    pub currency: String,
}

/// One entry of a plan.
#[derive(Debug, Serialize)]
pub struct PlanEntry {
    /// What to do.
    pub content: String,
    /// `high`, `medium` or `low`.
    pub priority: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
}

/// A slash command.
#[derive(Debug, Serialize)]
pub struct AvailableCommand {
    /// Name, without the slash.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its input, if it takes one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<CommandInput>,
}

/// The input hint of a command.
#[derive(Debug, Serialize)]
pub struct CommandInput {
    /// Shown to the user.
    pub hint: String,
}

/// A content block (we only send text).
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text { text: String },
}

/// ACP tool kinds.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    Read,
    Edit,
    Search,
    Execute,
    Fetch,
    Think,
    SwitchMode,
    Other,
}

/// Tool call status.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// Announced, not running (e.g. waiting for permission).
    Pending,
    /// Running.
    InProgress,
    /// Done.
    Completed,
    /// Failed or not run.
    Failed,
}

/// A path a tool call touches.
#[derive(Debug, Serialize)]
pub struct ToolCallLocation {
    pub path: String,
    /// Line, 1-based.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// Tool call content.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolCallContent {
    Content {
        /// The block.
        content: ContentBlock,
    },
    /// A file change.
    #[serde(rename_all = "camelCase")]
    Diff {
        path: String,
        /// Old text; absent for a new file.
        #[serde(skip_serializing_if = "Option::is_none")]
        old_text: Option<String>,
        new_text: String,
    },
    /// A client terminal, shown live by the client.
    #[serde(rename_all = "camelCase")]
    Terminal { terminal_id: String },
}

/// `session/request_permission` params.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPermissionRequest<'a> {
    pub session_id: &'a str,
    /// The call in question (already announced).
    pub tool_call: PermissionToolCall,
    /// Choices.
    pub options: Vec<PermissionOption>,
}

/// The tool call inside a permission request (a ToolCallUpdate).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionToolCall {
    /// Id of the announced call.
    pub tool_call_id: String,
    /// Only a sanitised `Title` can be sent.
    pub title: Title,
    pub kind: ToolKind,
    pub status: ToolCallStatus,
    /// Arguments.
    pub raw_input: Value,
    /// Paths.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<ToolCallLocation>,
    /// What to read before answering (a plan's summary, what a command acts on).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<ToolCallContent>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// One choice.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionOption {
    /// Id (we use the kind's name).
    pub option_id: &'static str,
    /// Label.
    pub name: Title,
    pub kind: &'static str,
}

/// `session/request_permission` result.
#[derive(Debug, Deserialize)]
pub struct RequestPermissionResponse {
    pub outcome: PermissionOutcome,
}

/// Selected or cancelled.
#[derive(Debug, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PermissionOutcome {
    /// The user picked an option.
    #[serde(rename_all = "camelCase")]
    Selected {
        /// Which.
        option_id: String,
    },
    /// The question was cancelled.
    Cancelled,
}
