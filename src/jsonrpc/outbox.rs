//! `Outbox`: the clone-able handle every thread uses to send frames, plus the table of our
//! own requests waiting for the client's answer. Frames are encoded on the sending thread.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender};
use serde::Serialize;
use serde_json::Value;

use super::message::{RequestId, Response, RpcError};

/// One encoded frame on its way to the transport, with the session it belongs to (if any),
/// which the HTTP transport uses to pick a stream. The bytes carry no trailing newline.
#[derive(Debug)]
pub struct Outgoing {
    /// Session the frame is tied to.
    pub session: Option<String>,
    /// The encoded JSON-RPC message.
    pub bytes: Vec<u8>,
}

type ReplySender = Sender<Result<Value, RpcError>>;

/// Where encoded frames go: a writer thread's channel (stdio), or a function that files
/// them at once on the sending thread (HTTP, where a stream writer thread follows anyway).
#[derive(Clone)]
enum Sink {
    Channel(Sender<Outgoing>),
    Direct(Arc<dyn Fn(Outgoing) + Send + Sync>),
}

/// Sends frames to the client and tracks the replies to our requests.
#[derive(Clone)]
pub struct Outbox {
    sink: Sink,
    pending: Arc<Pending>,
}

struct Pending {
    next_id: AtomicI64,
    waiting: Mutex<HashMap<RequestId, ReplySender>>,
}

#[derive(Serialize)]
struct OutNotification<'a, P> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a P,
}

#[derive(Serialize)]
struct OutRequest<'a, P> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    params: &'a P,
}

#[derive(Serialize)]
struct OutResult<'a, R> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a R,
}

#[derive(Serialize)]
struct OutError<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RequestId>,
    error: &'a RpcError,
}

impl Outbox {
    /// An outbox writing into `tx`.
    pub fn new(tx: Sender<Outgoing>) -> Outbox {
        Outbox::with_sink(Sink::Channel(tx))
    }

    /// An outbox that hands every frame to `file`, on the sending thread.
    pub fn direct(file: impl Fn(Outgoing) + Send + Sync + 'static) -> Outbox {
        Outbox::with_sink(Sink::Direct(Arc::new(file)))
    }

    fn with_sink(sink: Sink) -> Outbox {
        let pending = Pending { next_id: AtomicI64::new(0), waiting: Mutex::new(HashMap::new()) };
        Outbox { sink, pending: Arc::new(pending) }
    }

    /// Sends a notification.
    pub fn notify<P: Serialize>(&self, method: &str, params: &P, session: Option<&str>) {
        self.send(&OutNotification { jsonrpc: "2.0", method, params }, session);
    }

    /// Answers a request with a result.
    pub fn respond<R: Serialize>(&self, id: &RequestId, result: &R, session: Option<&str>) {
        self.send(&OutResult { jsonrpc: "2.0", id, result }, session);
    }

    /// Answers a request (or an unidentifiable frame, `id: None`) with an error.
    pub fn respond_error(&self, id: Option<&RequestId>, error: &RpcError, session: Option<&str>) {
        self.send(&OutError { jsonrpc: "2.0", id, error }, session);
    }

    /// Sends a request to the client; the receiver yields its answer. Dropping the last
    /// `Outbox` clone, or `forget`, disconnects the receiver.
    pub fn request<P: Serialize>(
        &self,
        method: &str,
        params: &P,
        session: Option<&str>,
    ) -> (RequestId, Receiver<Result<Value, RpcError>>) {
        let id = RequestId::Num(self.pending.next_id.fetch_add(1, Ordering::Relaxed));
        let (reply_tx, reply_rx) = crossbeam_channel::bounded(1);
        self.waiting().insert(id.clone(), reply_tx);
        self.send(&OutRequest { jsonrpc: "2.0", id: &id, method, params }, session);
        (id, reply_rx)
    }

    /// Stops waiting for the answer to one of our requests.
    pub fn forget(&self, id: &RequestId) {
        self.waiting().remove(id);
    }

    /// Delivers a client's response to whoever waits for it; false if nobody does.
    pub fn resolve(&self, response: Response) -> bool {
        let waiter = self.waiting().remove(&response.id);
        match waiter {
            // The waiter may have given up (cancel) between the lookup and now.
            Some(tx) => tx.send(response.result).is_ok(),
            None => false,
        }
    }

    /// Disconnects every waiter (the client is gone).
    pub fn fail_pending(&self) {
        self.waiting().clear();
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, ReplySender>> {
        crate::sync::lock(&self.pending.waiting)
    }

    fn send<T: Serialize>(&self, frame: &T, session: Option<&str>) {
        let bytes = match serde_json::to_vec(frame) {
            Ok(bytes) => bytes,
            Err(err) => {
                log::error!("cannot encode an outgoing frame: {err}");
                return;
            }
        };
        if log::log_enabled!(log::Level::Trace) {
            let text = String::from_utf8_lossy(&bytes);
            log::trace!("> {}", text.chars().take(2048).collect::<String>());
        }
        let outgoing = Outgoing { session: session.map(str::to_string), bytes };
        match &self.sink {
            // A send error means the transport is gone: nobody listens any more.
            Sink::Channel(tx) => {
                let _ = tx.send(outgoing);
            }
            Sink::Direct(file) => file(outgoing),
        }
    }
}
