//! The parts of journal records that are not records themselves: signed reasoning,
//! images, tool calls and a model call's usage, as `record.rs` persists them.

use serde::{Deserialize, Serialize};

use crate::agent::{Cost, TurnUsage};
use crate::config::pricing::Currency;

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
