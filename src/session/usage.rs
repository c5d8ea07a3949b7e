//! What a session's model calls used and cost: one journal record per call (so the
//! totals survive a reload, a crash and a move to another node), summed into the
//! session's totals, which `usage_update` reports and `iac-code sessions show` prints.

use serde::{Deserialize, Serialize};

use super::Session;
use super::record::Record;
use crate::agent::{Cost, TurnUsage};
use crate::config::pricing::Currency;
use crate::sync::lock;

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
