//! Redis replies read as plain values: every query returns a `redis::Value` and these make
//! what is needed of it (one instance of the parser in the binary, not one per shape).

use std::collections::HashMap;

use redis::Value;

/// A reply as an integer (0 for anything else).
pub(super) fn int(value: &Value) -> i64 {
    match value {
        Value::Int(n) => *n,
        Value::BulkString(b) => {
            std::str::from_utf8(b).ok().and_then(|s| s.parse().ok()).unwrap_or(0)
        }
        _ => 0,
    }
}

/// A reply as text, if it is a string.
pub(super) fn text(value: Value) -> Option<String> {
    match value {
        Value::BulkString(b) => String::from_utf8(b).ok(),
        Value::SimpleString(s) => Some(s),
        _ => None,
    }
}

/// An array reply as texts (what is not text is left out).
pub(super) fn texts(value: Value) -> Vec<String> {
    match value {
        Value::Array(items) => items.into_iter().filter_map(text).collect(),
        _ => Vec::new(),
    }
}

/// The field/value pairs of a reply (RESP2's flat array, or RESP3's map), as bytes.
pub(super) fn pairs(value: Value) -> Vec<(Vec<u8>, Vec<u8>)> {
    let bytes = |v: Value| match v {
        Value::BulkString(b) => Some(b),
        Value::SimpleString(s) => Some(s.into_bytes()),
        _ => None,
    };
    match value {
        Value::Array(items) => {
            let mut items = items.into_iter();
            let mut out = Vec::new();
            while let (Some(k), Some(v)) = (items.next(), items.next()) {
                if let (Some(k), Some(v)) = (bytes(k), bytes(v)) {
                    out.push((k, v));
                }
            }
            out
        }
        Value::Map(entries) => {
            entries.into_iter().filter_map(|(k, v)| Some((bytes(k)?, bytes(v)?))).collect()
        }
        _ => Vec::new(),
    }
}

/// A hash reply as text fields.
pub(super) fn strings(value: Value) -> HashMap<String, String> {
    pairs(value)
        .into_iter()
        .filter_map(|(k, v)| Some((String::from_utf8(k).ok()?, String::from_utf8(v).ok()?)))
        .collect()
}
