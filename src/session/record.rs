//! Journal records: the versioned on-disk form of a session's history (one JSON object per
//! line), and rebuilding a session from them. Internal types stay free of `Serialize`;
//! these structs are the persisted format and change only with `VERSION`.

use serde::{Deserialize, Serialize};

use crate::agent::history::{ChatMessage, Image, ToolCallRecord};

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
        /// The text.
        text: String,
        /// Attached images.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageRecord>,
    },
    /// A model reply.
    Assistant {
        /// Visible text.
        text: String,
        /// Reasoning.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        thinking: String,
        /// The reasoning's signature (Anthropic).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        signature: String,
        /// Tool calls.
        #[serde(default, rename = "toolCalls", skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<CallRecord>,
    },
    /// A tool result.
    ToolResult {
        /// The model's id of the call.
        #[serde(rename = "callId")]
        call_id: String,
        /// What the model got.
        content: String,
        /// Whether it failed.
        #[serde(rename = "isError")]
        is_error: bool,
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
        /// Mode id.
        mode: String,
    },
    /// The model changed.
    Model {
        /// Model id.
        model: String,
    },
    /// The title changed (`/rename`).
    Title {
        /// The new title.
        title: String,
    },
}

/// An image in a journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageRecord {
    /// MIME type.
    pub mime: String,
    /// Base64 data.
    pub data: String,
}

/// A tool call in a journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// The model's id.
    pub id: String,
    /// Tool name.
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
            ChatMessage::Assistant { text, thinking, signature, tool_calls } => Record::Assistant {
                text: text.clone(),
                thinking: thinking.clone(),
                signature: signature.clone(),
                tool_calls: tool_calls
                    .iter()
                    .map(|c| CallRecord {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    })
                    .collect(),
            },
            ChatMessage::ToolResult { call_id, content, is_error } => Record::ToolResult {
                call_id: call_id.clone(),
                content: content.clone(),
                is_error: *is_error,
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
            Record::Assistant { text, thinking, signature, tool_calls } => ChatMessage::Assistant {
                text: text.clone(),
                thinking: thinking.clone(),
                signature: signature.clone(),
                tool_calls: tool_calls
                    .iter()
                    .map(|c| ToolCallRecord {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    })
                    .collect(),
            },
            Record::ToolResult { call_id, content, is_error } => ChatMessage::ToolResult {
                call_id: call_id.clone(),
                content: content.clone(),
                is_error: *is_error,
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
                    for call_id in pending.drain(..) {
                        out.push(ChatMessage::ToolResult {
                            call_id,
                            content: INTERRUPTED.to_string(),
                            is_error: true,
                        });
                    }
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
        crate::agent::history::close_unanswered(&mut probe, INTERRUPTED);
        probe[before..].iter().map(Record::of).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damage_is_mended() {
        let call = |id: &str| ChatMessage::Assistant {
            text: String::new(),
            thinking: String::new(),
            signature: String::new(),
            tool_calls: vec![ToolCallRecord {
                id: id.into(),
                name: "bash".into(),
                arguments: "{}".into(),
            }],
        };
        let result = |id: &str| ChatMessage::ToolResult {
            call_id: id.into(),
            content: "ok".into(),
            is_error: false,
        };
        let mut rebuilt = Rebuilt {
            context: vec![
                ChatMessage::User { text: "u".into(), images: Vec::new() },
                call("a"),
                ChatMessage::User { text: "lost the result of a".into(), images: Vec::new() },
                result("zz"),
                call("b"),
                result("b"),
            ],
            ..Rebuilt::default()
        };
        rebuilt.mend();
        assert_eq!(rebuilt.context.len(), 6);
        assert!(
            matches!(&rebuilt.context[2], ChatMessage::ToolResult { call_id, is_error: true, .. } if call_id == "a")
        );
        assert!(
            matches!(&rebuilt.context[5], ChatMessage::ToolResult { call_id, .. } if call_id == "b")
        );
    }

    #[test]
    fn records_round_trip_and_rebuild() {
        let records = vec![
            Record::Start { cwd: "/p".into(), created_at: "t".into(), forked_from: None },
            Record::User { text: "plan".into(), images: Vec::new() },
            Record::Assistant {
                text: "reading".into(),
                thinking: String::new(),
                signature: String::new(),
                tool_calls: vec![CallRecord {
                    id: "c1".into(),
                    name: "read_file".into(),
                    arguments: "{}".into(),
                }],
            },
            Record::ToolResult { call_id: "c1".into(), content: "x".into(), is_error: false },
            Record::Compact { summary: "S".into(), keep: 0, before: 10, after: 2 },
            Record::Title { title: "T".into() },
            Record::User { text: "again".into(), images: Vec::new() },
            Record::Assistant {
                text: String::new(),
                thinking: "t".into(),
                signature: String::new(),
                tool_calls: vec![CallRecord {
                    id: "c2".into(),
                    name: "bash".into(),
                    arguments: "{}".into(),
                }],
            },
        ];
        let mut rebuilt = Rebuilt::default();
        for record in &records {
            let line = Line { v: VERSION, ts: "t".into(), record: record.clone() };
            let text = serde_json::to_string(&line).unwrap();
            let back: Line = serde_json::from_str(&text).unwrap();
            assert_eq!(&back.record, record, "{text}");
            rebuilt.apply(&back.record);
        }
        assert_eq!(rebuilt.all.len(), 5);
        assert_eq!(rebuilt.context.len(), 3, "summary, user, assistant");
        assert_eq!(rebuilt.context[0], ChatMessage::User { text: "S".into(), images: Vec::new() });
        assert_eq!(rebuilt.title.as_deref(), Some("T"));
        let repairs = rebuilt.repairs();
        assert_eq!(
            repairs,
            [Record::ToolResult {
                call_id: "c2".into(),
                content: INTERRUPTED.into(),
                is_error: true
            }]
        );
    }
}
