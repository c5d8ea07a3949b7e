//! The client's side of JSON-RPC over the in-process connection: numbered requests whose
//! answers are matched to what they were for, notifications, and answers to the agent's
//! own requests (questions).

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::jsonrpc::memory;

/// What a request was for, so its answer can be acted on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    Initialize,
    NewSession,
    Load(String),
    SetMode(String),
    Prompt,
    /// `_session/steering` with the text sent.
    Steer(String),
    /// `session/list` for `--continue`.
    ListContinue,
    /// `session/list` for the `/resume` picker.
    ListPicker,
}

/// Requests in flight over one connection.
pub struct Rpc {
    client: memory::Client,
    next: i64,
    pending: HashMap<i64, Call>,
}

impl Rpc {
    pub fn new(client: memory::Client) -> Rpc {
        Rpc { client, next: 0, pending: HashMap::new() }
    }

    /// The agent's frames, as they come.
    pub fn frames(&self) -> &crossbeam_channel::Receiver<crate::jsonrpc::Outgoing> {
        self.client.frames()
    }

    /// Sends a request for `call`.
    pub fn request(&mut self, method: &str, params: Value, call: Call) {
        self.next += 1;
        self.pending.insert(self.next, call);
        let frame = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        self.client.send(&frame);
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.client.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Answers the agent's request `id`.
    pub fn respond(&self, id: &Value, result: Value) {
        self.client.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// Refuses the agent's request `id` (a method this client does not serve).
    pub fn refuse(&self, id: &Value, method: &str) {
        let error = json!({"code": -32601, "message": format!("method not found: {method}")});
        self.client.send(&json!({"jsonrpc": "2.0", "id": id, "error": error}));
    }

    /// What the answer with `id` was for (once).
    pub fn take(&mut self, id: &Value) -> Option<Call> {
        id.as_i64().and_then(|id| self.pending.remove(&id))
    }

    /// Whether a request for `call` is in flight.
    pub fn waiting(&self, call: &Call) -> bool {
        self.pending.values().any(|c| c == call)
    }

    /// Whether a `session/load` is in flight.
    pub fn loading(&self) -> bool {
        self.pending.values().any(|c| matches!(c, Call::Load(_)))
    }

    /// Hangs up: the agent's `serve` returns.
    pub fn close(self) {
        self.client.close();
    }
}
