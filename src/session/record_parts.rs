//! The parts of journal records that are not records themselves: signed reasoning,
//! images and tool calls, as `record.rs` persists them.

use serde::{Deserialize, Serialize};

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
