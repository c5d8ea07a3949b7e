//! What the fake LLM has received and has still to send: each request as [`Recorded`],
//! and the state shared by the handle and the connection threads (the remaining script,
//! the requests in arrival order, the counters) with the condvar tests wait on.

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use serde_json::Value;

use super::script::Reply;

/// One HTTP request the fake received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names are lowercased.
    pub headers: Vec<(String, String)>,
    /// The body as JSON, `Value::Null` if it is not JSON.
    pub body: Value,
    /// The body's bytes as they arrived.
    pub raw: Vec<u8>,
}

impl Recorded {
    /// First value of the header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
pub(super) struct State {
    pub(super) script: VecDeque<Reply>,
    /// Chat-completions requests, in arrival order.
    pub(super) chat: Vec<Recorded>,
    /// Every other request.
    pub(super) other: Vec<Recorded>,
    pub(super) unexpected: usize,
    pub(super) hangs_dropped: usize,
}

pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    pub(super) changed: Condvar,
    pub(super) stop: AtomicBool,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
