//! One MCP connection's JSON-RPC side, whatever carries it: our requests and the answers
//! they wait for, the server's requests (`ping`, `roots/list`; anything else -32601), and
//! its notifications (`tools/list_changed`, `progress`, `message`). A transport hands every
//! message it receives to `Peer::deliver` on its own reader thread and sends ours through
//! the `Link` it implements. Anything the server sends that breaks the protocol (not JSON,
//! an answer to an id we never used) ends the connection: every waiting call fails at once
//! with the reason, never by its timeout.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded, select};
use serde_json::{Value, json};

use super::logs::ServerLog;
use crate::cancel::CancelToken;
use crate::jsonrpc::{self, Message, RequestId};
use crate::sync::lock;

/// Sends our messages to the server; implemented by each transport.
pub(super) trait Link: Send + Sync {
    /// Sends one JSON-RPC message (serialised, without a newline).
    fn send(&self, message: &[u8]) -> Result<(), String>;
    /// Ends the connection: kills the process, ends the HTTP session. Idempotent.
    fn close(&self);
    /// The negotiated protocol version, for transports that repeat it on every request.
    fn set_version(&self, _version: &str) {}
    /// The handshake is over (`notifications/initialized` sent).
    fn opened(&self) {}
    /// What the server said on the side (a stdio server's last stderr lines).
    fn diagnostics(&self) -> Option<String> {
        None
    }
}

/// Why a request got no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// The server answered with a JSON-RPC error.
    Rpc(i64, String),
    /// The connection is gone (or broke the protocol); the server is failed.
    Broken(String),
    /// No answer in time (the server was told to cancel).
    Timeout(Duration),
    /// The turn was cancelled (the server was told).
    Cancelled,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Rpc(code, message) => {
                write!(f, "the server answered error {code}: {message}")
            }
            CallError::Broken(why) => write!(f, "{why}"),
            CallError::Timeout(after) => write!(f, "no answer after {} s", after.as_secs_f64()),
            CallError::Cancelled => write!(f, "cancelled"),
        }
    }
}

/// What the reader thread hands a waiting request.
struct Waiter {
    done: Sender<Result<Value, CallError>>,
    progress: Sender<String>,
}

/// The connection's shared state.
pub(super) struct Peer {
    /// The server's name, for logs.
    name: String,
    /// The session cwd, answered to `roots/list`.
    root: PathBuf,
    link: Mutex<Option<Arc<dyn Link>>>,
    waiting: Mutex<HashMap<i64, Waiter>>,
    next_id: AtomicI64,
    /// Why the connection ended, once it has.
    broken: Mutex<Option<String>>,
    /// The server said its tool list changed; the next listing reads it again.
    pub(super) stale: AtomicBool,
    /// What it sends is never quoted in an error (an HTTP server: whatever answers a URL).
    quiet: AtomicBool,
    /// Its log messages, rate-limited.
    log: ServerLog,
}

impl Peer {
    pub(super) fn new(name: &str, root: PathBuf) -> Arc<Peer> {
        Arc::new(Peer {
            name: name.to_string(),
            root,
            link: Mutex::new(None),
            waiting: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            broken: Mutex::new(None),
            stale: AtomicBool::new(false),
            quiet: AtomicBool::new(false),
            log: ServerLog::new(name),
        })
    }

    /// From now on, what the server sends is never quoted in an error.
    pub(super) fn quiet(&self) {
        self.quiet.store(true, Ordering::SeqCst);
    }

    /// Attaches the transport (once it exists: it needs the peer to deliver to).
    pub(super) fn attach(&self, link: Arc<dyn Link>) {
        *lock(&self.link) = Some(link);
    }

    fn link(&self) -> Option<Arc<dyn Link>> {
        lock(&self.link).clone()
    }

    /// Why the connection ended, if it has.
    pub(super) fn broken(&self) -> Option<String> {
        lock(&self.broken).clone()
    }

    /// Ends the connection for `reason`: every waiting request fails with it, the link
    /// is closed. The first reason stays.
    pub(super) fn fail(&self, reason: String) {
        self.end(reason, true);
    }

    /// Ends the connection on purpose (the session closed).
    pub(super) fn close(&self) {
        self.end("the connection was closed".to_string(), false);
    }

    fn end(&self, reason: String, failed: bool) {
        {
            let mut broken = lock(&self.broken);
            if broken.is_none() {
                if failed {
                    log::warn!("MCP server {}: {reason}", self.name);
                }
                *broken = Some(reason.clone());
            }
        }
        self.log.flush();
        let waiting: Vec<Waiter> = lock(&self.waiting).drain().map(|(_, w)| w).collect();
        for waiter in waiting {
            let _ = waiter.done.try_send(Err(CallError::Broken(reason.clone())));
        }
        if let Some(link) = self.link() {
            link.close();
        }
    }

    /// Handles one message from the server (on the transport's reader thread).
    pub(super) fn deliver(&self, bytes: &[u8]) {
        if self.broken().is_some() {
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return;
        }
        // A JSON-RPC batch (2025-03-26): each element on its own.
        if trimmed.starts_with('[') {
            match serde_json::from_str::<Vec<Value>>(trimmed) {
                Ok(items) => {
                    for item in items {
                        self.deliver(item.to_string().as_bytes());
                    }
                }
                Err(err) => self.fail(format!("sent a malformed batch: {err}")),
            }
            return;
        }
        let parsed = jsonrpc::parse(trimmed.as_bytes());
        // What its log dropped is told before anything else it says is acted on.
        if !matches!(&parsed, Ok(Message::Notification(n)) if n.method == "notifications/message") {
            self.log.flush();
        }
        match parsed {
            Ok(Message::Response(response)) => {
                let waiter = match response.id {
                    RequestId::Num(id) => lock(&self.waiting).remove(&id),
                    RequestId::Str(_) => None,
                };
                match waiter {
                    Some(waiter) => {
                        let result = response.result.map_err(|e| CallError::Rpc(e.code, e.message));
                        let _ = waiter.done.try_send(result);
                    }
                    // A late answer to a call we gave up on is expected; one to an id we
                    // never sent is not.
                    None if self.was_sent(&response.id) => {}
                    None => {
                        self.fail(format!("answered an id it was never sent ({})", response.id))
                    }
                }
            }
            Ok(Message::Request(request)) => {
                let result = match request.method.as_str() {
                    "ping" => Ok(json!({})),
                    "roots/list" => Ok(json!({ "roots": [self.root_entry()] })),
                    other => Err(jsonrpc::RpcError::method_not_found(other)),
                };
                let answer = match result {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": request.id, "result": result}),
                    Err(error) => json!({"jsonrpc": "2.0", "id": request.id, "error": error}),
                };
                self.send_value(&answer);
            }
            Ok(Message::Notification(note)) => self.notification(&note.method, &note.params),
            Err((_, error)) => {
                // A quiet peer's errors quote nothing it sent, not even in the detail.
                let detail = match self.quiet.load(Ordering::SeqCst) {
                    true => format!("{})", error.message),
                    false => {
                        let detail = error.data.and_then(|d| d.as_str().map(str::to_string));
                        let shown: String = trimmed.chars().take(120).collect();
                        format!("{}): {shown}", detail.unwrap_or(error.message))
                    }
                };
                self.fail(format!("sent something that is not JSON-RPC ({detail}"));
            }
        }
    }

    /// Whether our request `id` still waits for its answer.
    pub(super) fn is_waiting(&self, id: i64) -> bool {
        lock(&self.waiting).contains_key(&id)
    }

    fn was_sent(&self, id: &RequestId) -> bool {
        matches!(id, RequestId::Num(n) if *n > 0 && *n < self.next_id.load(Ordering::Relaxed))
    }

    fn root_entry(&self) -> Value {
        let name = self.root.file_name().map(|n| n.to_string_lossy().into_owned());
        json!({ "uri": file_uri(&self.root), "name": name.unwrap_or_default() })
    }

    fn notification(&self, method: &str, params: &Value) {
        match method {
            "notifications/tools/list_changed" => self.stale.store(true, Ordering::SeqCst),
            "notifications/progress" => {
                let Some(id) = params.get("progressToken").and_then(Value::as_i64) else { return };
                let text = progress_text(params);
                if let Some(waiter) = lock(&self.waiting).get(&id) {
                    // A flood of progress never blocks the reader: extra lines are dropped.
                    let _ = waiter.progress.try_send(text);
                }
            }
            "notifications/message" => self.log.message(params),
            _ => self.log.ignored(method),
        }
    }

    fn send_value(&self, value: &Value) {
        let bytes = value.to_string();
        if let Some(link) = self.link()
            && let Err(err) = link.send(bytes.as_bytes())
        {
            self.fail(format!("cannot write to it: {err}"));
        }
    }

    /// Sends a notification.
    pub(super) fn notify(&self, method: &str, params: Value) {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        self.send_value(&message);
    }

    /// A new request id, and where its answer and its progress will arrive.
    pub(super) fn expect(&self) -> (i64, Receiver<Result<Value, CallError>>, Receiver<String>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (done_tx, done_rx) = bounded(1);
        let (progress_tx, progress_rx) = bounded(64);
        lock(&self.waiting).insert(id, Waiter { done: done_tx, progress: progress_tx });
        (id, done_rx, progress_rx)
    }

    /// Sends a request and waits for its answer, at most `timeout`, showing progress
    /// through `progress`. A cancel (or the timeout) tells the server with
    /// `notifications/cancelled` and returns at once.
    pub(super) fn request(
        &self,
        method: &str,
        mut params: Value,
        timeout: Duration,
        cancel: Option<&CancelToken>,
        progress: &dyn Fn(String),
    ) -> Result<Value, CallError> {
        if let Some(why) = self.broken() {
            return Err(CallError::Broken(why));
        }
        let (id, done_rx, progress_rx) = self.expect();
        if method == "tools/call" && params.is_object() {
            params["_meta"] = json!({ "progressToken": id });
        }
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_value(&message);
        let never = crossbeam_channel::never();
        let cancelled = cancel.map_or(&never, CancelToken::channel);
        let deadline = Instant::now() + timeout;
        let result = wait(&done_rx, &progress_rx, cancelled, deadline, progress);
        if let Err(CallError::Cancelled | CallError::Timeout(_)) = &result {
            lock(&self.waiting).remove(&id);
            let reason = match &result {
                Err(CallError::Cancelled) => "cancelled by the user".to_string(),
                _ => format!("no answer after {} s", timeout.as_secs()),
            };
            self.notify("notifications/cancelled", json!({"requestId": id, "reason": reason}));
        }
        match result {
            Err(CallError::Timeout(_)) => Err(CallError::Timeout(timeout)),
            other => other,
        }
    }
}

/// Progress is shown at most this often (the latest text wins).
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

fn wait(
    done: &Receiver<Result<Value, CallError>>,
    progress_rx: &Receiver<String>,
    cancelled: &Receiver<()>,
    deadline: Instant,
    progress: &dyn Fn(String),
) -> Result<Value, CallError> {
    let mut shown = Instant::now() - PROGRESS_EVERY;
    let mut latest: Option<String> = None;
    loop {
        let now = Instant::now();
        let left = deadline.saturating_duration_since(now);
        if latest.is_some() && now >= shown + PROGRESS_EVERY {
            progress(latest.take().unwrap_or_default());
            shown = now;
        }
        // With progress held back, wake when it may be shown.
        let tick = match latest {
            Some(_) => left.min((shown + PROGRESS_EVERY).saturating_duration_since(now)),
            None => left,
        };
        select! {
            recv(done) -> result => {
                // The last progress sent before the answer is shown before it.
                if let Some(text) = progress_rx.try_iter().last().or(latest) {
                    progress(text);
                }
                return result.unwrap_or_else(|_| Err(CallError::Broken("the connection ended".into())));
            }
            recv(progress_rx) -> text => {
                if let Ok(text) = text { latest = Some(text) }
            }
            recv(cancelled) -> _ => return Err(CallError::Cancelled),
            default(tick) => {
                if latest.is_none() || Instant::now() >= deadline {
                    return Err(CallError::Timeout(left));
                }
            }
        }
    }
}

/// `path` as a `file://` URI, percent-encoding what a URI path may not hold.
fn file_uri(path: &std::path::Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.as_os_str().as_encoded_bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'.' | b'_' | b'~' => {
                uri.push(char::from(*byte));
            }
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri
}

/// A progress notification as one line: "message (3/10)" (the message clipped).
fn progress_text(params: &Value) -> String {
    let message = params.get("message").and_then(Value::as_str).unwrap_or("working");
    let message = crate::text::one_line(message, " ", 500);
    let done = params.get("progress").and_then(Value::as_f64);
    let total = params.get("total").and_then(Value::as_f64);
    match (done, total) {
        (Some(done), Some(total)) => format!("{message} ({done}/{total})"),
        (Some(done), None) => format!("{message} ({done})"),
        _ => message,
    }
}

#[cfg(test)]
#[path = "peer_tests.rs"]
mod tests;
