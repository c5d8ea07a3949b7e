//! Journal records: the versioned on-disk form of a session's history (one JSON object per
//! line), and rebuilding a session from them. Internal types stay free of `Serialize`;
//! these structs are the persisted format and change only with `VERSION`.

use serde::{Deserialize, Serialize};

use crate::history::{ChatMessage, Image, SignedThinking, ToolUse, error_result};

/// The journal format version written by this build.
pub const VERSION: u32 = 1;

/// What a tool call that never finished gets when its session is loaded again.
pub const INTERRUPTED: &str =
    "Session interrupted before the tool call completed (the agent process stopped).";

/// One line of a journal.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Line {
    /// Format version.
    pub v: u32,
    /// When it was written (RFC 3339).
    pub ts: String,
    /// What happened.
    #[serde(flatten)]
    pub record: Record,
}

/// What a journal line records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// Where the session lives: the first record of a journal (and of a fork's part), so
    /// that the metadata can be rebuilt from the journal alone.
    Start {
        /// Working directory.
        cwd: String,
        /// Creation time.
        #[serde(rename = "createdAt")]
        created_at: String,
        /// The session this one was forked from.
        #[serde(default, rename = "forkedFrom", skip_serializing_if = "Option::is_none")]
        forked_from: Option<String>,
    },
    /// A user prompt (flattened to text), with its images.
    User {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageRecord>,
    },
    /// A model reply.
    Assistant {
        text: String,
        /// Reasoning.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        thinking: String,
        /// The reasoning as the provider signed it (Anthropic).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        signed: Vec<SignedRecord>,
        #[serde(default, rename = "toolCalls", skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<CallRecord>,
    },
    ToolResult {
        /// The model's id of the call.
        #[serde(rename = "callId")]
        call_id: String,
        /// What the model got.
        content: String,
        /// Whether it failed.
        #[serde(rename = "isError")]
        is_error: bool,
        /// Images the tool returned.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageRecord>,
    },
    /// The model's context was cut back to its first `len` messages (after a refusal).
    Rewind {
        /// Messages kept.
        len: usize,
    },
    /// `/clear`: the model's context was emptied (the journal keeps everything).
    Clear,
    /// The context was compacted: a summary replaces all but the last `keep` messages.
    Compact {
        /// The summary the model sees.
        summary: String,
        /// Messages kept whole.
        keep: usize,
        /// Estimated tokens before and after.
        before: u64,
        /// Estimated tokens after.
        after: u64,
    },
    /// The permission mode changed.
    Mode {
        mode: String,
    },
    Model {
        model: String,
    },
    /// The title changed (`/rename`).
    Title {
        title: String,
    },
}

/// A signed block of reasoning in a journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignedRecord {
    /// Text, or a redacted block's data.
    pub thinking: String,
    #[serde(default)]
    pub signature: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

/// An image in a journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageRecord {
    pub mime: String,
    /// Base64 data.
    pub data: String,
}

/// A tool call in a journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    pub id: String,
    pub name: String,
    /// Arguments as the model wrote them.
    pub arguments: String,
}

impl Record {
    /// The record of a history message.
    pub fn of(message: &ChatMessage) -> Record {
        match message {
            ChatMessage::User { text, images } => Record::User {
                text: text.clone(),
                images: images
                    .iter()
                    .map(|i| ImageRecord { mime: i.mime.clone(), data: i.data.clone() })
                    .collect(),
            },
            ChatMessage::Assistant { text, thinking, signed, tool_calls } => Record::Assistant {
                text: text.clone(),
                thinking: thinking.clone(),
                signed: signed
                    .iter()
                    .map(|b| SignedRecord {
                        thinking: b.thinking.clone(),
                        signature: b.signature.clone(),
                        redacted: b.redacted,
                    })
                    .collect(),
                tool_calls: tool_calls
                    .iter()
                    .map(|c| CallRecord {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    })
                    .collect(),
            },
            ChatMessage::ToolResult { call_id, content, is_error, images } => Record::ToolResult {
                call_id: call_id.clone(),
                content: content.clone(),
                is_error: *is_error,
                images: images
                    .iter()
                    .map(|i| ImageRecord { mime: i.mime.clone(), data: i.data.clone() })
                    .collect(),
            },
        }
    }

    fn message(&self) -> Option<ChatMessage> {
        Some(match self {
            Record::User { text, images } => ChatMessage::User {
                text: text.clone(),
                images: images
                    .iter()
                    .map(|i| Image { mime: i.mime.clone(), data: i.data.clone() })
                    .collect(),
            },
            Record::Assistant { text, thinking, signed, tool_calls } => ChatMessage::Assistant {
                text: text.clone(),
                thinking: thinking.clone(),
                signed: signed
                    .iter()
                    .map(|b| SignedThinking {
                        thinking: b.thinking.clone(),
                        signature: b.signature.clone(),
                        redacted: b.redacted,
                    })
                    .collect(),
                tool_calls: tool_calls
                    .iter()
                    .map(|c| ToolUse {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    })
                    .collect(),
            },
            Record::ToolResult { call_id, content, is_error, images } => ChatMessage::ToolResult {
                call_id: call_id.clone(),
                content: content.clone(),
                is_error: *is_error,
                images: images
                    .iter()
                    .map(|i| Image { mime: i.mime.clone(), data: i.data.clone() })
                    .collect(),
            },
            Record::Start { .. }
            | Record::Rewind { .. }
            | Record::Clear
            | Record::Compact { .. }
            | Record::Mode { .. }
            | Record::Model { .. }
            | Record::Title { .. } => return None,
        })
    }
}

/// A session rebuilt from its journal.
#[derive(Debug, Default, Clone)]
pub struct Rebuilt {
    /// Every message ever exchanged, in order (what a replay shows).
    pub all: Vec<ChatMessage>,
    /// What the model sees next (after rewinds, clears and compactions).
    pub context: Vec<ChatMessage>,
    /// The last mode set, if any.
    pub mode: Option<String>,
    /// The last model set, if any.
    pub model: Option<String>,
    /// The last title set, if any.
    pub title: Option<String>,
    /// The last `Start` record: cwd, creation time, fork origin.
    pub start: Option<(String, String, Option<String>)>,
}

impl Rebuilt {
    /// A session rebuilt from a journal's bytes (`name` says where, in warnings): its
    /// complete lines only (a torn last line, which a crash can leave, is not read), each
    /// through `apply_line`, blank ones skipped; then mended.
    pub fn from_journal(bytes: &[u8], name: &dyn std::fmt::Display) -> Rebuilt {
        let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let mut rebuilt = Rebuilt::default();
        for (n, line) in bytes[..complete].split(|b| *b == b'\n').enumerate() {
            if !line.iter().all(u8::is_ascii_whitespace) {
                rebuilt.apply_line(line, &format_args!("{name}:{}", n + 1));
            }
        }
        rebuilt.mend();
        rebuilt
    }

    /// Applies one journal line (a JSON `Line`); a line of a newer format or one that
    /// cannot be read is skipped with a warning naming `at`.
    pub fn apply_line(&mut self, bytes: &[u8], at: &dyn std::fmt::Display) {
        match serde_json::from_slice::<Line>(bytes) {
            Ok(line) if line.v <= VERSION => self.apply(&line.record),
            Ok(line) => log::warn!("{at}: format v{} is newer; skipped", line.v),
            Err(err) => log::warn!("{at}: unreadable record skipped: {err}"),
        }
    }

    /// Applies one record.
    pub fn apply(&mut self, record: &Record) {
        if let Some(message) = record.message() {
            self.all.push(message.clone());
            self.context.push(message);
            return;
        }
        match record {
            Record::Rewind { len } => self.context.truncate(*len),
            Record::Clear => self.context.clear(),
            Record::Compact { summary, keep, .. } => {
                let keep = (*keep).min(self.context.len());
                let kept = self.context.split_off(self.context.len() - keep);
                self.context =
                    vec![ChatMessage::User { text: summary.clone(), images: Vec::new() }];
                self.context.extend(kept);
            }
            Record::Mode { mode } => self.mode = Some(mode.clone()),
            Record::Model { model } => self.model = Some(model.clone()),
            Record::Title { title } => self.title = Some(title.clone()),
            Record::Start { cwd, created_at, forked_from } => {
                self.start = Some((cwd.clone(), created_at.clone(), forked_from.clone()));
            }
            Record::User { .. } | Record::Assistant { .. } | Record::ToolResult { .. } => {}
        }
    }

    /// Makes the context well formed after damage (lost or garbage lines): a tool result
    /// without its call is dropped, and a call left unanswered before a later message gets
    /// an error result. Calls of the last assistant message are left to `repairs`.
    pub fn mend(&mut self) {
        let mut out = Vec::with_capacity(self.context.len());
        let mut pending: Vec<String> = Vec::new();
        for message in std::mem::take(&mut self.context) {
            match &message {
                ChatMessage::ToolResult { call_id, .. } => {
                    let Some(at) = pending.iter().position(|p| p == call_id) else { continue };
                    pending.remove(at);
                }
                ChatMessage::User { .. } | ChatMessage::Assistant { .. } => {
                    out.extend(pending.drain(..).map(|id| error_result(id, INTERRUPTED)));
                    if let ChatMessage::Assistant { tool_calls, .. } = &message {
                        pending = tool_calls.iter().map(|c| c.id.clone()).collect();
                    }
                }
            }
            out.push(message);
        }
        self.context = out;
    }

    /// The results a crash left missing: one error result per unanswered tool call of the
    /// last assistant message (to be journalled, so the repair happens once).
    pub fn repairs(&self) -> Vec<Record> {
        let mut probe = self.context.clone();
        let before = probe.len();
        crate::history::close_unanswered(&mut probe, INTERRUPTED);
        probe[before..].iter().map(Record::of).collect()
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
