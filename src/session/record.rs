//! Journal records: the versioned on-disk form of a session's history (one JSON object per
//! line, with the parts records carry: signed reasoning, images, tool calls, a model call's
//! usage), and rebuilding a session from them. Internal types stay free of `Serialize`;
//! these structs are the persisted format and change only with `VERSION`.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::id::SessionId;
use super::seal::Seal;
use crate::agent::{Cost, TurnUsage};
use crate::config::pricing::Currency;
use crate::error::{Error, Result};
use crate::history::{ChatMessage, Image, SignedThinking, ToolUse};

/// The journal format version written by this build.
pub const VERSION: u32 = 1;

/// The longest journal line an import reads (`sessions import`, through
/// `jsonrpc::read_capped_line`: never more of a line in memory): above any record a client
/// can cause with the transports' default caps (a stdio message is at most 50 MiB, an HTTP
/// body 16 MiB unless `--max-body` raises it).
pub const MAX_LINE: usize = 64 << 20;

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
    /// A mode record's seal (`session/seal.rs`): this node's user set that mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seal: Option<String>,
    /// What happened.
    #[serde(flatten)]
    pub record: Record,
}

impl Line {
    /// `record` as the line at `index` (from 0) of session `id`'s journal, written now: a
    /// mode record is sealed with `seal`.
    pub fn encode(record: &Record, id: &SessionId, index: u64, seal: &Seal) -> Result<Vec<u8>> {
        let seal = match record {
            Record::Mode { mode } => seal.sign(id, index, mode),
            _ => None,
        };
        let line =
            Line { v: VERSION, ts: crate::time::now_rfc3339(), seal, record: record.clone() };
        serde_json::to_vec(&line)
            .map_err(|err| Error::Internal(format!("cannot encode a journal record: {err}")))
    }

    /// Reads one journal line as every reader does (a journal, a Redis entry, an import):
    /// exactly one record of a known type, with no line break in it, in a format this build
    /// reads. `Err`: why not.
    pub fn read(bytes: &[u8]) -> std::result::Result<Line, String> {
        if bytes.contains(&b'\n') {
            return Err("a record holds a line break (one record per line)".into());
        }
        let line = serde_json::from_slice::<Line>(bytes)
            .map_err(|err| format!("not a journal record: {err}"))?;
        if line.v > VERSION {
            return Err(format!("format v{} is newer than this build reads (v{VERSION})", line.v));
        }
        Ok(line)
    }
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
        /// Its message id (`messageId` on the wire); a record from before ids has none and
        /// gets one from its place (`Rebuilt::apply`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageRecord>,
    },
    /// A model reply.
    Assistant {
        /// Its message id, the one its chunks streamed with (as for `User`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
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
    /// One model call's tokens and cost (`session/recorder.rs`).
    Usage {
        model: String,
        tokens: UsageRecord,
    },
    /// The session's additional directories (`additionalDirectories`), as the client gave
    /// them: the whole list from here on.
    Directories {
        dirs: Vec<String>,
    },
}

impl Record {
    /// The record of a history message.
    pub fn of(message: &ChatMessage) -> Record {
        match message {
            ChatMessage::User { text, images } => {
                Record::User { id: None, text: text.clone(), images: copies(images) }
            }
            ChatMessage::Assistant { text, thinking, signed, tool_calls } => Record::Assistant {
                id: None,
                text: text.clone(),
                thinking: thinking.clone(),
                signed: copies(signed),
                tool_calls: copies(tool_calls),
            },
            ChatMessage::ToolResult { call_id, content, is_error, images } => Record::ToolResult {
                call_id: call_id.clone(),
                content: content.clone(),
                is_error: *is_error,
                images: copies(images),
            },
        }
    }

    /// This record with the message id `new` (a user or assistant message; others have
    /// none).
    pub fn with_id(mut self, new: String) -> Record {
        if let Record::User { id, .. } | Record::Assistant { id, .. } = &mut self {
            *id = Some(new);
        }
        self
    }

    fn message(&self) -> Option<ChatMessage> {
        Some(match self {
            Record::User { text, images, .. } => {
                ChatMessage::User { text: text.clone(), images: copies(images) }
            }
            Record::Assistant { text, thinking, signed, tool_calls, .. } => {
                ChatMessage::Assistant {
                    text: text.clone(),
                    thinking: thinking.clone(),
                    signed: copies(signed),
                    tool_calls: copies(tool_calls),
                }
            }
            Record::ToolResult { call_id, content, is_error, images } => ChatMessage::ToolResult {
                call_id: call_id.clone(),
                content: content.clone(),
                is_error: *is_error,
                images: copies(images),
            },
            Record::Start { .. }
            | Record::Rewind { .. }
            | Record::Clear
            | Record::Compact { .. }
            | Record::Mode { .. }
            | Record::Model { .. }
            | Record::Title { .. }
            | Record::Usage { .. }
            | Record::Directories { .. } => return None,
        })
    }
}

/// A session rebuilt from its journal.
#[derive(Debug, Default, Clone)]
pub struct Rebuilt {
    /// Every message ever exchanged, in order (what a replay shows).
    pub all: Vec<ChatMessage>,
    /// The message id of each of `all` (`message_id`).
    pub ids: Vec<String>,
    /// What the model sees next (after rewinds, clears and compactions).
    pub context: Vec<ChatMessage>,
    /// The last mode set that this node's user sealed, or that widens nothing.
    pub mode: Option<String>,
    /// The last model set, if any.
    pub model: Option<String>,
    /// The last title set, if any.
    pub title: Option<String>,
    /// The last additional directories set, if any.
    pub directories: Option<Vec<String>>,
    /// What the model calls of the session used and cost, all told.
    pub usage: crate::agent::TurnUsage,
    /// The last `Start` record: cwd, creation time, fork origin.
    pub start: Option<(String, String, Option<String>)>,
    /// Lines read so far: the position of the next one (which a mode record's seal covers).
    pub lines: u64,
    /// Whose seals count: this node's key, for this session (`None`: nobody's).
    trust: Option<(Arc<Seal>, SessionId)>,
}

impl Rebuilt {
    /// An empty session whose mode records count when `seal` verifies them for `id`.
    pub fn trusting(seal: &Arc<Seal>, id: &SessionId) -> Rebuilt {
        Rebuilt { trust: Some((Arc::clone(seal), id.clone())), ..Rebuilt::default() }
    }

    /// Applies the next journal line (a JSON `Line`); a line of a newer format or one that
    /// cannot be read is skipped with a warning naming `at`. A mode record that widens what
    /// runs unasked (accept_edits, bypass_permissions) counts only with this node's seal for
    /// this place in this session: anything else is history, never restored.
    pub fn apply_line(&mut self, bytes: &[u8], at: &dyn std::fmt::Display) {
        let index = self.lines;
        self.lines += 1;
        let line = match Line::read(bytes) {
            Ok(line) => line,
            Err(why) => return log::warn!("{at}: {why}; skipped"),
        };
        let Record::Mode { mode } = &line.record else { return self.apply(&line.record) };
        let sealed = match (&self.trust, &line.seal) {
            (Some((seal, id)), Some(tag)) => seal.verify(id, index, mode, tag),
            _ => false,
        };
        if sealed || !widens(mode) {
            self.mode = Some(mode.clone());
        } else {
            log::info!(
                "{at}: mode {mode} was not set by this node's user (no seal of its key): kept \
                 as history, not restored"
            );
        }
    }

    /// Applies one record.
    pub fn apply(&mut self, record: &Record) {
        if let Some(message) = record.message() {
            let id = match record {
                Record::User { id: Some(id), .. } | Record::Assistant { id: Some(id), .. } => {
                    id.clone()
                }
                _ => message_id(self.all.len()),
            };
            self.ids.push(id);
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
            // Unsealed: only a mode that widens nothing counts.
            Record::Mode { mode } if !widens(mode) => self.mode = Some(mode.clone()),
            Record::Mode { .. } => {}
            Record::Model { model } => self.model = Some(model.clone()),
            Record::Title { title } => self.title = Some(title.clone()),
            Record::Directories { dirs } => self.directories = Some(dirs.clone()),
            Record::Usage { tokens, .. } => self.usage.add(tokens.read()),
            Record::Start { cwd, created_at, forked_from } => {
                self.start = Some((cwd.clone(), created_at.clone(), forked_from.clone()));
            }
            Record::User { .. } | Record::Assistant { .. } | Record::ToolResult { .. } => {}
        }
    }
}

/// The message id of the message at `index` of a session's history whose record has none
/// (journalled before ids were): derived from its place, so every load gives the same.
pub fn message_id(index: usize) -> String {
    format!("00000000-0000-4000-8000-{index:012x}")
}

/// Whether `mode` lets more run unasked than `default` (an unknown one counts as if it did).
fn widens(mode: &str) -> bool {
    use crate::gate::Mode;
    !matches!(Mode::from_id(mode), Some(Mode::Default | Mode::Plan))
}

/// Each of `items` in the other form (history to journal, or back).
fn copies<'a, A: 'a, B: From<&'a A>>(items: &'a [A]) -> Vec<B> {
    items.iter().map(B::from).collect()
}

/// The journal and history forms of a message's parts carry the same fields: one
/// conversion a direction.
macro_rules! same_fields {
    ($($a:ident <=> $b:ident { $($field:ident),* });* $(;)?) => {$(
        impl From<&$a> for $b {
            fn from(x: &$a) -> $b {
                $b { $($field: x.$field.clone()),* }
            }
        }
        impl From<&$b> for $a {
            fn from(x: &$b) -> $a {
                $a { $($field: x.$field.clone()),* }
            }
        }
    )*};
}

same_fields! {
    SignedThinking <=> SignedRecord { thinking, signature, redacted };
    Image <=> ImageRecord { mime, data };
    ToolUse <=> CallRecord { id, name, arguments };
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

/// Tokens and cost in a journal (`Record::Usage`): the persisted form of a `TurnUsage`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageRecord {
    pub input: u64,
    pub output: u64,
    #[serde(default)]
    pub cached_read: u64,
    #[serde(default)]
    pub cached_write: u64,
    #[serde(default)]
    pub thought: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
    /// Micro-units of `currency`; absent when the price was not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
}

impl UsageRecord {
    /// The record of `usage`.
    pub fn of(usage: &TurnUsage) -> UsageRecord {
        let (cost, currency) = match usage.cost {
            Cost::Priced { micros, currency } => {
                (Some(micros), Some(currency.as_str().to_string()))
            }
            Cost::Nothing | Cost::Unknown => (None, None),
        };
        UsageRecord {
            input: usage.input,
            output: usage.output,
            cached_read: usage.cached_read,
            cached_write: usage.cached_write,
            thought: usage.thought,
            estimated: usage.estimated,
            cost,
            currency,
        }
    }

    /// The usage it records (a cost in an unreadable currency is unknown).
    pub fn read(&self) -> TurnUsage {
        let cost = match (self.cost, self.currency.as_deref().and_then(Currency::parse)) {
            (Some(micros), Some(currency)) => Cost::Priced { micros, currency },
            _ => Cost::Unknown,
        };
        TurnUsage {
            input: self.input,
            output: self.output,
            cached_read: self.cached_read,
            cached_write: self.cached_write,
            thought: self.thought,
            estimated: self.estimated,
            cost,
        }
    }
}

impl UsageRecord {
    /// A session's totals as kept in its metadata (`None` before its first call).
    pub fn totals(usage: &TurnUsage) -> Option<UsageRecord> {
        (usage.input + usage.output > 0 || usage.cost != Cost::Nothing)
            .then(|| UsageRecord::of(usage))
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
