//! `Outbox`: the clone-able handle every thread uses to send frames, plus the table of our
//! own requests waiting for the client's answer. Frames are encoded on the sending thread.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender};
use serde::Serialize;
use serde_json::Value;

use super::message::{RequestId, Response, RpcError};

/// Encoded frames on their way to the transport, with the session they belong to (if
/// any), which the HTTP transport uses to pick a stream. Usually one frame; a burst of
/// streamed updates travels as several, so that it costs one hand-off.
#[derive(Debug)]
pub struct Outgoing {
    /// Session the frames are tied to.
    pub session: Option<String>,
    /// One or more encoded JSON-RPC messages, each followed by `\n` (newline-delimited
    /// JSON as stdio sends it; encoded JSON never holds a raw newline).
    pub bytes: Vec<u8>,
}

impl Outgoing {
    /// The messages, each without its newline.
    pub fn frames(&self) -> impl Iterator<Item = &[u8]> {
        self.bytes.split(|&b| b == b'\n').filter(|frame| !frame.is_empty())
    }
}

type ReplySender = Sender<Result<Value, RpcError>>;

/// Where encoded frames go: a writer thread's channel (stdio), or a function that files
/// them at once on the sending thread (HTTP, where a stream writer thread follows anyway)
/// and hands the buffer back.
#[derive(Clone)]
enum Sink {
    Channel(Sender<Outgoing>),
    Direct(Arc<dyn Fn(Outgoing) -> Vec<u8> + Send + Sync>),
}

/// Sends frames to the client and tracks the replies to our requests.
#[derive(Clone)]
pub struct Outbox {
    sink: Sink,
    pending: Arc<Pending>,
    spare: Spare,
}

/// Buffers given back by the transport once written, for the next burst of frames: a
/// stream of bursts then costs no allocation (musl's allocator maps and unmaps memory for
/// buffers of this size every time).
#[derive(Clone)]
pub struct Spare {
    tx: Sender<Vec<u8>>,
    rx: Receiver<Vec<u8>>,
}

/// Buffers kept for reuse, and the largest kept (a huge frame's buffer is let go).
const SPARE_BUFFERS: usize = 8;
const SPARE_MAX_BYTES: usize = 64 << 10;

impl Spare {
    fn new() -> Spare {
        let (tx, rx) = crossbeam_channel::bounded(SPARE_BUFFERS);
        Spare { tx, rx }
    }

    /// Gives a written buffer back.
    pub fn give(&self, mut bytes: Vec<u8>) {
        if bytes.capacity() <= SPARE_MAX_BYTES {
            bytes.clear();
            let _ = self.tx.try_send(bytes);
        }
    }

    fn take(&self) -> Vec<u8> {
        self.rx.try_recv().unwrap_or_default()
    }
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

    /// An outbox that hands every frame to `file`, on the sending thread; `file` gives the
    /// buffer back once done with it (to be used again).
    pub fn direct(file: impl Fn(Outgoing) -> Vec<u8> + Send + Sync + 'static) -> Outbox {
        Outbox::with_sink(Sink::Direct(Arc::new(file)))
    }

    fn with_sink(sink: Sink) -> Outbox {
        let pending = Pending { next_id: AtomicI64::new(0), waiting: Mutex::new(HashMap::new()) };
        Outbox { sink, pending: Arc::new(pending), spare: Spare::new() }
    }

    /// Where a writer thread gives written buffers back (`Outgoing::bytes`).
    pub fn spare(&self) -> Spare {
        self.spare.clone()
    }

    /// An empty buffer for `send_encoded`, with room for `bytes` bytes: a given-back one
    /// when there is one.
    pub fn buffer(&self, bytes: usize) -> Vec<u8> {
        let mut buffer = self.spare.take();
        buffer.reserve(bytes);
        buffer
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
        let mut bytes = self.spare.take();
        match encode(&mut bytes, frame) {
            Ok(()) => self.hand_over(bytes, session),
            Err(err) => log::error!("cannot encode an outgoing frame: {err}"),
        }
    }

    /// Sends frames encoded elsewhere (by `Template::render`: each one whole and followed
    /// by its newline), in order, as one hand-off to the transport.
    pub fn send_encoded(&self, bytes: Vec<u8>, session: Option<&str>) {
        self.hand_over(bytes, session);
    }

    /// Passes encoded frames to the transport.
    fn hand_over(&self, bytes: Vec<u8>, session: Option<&str>) {
        if bytes.is_empty() {
            return;
        }
        let outgoing = Outgoing { session: session.map(str::to_string), bytes };
        if log::log_enabled!(log::Level::Trace) {
            for frame in outgoing.frames() {
                let text = String::from_utf8_lossy(frame);
                log::trace!("> {}", text.chars().take(2048).collect::<String>());
            }
        }
        match &self.sink {
            // A send error means the transport is gone: nobody listens any more.
            Sink::Channel(tx) => {
                let _ = tx.send(outgoing);
            }
            Sink::Direct(file) => self.spare.give(file(outgoing)),
        }
    }
}

/// A notification encoded once, with one string left open: a stream of updates that differ
/// only in their text costs one copy and one escape per update instead of a serialisation.
/// The bytes around the hole come from serialising the real params, so the frame is exactly
/// what `notify` would send.
#[derive(Debug)]
pub struct Template {
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl Template {
    /// Marks the hole in the params given to `notification`.
    pub const HOLE: &'static str = "\u{1}iac-code:hole\u{1}";

    /// The notification `method` with `params`, in which the string `Template::HOLE`
    /// appears exactly once; `None` if it does not (or the params cannot be encoded).
    pub fn notification<P: Serialize>(method: &str, params: &P) -> Option<Template> {
        let mut bytes = Vec::new();
        encode(&mut bytes, &OutNotification { jsonrpc: "2.0", method, params }).ok()?;
        let hole = serde_json::to_vec(Template::HOLE).ok()?;
        let at = find(&bytes, &hole)?;
        if find(&bytes[at + 1..], &hole).is_some() {
            return None;
        }
        let tail = bytes.split_off(at + hole.len());
        bytes.truncate(at);
        Some(Template { head: bytes, tail })
    }

    /// Bytes of a frame around its piece (its newline included).
    pub fn overhead(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Appends the frame with `piece` in the hole (and its newline) to `out`.
    pub fn render(&self, out: &mut Vec<u8>, piece: &str) {
        out.extend_from_slice(&self.head);
        // Writing a string into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, piece);
        out.extend_from_slice(&self.tail);
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

/// Appends one frame and its newline to `bytes`.
fn encode<T: Serialize>(bytes: &mut Vec<u8>, frame: &T) -> serde_json::Result<()> {
    serde_json::to_writer(&mut *bytes, frame)?;
    bytes.push(b'\n');
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn collect() -> (Outbox, Receiver<Outgoing>) {
        let (tx, rx) = crossbeam_channel::unbounded();
        (Outbox::new(tx), rx)
    }

    #[test]
    fn a_template_renders_exactly_what_notify_sends() {
        let params = |text: &str| json!({"sessionId": "s-1", "update": {"text": text, "n": 1}});
        let template = Template::notification("session/update", &params(Template::HOLE)).unwrap();
        let (outbox, rx) = collect();
        for piece in ["plain", "\"q\"\\\n\t\u{1}", "ñ 🦀", Template::HOLE, ""] {
            outbox.notify("session/update", &params(piece), Some("s-1"));
            let sent = rx.try_recv().unwrap().bytes;
            let mut rendered = Vec::new();
            template.render(&mut rendered, piece);
            assert_eq!(String::from_utf8(rendered).unwrap(), String::from_utf8(sent).unwrap());
        }
    }

    #[test]
    fn a_template_needs_exactly_one_hole() {
        let none = json!({"text": "no hole here"});
        assert!(Template::notification("m", &none).is_none());
        let two = json!({"a": Template::HOLE, "b": Template::HOLE});
        assert!(Template::notification("m", &two).is_none());
    }

    #[test]
    fn a_burst_is_one_hand_off_of_whole_lines() {
        let template = Template::notification("m", &json!({"t": Template::HOLE})).unwrap();
        let mut bytes = Vec::new();
        for piece in ["a\nb", "c"] {
            template.render(&mut bytes, piece);
        }
        let (outbox, rx) = collect();
        outbox.send_encoded(bytes, Some("s"));
        let outgoing = rx.try_recv().unwrap();
        assert!(rx.try_recv().is_err(), "one hand-off");
        assert_eq!(outgoing.session.as_deref(), Some("s"));
        let frames: Vec<Value> =
            outgoing.frames().map(|f| serde_json::from_slice(f).unwrap()).collect();
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0]["params"]["t"], "a\nb");
        assert_eq!(frames[1]["params"]["t"], "c");
        assert!(outgoing.bytes.ends_with(b"\n"));
    }

    #[test]
    fn written_buffers_are_used_again_unless_huge() {
        let (outbox, _rx) = collect();
        let spare = outbox.spare();
        let mut used = Vec::with_capacity(1000);
        used.extend_from_slice(b"old frame\n");
        let at = used.as_ptr();
        spare.give(used);
        let again = outbox.buffer(10);
        assert!(again.is_empty(), "given back empty");
        assert_eq!(again.as_ptr(), at, "the same buffer");
        spare.give(Vec::with_capacity(SPARE_MAX_BYTES + 1));
        assert!(outbox.buffer(0).capacity() <= SPARE_MAX_BYTES, "a huge buffer is let go");
        // A direct sink hands its buffer back too.
        let direct = Outbox::direct(|outgoing| outgoing.bytes);
        direct.notify("m", &json!({}), None);
        assert!(direct.buffer(0).capacity() > 0, "the frame's buffer came back");
    }
}
