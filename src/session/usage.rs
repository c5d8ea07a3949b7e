//! What a session's model calls used and cost: one journal record per call (so the
//! totals survive a reload, a crash and a move to another node), summed into the
//! session's totals, which `usage_update` reports and `iac-code sessions show` prints.

use super::Session;
use super::record::Record;
pub use super::record::UsageRecord;
use crate::agent::TurnUsage;
use crate::sync::lock;

impl Session {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::Usage;

    #[test]
    fn a_record_reads_back_as_the_usage_it_was_made_of() {
        let price = crate::config::pricing::Price::FREE;
        let usage = Usage { input: 9, output: 4, cached_read: 5, cached_write: 2, thought: 1 };
        for price in [Some(price), None] {
            let call = TurnUsage::of_call(&usage, false, price);
            let line = serde_json::to_string(&UsageRecord::of(&call)).unwrap();
            let back: UsageRecord = serde_json::from_str(&line).unwrap();
            assert_eq!(back.read(), call, "{line}");
        }
    }
}
