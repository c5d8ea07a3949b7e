//! The JSON-RPC side of a connection, without a transport: what the server sends and what
//! we answer, through a link that records our messages.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::*;

#[derive(Default)]
struct Recorder {
    sent: Mutex<Vec<Value>>,
    closed: Mutex<bool>,
}

impl Link for Recorder {
    fn send(&self, message: &[u8]) -> Result<(), String> {
        let value = serde_json::from_slice(message).map_err(|e| e.to_string())?;
        self.sent.lock().map_err(|e| e.to_string())?.push(value);
        Ok(())
    }
    fn close(&self) {
        if let Ok(mut closed) = self.closed.lock() {
            *closed = true;
        }
    }
}

fn setup() -> (Arc<Peer>, Arc<Recorder>) {
    let peer = Peer::new("t", std::path::PathBuf::from("/work/project"));
    let link = Arc::new(Recorder::default());
    peer.attach(Arc::clone(&link) as Arc<dyn Link>);
    (peer, link)
}

fn sent(link: &Recorder) -> Vec<Value> {
    link.sent.lock().map(|s| s.clone()).unwrap_or_default()
}

/// Runs a request on a thread; `answer` is delivered once the request is out.
fn call(
    peer: &Arc<Peer>,
    link: &Arc<Recorder>,
    answer: impl Fn(i64) -> String,
) -> Result<Value, CallError> {
    let before = sent(link).len();
    let requester = Arc::clone(peer);
    let thread = std::thread::spawn(move || {
        requester.request(
            "tools/call",
            json!({"name": "x"}),
            Duration::from_secs(10),
            None,
            &|_| {},
        )
    });
    let id = loop {
        if let Some(id) = sent(link).iter().skip(before).find_map(|m| m["id"].as_i64()) {
            break id;
        }
        std::thread::yield_now();
    };
    peer.deliver(answer(id).as_bytes());
    thread.join().unwrap_or_else(|_| Err(CallError::Broken("panicked".into())))
}

#[test]
fn answers_reach_their_request_with_a_progress_token() {
    let (peer, link) = setup();
    let result =
        call(&peer, &link, |id| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"ok":1}}}}"#));
    assert_eq!(result, Ok(json!({"ok": 1})));
    let request = &sent(&link)[0];
    assert_eq!(request["params"]["_meta"]["progressToken"], request["id"]);
    let error = call(&peer, &link, |id| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"bad"}}}}"#)
    });
    assert_eq!(error, Err(CallError::Rpc(-32602, "bad".into())));
    assert!(peer.broken().is_none());
}

#[test]
fn a_wrong_id_or_garbage_breaks_the_connection_and_fails_the_call_at_once() {
    let (peer, link) = setup();
    let result =
        call(&peer, &link, |id| format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, id + 100));
    assert!(
        matches!(&result, Err(CallError::Broken(why)) if why.contains("never sent")),
        "{result:?}"
    );
    assert!(*link.closed.lock().unwrap_or_else(|e| e.into_inner()), "the link is closed");
    let (peer, link) = setup();
    let result = call(&peer, &link, |_| "this is not json".to_string());
    assert!(
        matches!(&result, Err(CallError::Broken(why)) if why.contains("not JSON-RPC")),
        "{result:?}"
    );
    let later = peer.request("ping", Value::Null, Duration::from_secs(1), None, &|_| {});
    assert!(matches!(later, Err(CallError::Broken(_))), "a broken peer fails at once");
}

#[test]
fn server_requests_are_answered_and_notifications_heard() {
    let (peer, link) = setup();
    peer.deliver(br#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#);
    peer.deliver(br#"{"jsonrpc":"2.0","id":7,"method":"roots/list"}"#);
    peer.deliver(br#"{"jsonrpc":"2.0","id":8,"method":"sampling/createMessage","params":{}}"#);
    peer.deliver(br#"[{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}]"#);
    let answers = sent(&link);
    assert_eq!(answers[0], json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
    assert_eq!(answers[1]["result"]["roots"][0]["uri"], "file:///work/project");
    assert_eq!(answers[2]["error"]["code"], -32601, "sampling is not supported");
    assert!(peer.stale.load(Ordering::SeqCst), "a batch is read item by item");
    assert!(peer.broken().is_none());
}

#[test]
fn a_cancel_tells_the_server_and_a_late_answer_is_ignored() {
    let (peer, link) = setup();
    let cancel = CancelToken::new();
    cancel.cancel();
    let result =
        peer.request("tools/call", json!({}), Duration::from_secs(10), Some(&cancel), &|_| {});
    assert_eq!(result, Err(CallError::Cancelled));
    let messages = sent(&link);
    assert_eq!(messages[1]["method"], "notifications/cancelled");
    assert_eq!(messages[1]["params"]["requestId"], messages[0]["id"]);
    let id = messages[0]["id"].as_i64().unwrap_or_default();
    peer.deliver(format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#).as_bytes());
    assert!(peer.broken().is_none(), "an answer after a cancel is not a protocol error");
}
