//! What the agent reports while a turn runs. Internal vocabulary: `acp::convert` is the one
//! place these become wire updates.

use std::path::PathBuf;

use serde_json::Value;

pub use crate::tools::PlanStep;
use crate::tools::{FileDiff, Invocation, ToolKind};

/// One thing that happened during a turn.
#[derive(Debug, Clone)]
pub enum AgentEvent {
    /// The user text, reply and reasoning that follow belong to the message with this id
    /// (one per message, journalled with it: a replay sends the same).
    MessageStart(String),
    /// What the user said (only in a replay).
    UserText(String),
    /// A piece of the reply text.
    Text(String),
    /// A piece of reasoning.
    Thought(String),
    /// A tool call was announced (waiting for permission or about to run).
    ToolCall(ToolCallStart),
    /// The tool call started running.
    ToolRunning {
        /// Tool call id.
        id: String,
        /// The sandbox a command runs in (`None` for tools that start no process).
        sandbox: Option<crate::sandbox::Run>,
    },
    /// Live output of a running tool call (replaces the previous progress text).
    ToolProgress {
        /// Tool call id.
        id: String,
        /// The output so far (a bounded tail).
        text: String,
    },
    /// A command's tier changed once its plan was known (a terraform apply).
    ToolTier { id: String, tier: crate::infra::Tier },
    /// The tool call runs in the client's terminal `terminal`.
    ToolTerminal { id: String, terminal: String },
    /// The hooks that ran for the tool call so far, one short line each.
    ToolHooks { id: String, lines: Vec<String> },
    /// The tool call finished.
    ToolDone(ToolCallEnd),
    /// Context use after an LLM call.
    Usage(ContextUsage),
    /// A message for the user that is not part of the model's reply.
    Notice(String),
    /// The plan, whole (from `update_plan`).
    Plan(Vec<PlanStep>),
    /// The session's title was set, or its last change time moved.
    SessionInfo {
        title: Option<String>,
        /// RFC 3339.
        updated_at: Option<String>,
    },
    /// The mode or the model changed by another route than the client's own request.
    Settings(SettingsChange),
    /// The session's slash commands changed (a project's skills were approved): name,
    /// description, input hint of each.
    Commands(Vec<(String, String, Option<String>)>),
}

/// The settings after a change, for the client's selectors.
#[derive(Debug, Clone)]
pub struct SettingsChange {
    /// The mode id now.
    pub mode: String,
    /// Whether the mode is what changed (else the model).
    pub mode_changed: bool,
    /// The model now.
    pub model: String,
    /// Whether thinking is on now.
    pub thinking: bool,
}

/// A tool call as announced.
#[derive(Debug, Clone)]
pub struct ToolCallStart {
    /// Unique id within the session.
    pub id: String,
    pub title: String,
    /// Kind, for the client's icon.
    pub kind: ToolKind,
    /// The arguments.
    pub input: Value,
    /// Paths it touches.
    pub locations: Vec<(PathBuf, Option<u32>)>,
    /// The `agent` tool call this call belongs to, for calls made by a sub-agent.
    pub parent: Option<String>,
    /// A command's tier, as first judged.
    pub tier: Option<crate::infra::Tier>,
}

impl ToolCallStart {
    /// A call of the session's own agent (no parent) with `input`, as `invocation`
    /// describes it (`None`: not described; the tool's name is the title).
    pub fn announced(
        id: String,
        name: &str,
        kind: ToolKind,
        input: Value,
        invocation: Option<&Invocation>,
    ) -> ToolCallStart {
        ToolCallStart {
            id,
            title: invocation.map_or_else(|| name.to_string(), |i| i.title.clone()),
            kind,
            input,
            locations: invocation.map(|i| i.locations.clone()).unwrap_or_default(),
            parent: None,
            tier: invocation.and_then(|i| i.gate.tier),
        }
    }
}

/// The end of a tool call.
#[derive(Debug, Clone)]
pub struct ToolCallEnd {
    /// Tool call id.
    pub id: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// The text the model got.
    pub text: String,
    /// Structured output.
    pub raw: Value,
    /// The file change, for diff views.
    pub diff: Option<FileDiff>,
    /// The client terminal the call ran in, kept in view.
    pub terminal: Option<String>,
    /// The hooks that ran for it, one short line each.
    pub hooks: Vec<String>,
    /// What redaction replaced in what the model and the client got.
    pub redacted: crate::secret::Tally,
}

/// Context window use.
#[derive(Debug, Clone, Copy)]
pub struct ContextUsage {
    /// Tokens in context after the call.
    pub used: u64,
    /// Context window size.
    pub size: u64,
    /// Whether `used` is an estimate (the provider reported no usage).
    pub estimated: bool,
    /// What the session cost so far.
    pub cost: super::Cost,
}

/// A new message id (a UUID).
pub fn new_message_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Receives events; implemented by the session layer.
pub trait EventSink: Send + Sync {
    /// Delivers one event. Must not block for long.
    fn emit(&self, event: AgentEvent);

    /// Delivers a burst of streamed pieces in order, as one hand-off where the sink can.
    /// By default, one `Text` or `Thought` event each.
    fn emit_pieces(&self, pieces: &Pieces) {
        emit_each(self, pieces);
    }
}

/// Delivers `pieces` to `sink` as one `Text` or `Thought` event each.
pub fn emit_each(sink: &(impl EventSink + ?Sized), pieces: &Pieces) {
    for (kind, text) in pieces.iter() {
        sink.emit(match kind {
            PieceKind::Text => AgentEvent::Text(text.to_string()),
            PieceKind::Thought => AgentEvent::Thought(text.to_string()),
        });
    }
}

/// Which stream a piece belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceKind {
    /// The reply (`AgentEvent::Text`).
    Text,
    /// Reasoning (`AgentEvent::Thought`).
    Thought,
}

/// Streamed pieces held to be passed on together: their text one after another in one
/// buffer, used again for the next burst (no allocation per piece).
#[derive(Debug, Default)]
pub struct Pieces {
    text: String,
    spans: Vec<(PieceKind, usize)>,
}

impl Pieces {
    /// Adds a piece.
    pub fn push(&mut self, kind: PieceKind, text: &str) {
        self.text.push_str(text);
        self.spans.push((kind, self.text.len()));
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// How many pieces, and how many bytes of text, it holds.
    pub fn size(&self) -> (usize, usize) {
        (self.spans.len(), self.text.len())
    }

    /// Forgets the pieces, keeping the room.
    pub fn clear(&mut self) {
        self.text.clear();
        self.spans.clear();
    }

    /// The pieces, in order.
    pub fn iter(&self) -> impl Iterator<Item = (PieceKind, &str)> {
        let starts = std::iter::once(0).chain(self.spans.iter().map(|(_, end)| *end));
        starts.zip(&self.spans).map(|(start, (kind, end))| (*kind, &self.text[start..*end]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_keep_their_order_kind_and_text_and_their_room() {
        let mut pieces = Pieces::default();
        assert!(pieces.is_empty());
        pieces.push(PieceKind::Text, "a");
        pieces.push(PieceKind::Thought, "");
        pieces.push(PieceKind::Text, "ñ\n");
        let got: Vec<_> = pieces.iter().collect();
        assert_eq!(
            got,
            [(PieceKind::Text, "a"), (PieceKind::Thought, ""), (PieceKind::Text, "ñ\n")]
        );
        assert_eq!(pieces.size(), (3, 4));
        pieces.clear();
        assert!(pieces.is_empty());
        assert_eq!(pieces.iter().count(), 0);
    }
}
