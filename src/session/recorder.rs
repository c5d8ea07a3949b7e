//! What a session writes to its store, as it happens. Every message, rewind, compaction,
//! mode change and model call of a turn becomes a journal record (the session is the agent
//! loop's `Recorder`), model calls add up to the session's usage totals, and the metadata
//! is touched beside them. A record the store could not keep (lease lost, store down)
//! stops the running turn.

use super::record::{Record, UsageRecord};
use super::{Session, store};
use crate::agent::{self, Recorder, TurnUsage};
use crate::error::Error;
use crate::history::ChatMessage;
use crate::provider::ToolDef;
use crate::sync::lock;

impl Session {
    pub(super) fn record(&self, record: &Record) {
        if let Err(err) = self.journal.append(record) {
            log::error!("session {}: journal write failed: {err}", self.id);
            self.broke(err);
        }
    }

    /// A record was not kept because the lease is gone or the store is down: nothing more
    /// may happen in this session here, so its running turn stops.
    pub(super) fn broke(&self, err: Error) {
        let err = match err {
            Error::Busy(why) => Error::Busy(format!(
                "{why}; session {} stopped here: load it again to go on",
                self.id
            )),
            Error::Store(why) => Error::Store(why),
            // A file that cannot be written is logged; the turn goes on (as before).
            _ => return,
        };
        let mut state = lock(&self.state);
        if let Some(token) = &state.running {
            token.cancel();
        }
        state.broken.get_or_insert(err);
    }

    /// Why the store stopped keeping this session's records, if it did.
    pub(super) fn broken(&self) -> Option<Error> {
        lock(&self.state).broken.as_ref().map(|err| match err {
            Error::Busy(why) => Error::Busy(why.clone()),
            Error::Store(why) => Error::Store(why.clone()),
            other => Error::Internal(other.to_string()),
        })
    }

    pub(super) fn touch(&self, change: impl FnOnce(&mut store::Meta)) {
        if let Err(err) = store::update_meta(self.journal.as_ref(), change) {
            log::error!("session {}: metadata write failed: {err}", self.id);
        }
    }

    /// Journals a model call's usage and adds it to the session's totals; returns them.
    pub(super) fn spend(&self, model: &str, call: &TurnUsage) -> TurnUsage {
        let tokens = UsageRecord::of(call);
        self.record(&Record::Usage { model: model.to_string(), tokens });
        let mut spent = lock(&self.spent);
        spent.add(*call);
        *spent
    }

    /// What the session's model calls used and cost so far.
    pub fn spent(&self) -> TurnUsage {
        *lock(&self.spent)
    }
}

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
