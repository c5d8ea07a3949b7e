//! The transport-neutral heart of the fake MCP server: what each incoming JSON-RPC message
//! is ([`Incoming`]), what the server answers a request with ([`Reply`]), played from the
//! [`Script`] by the [`Engine`], which talks back to the client through a [`Peer`] (the
//! transport: stdout, an SSE stream…) for the notifications and requests a call makes
//! before its answer. [`Pending`] pairs the server's requests with the client's answers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::script::{self, Behaviour, FakeTool, Script};

/// How long a call waits for the client's answer to a request of the server's.
pub(super) const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// One message from the client.
pub(super) enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification,
    /// An answer to one of the server's requests: its id, and the whole message.
    Response {
        id: Value,
    },
    Invalid,
}

impl Incoming {
    pub(super) fn of(message: &Value) -> Incoming {
        let method = message.get("method").and_then(Value::as_str).map(str::to_owned);
        let id = message.get("id").filter(|id| !id.is_null()).cloned();
        let params = message.get("params").cloned().unwrap_or_else(|| json!({}));
        match (method, id) {
            (Some(method), Some(id)) => Incoming::Request { id, method, params },
            (Some(_), None) => Incoming::Notification,
            (None, Some(id))
                if message.get("result").is_some() || message.get("error").is_some() =>
            {
                Incoming::Response { id }
            }
            _ => Incoming::Invalid,
        }
    }
}

/// The `requestId` of a `notifications/cancelled`, as JSON text (the key of the cancelled).
pub(super) fn cancelled_id(message: &Value) -> Option<String> {
    (message.get("method").and_then(Value::as_str) == Some("notifications/cancelled"))
        .then(|| message.pointer("/params/requestId").map(Value::to_string))
        .flatten()
}

/// What the server does about one request.
pub(super) enum Reply {
    /// Send this response message.
    Answer(Value),
    /// Send this response, then switch to `tools_after_change` and send
    /// `notifications/tools/list_changed` (the transport orders the three).
    Changed(Value),
    /// Never answer.
    Hang,
    /// Die without answering.
    Crash,
}

/// The transport, seen from a call that talks to the client before it answers.
pub(super) trait Peer {
    /// Sends a notification.
    fn notify(&self, message: Value);
    /// Sends a request (`message` has its id) and waits for the answer: `None` if the
    /// transport has no way to the client or no answer came.
    fn request(&self, message: Value) -> Option<Value>;
}

pub(super) fn response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub(super) fn error_response(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

pub(super) fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

pub(super) fn list_changed() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
}

/// The script being played, and the tool list it offers now.
pub(super) struct Engine {
    pub(super) script: Script,
    changed: AtomicBool,
    next_id: AtomicU64,
}

impl Engine {
    pub(super) fn new(script: Script) -> Engine {
        Engine { script, changed: AtomicBool::new(false), next_id: AtomicU64::new(1) }
    }

    /// The tools offered now.
    pub(super) fn tools(&self) -> &[FakeTool] {
        if self.changed.load(Ordering::SeqCst) {
            &self.script.tools_after_change
        } else {
            &self.script.tools
        }
    }

    /// Offers `tools_after_change` from now on.
    pub(super) fn switch_tools(&self) {
        self.changed.store(true, Ordering::SeqCst);
    }

    /// A request of the server's to the client, with a fresh id.
    pub(super) fn server_request(&self, method: &str, params: Value) -> Value {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    /// What to do about the request `id`/`method`/`params`.
    pub(super) fn handle(
        &self,
        id: &Value,
        method: &str,
        params: &Value,
        peer: &dyn Peer,
    ) -> Reply {
        match method {
            "initialize" if self.script.hang_initialize => Reply::Hang,
            "initialize" => {
                Reply::Answer(response(id, script::initialize_result(&self.script, params)))
            }
            "ping" | "logging/setLevel" => Reply::Answer(response(id, json!({}))),
            "tools/list" => match script::list_page(self.tools(), self.script.page_size, params) {
                Ok(result) => Reply::Answer(response(id, result)),
                Err((code, message)) => Reply::Answer(error_response(id, code, &message)),
            },
            "tools/call" => self.call(id, params, peer),
            _ => Reply::Answer(error_response(id, -32601, &format!("method not found: {method}"))),
        }
    }

    fn call(&self, id: &Value, params: &Value, peer: &dyn Peer) -> Reply {
        let name = params.get("name").and_then(Value::as_str).unwrap_or_default();
        let Some(tool) = self.tools().iter().find(|t| t.name == name) else {
            return Reply::Answer(error_response(id, -32602, &format!("Unknown tool: {name}")));
        };
        let arguments = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
        let answer = |result: Value| Reply::Answer(response(id, result));
        match &tool.behaviour {
            Behaviour::Echo => answer(script::echo_result(&arguments)),
            Behaviour::Error(text) => answer(script::error_result(text)),
            Behaviour::Image => answer(script::image_result()),
            Behaviour::Resource => answer(script::resource_result()),
            Behaviour::Big(n) => answer(script::text_result(&script::big_text(*n))),
            Behaviour::Structured => answer(script::structured_result()),
            Behaviour::Raw(result) => answer(result.clone()),
            Behaviour::Hang => Reply::Hang,
            Behaviour::Crash => Reply::Crash,
            Behaviour::ChangeList => Reply::Changed(response(id, script::text_result("changed"))),
            Behaviour::Progress(steps) => {
                if let Some(token) = params.pointer("/_meta/progressToken") {
                    for step in 1..=*steps {
                        peer.notify(notification(
                            "notifications/progress",
                            json!({
                                "progressToken": token,
                                "progress": step,
                                "total": steps,
                                "message": format!("step {step}"),
                            }),
                        ));
                    }
                }
                answer(script::text_result("done"))
            }
            Behaviour::Log => {
                peer.notify(notification(
                    "notifications/message",
                    json!({
                        "level": "warning",
                        "logger": script::SERVER_NAME,
                        "data": "fake log line",
                    }),
                ));
                answer(script::text_result("logged"))
            }
            Behaviour::LogFlood(count) => {
                for n in 0..*count {
                    peer.notify(notification(
                        "notifications/message",
                        json!({
                            "level": "warning",
                            "logger": script::SERVER_NAME,
                            "data": format!("{} {n:08} {}", script::FLOOD_LINE, ".".repeat(400)),
                        }),
                    ));
                }
                answer(script::text_result("flooded"))
            }
            Behaviour::AskRoots => {
                let answered = peer.request(self.server_request("roots/list", json!({})));
                answer(match answered {
                    Some(message) => match message.get("result") {
                        Some(result) => script::text_result(&result.to_string()),
                        None => script::error_result(&message.to_string()),
                    },
                    None => script::error_result("fake mcp: no answer to roots/list"),
                })
            }
            Behaviour::Ping => answer(match peer.request(self.server_request("ping", json!({}))) {
                Some(message) if message.get("result").is_some() => script::text_result("pong"),
                Some(message) => script::error_result(&message.to_string()),
                None => script::error_result("fake mcp: no answer to ping"),
            }),
        }
    }
}

/// The server's requests awaiting the client's answers, keyed by id as JSON text.
#[derive(Default)]
pub(super) struct Pending {
    answers: Mutex<HashMap<String, Option<Value>>>,
    arrived: Condvar,
    closed: AtomicBool,
}

impl Pending {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Option<Value>>> {
        self.answers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Announces that `request` (a message with an id) is about to be sent.
    pub(super) fn expect(&self, request: &Value) {
        self.lock().insert(request["id"].to_string(), None);
    }

    /// Hands the client's answer to the call waiting for it; false if none waits.
    pub(super) fn deliver(&self, id: &Value, message: &Value) -> bool {
        let mut answers = self.lock();
        match answers.get_mut(&id.to_string()) {
            Some(slot) => {
                *slot = Some(message.clone());
                drop(answers);
                self.arrived.notify_all();
                true
            }
            None => false,
        }
    }

    /// Waits for the answer to `request`: `None` after `ANSWER_TIMEOUT` or `close`.
    pub(super) fn wait(&self, request: &Value) -> Option<Value> {
        let key = request["id"].to_string();
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        let mut answers = self.lock();
        loop {
            if let Some(Some(answer)) = answers.get(&key) {
                let answer = answer.clone();
                answers.remove(&key);
                return Some(answer);
            }
            let now = Instant::now();
            if now >= deadline || self.closed.load(Ordering::SeqCst) {
                answers.remove(&key);
                return None;
            }
            answers = self
                .arrived
                .wait_timeout(answers, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Wakes every waiter for good (the server stops).
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let _guard = self.lock();
        self.arrived.notify_all();
    }
}
