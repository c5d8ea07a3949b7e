//! The session as the agent loop's `Recorder`: every message, rewind, compaction, mode
//! change and model call of a turn becomes a journal record as it happens.

use super::Session;
use super::record::Record;
use crate::agent::{self, Recorder};
use crate::history::ChatMessage;
use crate::provider::ToolDef;

impl Recorder for Session {
    fn message(&self, message: &ChatMessage) {
        self.record(&Record::of(message).with_id(agent::event::new_message_id()));
    }
    fn message_as(&self, message: &ChatMessage, id: &str) {
        self.record(&Record::of(message).with_id(id.to_string()));
    }
    fn rewind(&self, len: usize) {
        self.record(&Record::Rewind { len });
    }
    fn compacted(&self, summary: &str, keep: usize, before: u64, after: u64) {
        self.record(&Record::Compact { summary: summary.to_string(), keep, before, after });
    }
    fn mode(&self, mode: &str) {
        self.record(&Record::Mode { mode: mode.to_string() });
    }
    fn usage(&self, model: &str, call: &agent::TurnUsage) -> agent::TurnUsage {
        self.spend(model, call)
    }
    fn offered(&self, tools: &[ToolDef]) {
        self.watch_tools(tools);
    }
}
