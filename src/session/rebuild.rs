//! A journal's bytes read into a `Rebuilt`: pure (no file, no store), so the file store,
//! tests and the fuzz target read journals the same way.

use super::record::{INTERRUPTED, Rebuilt, Record};
use crate::history::{ChatMessage, error_result};

impl Rebuilt {
    /// A session rebuilt from a journal's bytes (`name` says where, in warnings): its
    /// complete lines only (a torn last line, which a crash can leave, is not read), each
    /// through `apply_line`, blank ones skipped; then mended.
    pub fn from_journal(bytes: &[u8], name: &dyn std::fmt::Display) -> Rebuilt {
        Rebuilt::default().with_journal(bytes, name)
    }

    /// This session (empty, maybe `trusting` a seal) rebuilt from a journal's bytes, as
    /// `from_journal` does.
    pub fn with_journal(mut self, bytes: &[u8], name: &dyn std::fmt::Display) -> Rebuilt {
        let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        for (n, line) in bytes[..complete].split(|b| *b == b'\n').enumerate() {
            if !line.iter().all(u8::is_ascii_whitespace) {
                self.apply_line(line, &format_args!("{name}:{}", n + 1));
            }
        }
        self.mend();
        self
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
