//! The older HTTP+SSE transport (MCP 2024-11-05): a GET event stream whose `endpoint`
//! event names where to POST (on the stream's own origin: the entry's headers, its
//! credentials, never go to a host the user did not name), and whose `message` events
//! carry everything the server sends. Our messages are POSTed, in order, by one thread
//! from a bounded queue, so no caller waits for a POST.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread;
use std::time::Duration;

use crossbeam_channel::Sender;

use super::http::{Events, HttpSetup, NOTIFY_WAIT, read_events};
use super::peer::{Link, Peer};
use crate::sync::lock;

/// The older HTTP+SSE transport.
pub(super) struct SseLink {
    /// Messages for the posting thread, in order; taken on close.
    input: Mutex<Option<Sender<Vec<u8>>>>,
    closed: Arc<AtomicBool>,
    /// The connection's HTTP settings, whose agent `close` shuts down.
    streams: HttpSetup,
}

/// Messages waiting to be POSTed, at most; a send waits `NOTIFY_WAIT` for room.
const QUEUE: usize = 256;

impl SseLink {
    /// Opens the event stream and waits (at most `wait`) for the `endpoint` event.
    pub(super) fn start(
        setup: HttpSetup,
        peer: &Arc<Peer>,
        wait: Duration,
    ) -> Result<Arc<SseLink>, String> {
        let closed = Arc::new(AtomicBool::new(false));
        let streams = setup.clone();
        let (found_tx, found) = crossbeam_channel::bounded::<Result<String, String>>(1);
        let weak = Arc::downgrade(peer);
        let stream_closed = Arc::clone(&closed);
        let stream_setup = setup.clone();
        thread::Builder::new()
            .name("mcp-sse".into())
            .spawn(move || listen(&stream_setup, &weak, &stream_closed, found_tx))
            .map_err(|err| err.to_string())?;
        let endpoint = match found.recv_timeout(wait) {
            Ok(found) => found?,
            Err(_) => {
                closed.store(true, Ordering::SeqCst);
                streams.close_streams();
                return Err(format!("no endpoint event within {} s", wait.as_secs()));
            }
        };
        let (input, messages) = crossbeam_channel::bounded::<Vec<u8>>(QUEUE);
        let weak = Arc::downgrade(peer);
        let post_closed = Arc::clone(&closed);
        // One poster keeps the messages in order, and no caller waits for a POST.
        thread::Builder::new()
            .name("mcp-sse-post".into())
            .spawn(move || {
                for message in messages.iter() {
                    if let Err(why) = post(&setup, &endpoint, &message) {
                        if let Some(peer) = weak.upgrade()
                            && !post_closed.load(Ordering::SeqCst)
                        {
                            peer.fail(why);
                        }
                        return;
                    }
                }
            })
            .map_err(|err| err.to_string())?;
        Ok(Arc::new(SseLink { input: Mutex::new(Some(input)), closed, streams }))
    }
}

/// Reads the event stream: the `endpoint` (told through `found`), then every message.
fn listen(
    setup: &HttpSetup,
    peer: &Weak<Peer>,
    closed: &AtomicBool,
    found_tx: Sender<Result<String, String>>,
) {
    let mut request = setup.agent.get(&setup.url).header("Accept", "text/event-stream");
    for (name, value) in &setup.headers {
        request = request.header(name, value);
    }
    let response = match request.call() {
        Ok(response) if response.status().as_u16() == 200 => response,
        Ok(response) => {
            let status = response.status();
            let _ = found_tx.send(Err(format!("the event stream answered HTTP {status}")));
            return;
        }
        Err(err) => {
            let _ = found_tx.send(Err(format!("cannot open the event stream: {err}")));
            return;
        }
    };
    let mut found = Some(found_tx);
    let end = read_events(response.into_body().into_reader(), &mut |event, data| {
        if closed.load(Ordering::SeqCst) {
            return false;
        }
        if event == "endpoint" {
            if let Some(tx) = found.take() {
                let _ = tx.send(same_origin(&setup.url, data.trim()));
            }
            return true;
        }
        match peer.upgrade() {
            Some(peer) => {
                peer.deliver(data.as_bytes());
                peer.broken().is_none()
            }
            None => false,
        }
    });
    if let Some(tx) = found.take() {
        let _ = tx.send(Err("the event stream ended before naming an endpoint".into()));
    } else if let Some(peer) = peer.upgrade()
        && !closed.load(Ordering::SeqCst)
    {
        peer.fail(match end {
            Events::Broken(why) => why,
            Events::Ended => "the event stream closed".to_string(),
        });
    }
}

/// POSTs one message to the endpoint.
fn post(setup: &HttpSetup, endpoint: &str, message: &[u8]) -> Result<(), String> {
    let mut request = setup.agent.post(endpoint).header("Content-Type", "application/json");
    for (name, value) in &setup.headers {
        request = request.header(name, value);
    }
    let request = request.config().timeout_global(Some(NOTIFY_WAIT)).build();
    let response = request.send(message).map_err(|err| format!("a POST failed: {err}"))?;
    let status = response.status().as_u16();
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(format!("HTTP {status} from {endpoint}"))
    }
}

impl Link for SseLink {
    fn send(&self, message: &[u8]) -> Result<(), String> {
        let Some(input) = lock(&self.input).clone() else {
            return Err("the connection is closed".into());
        };
        input.send_timeout(message.to_vec(), NOTIFY_WAIT).map_err(|_| {
            format!("its endpoint has taken no message for {} s", NOTIFY_WAIT.as_secs())
        })
    }

    fn close(&self) {
        // The stream's thread stops at once: its socket is shut down.
        self.closed.store(true, Ordering::SeqCst);
        lock(&self.input).take();
        self.streams.close_streams();
    }
}

/// `endpoint` (absolute, or relative to `base`) if it has `base`'s origin: the entry's
/// headers (its credentials) never go to a host the user did not name.
pub(super) fn same_origin(base: &str, endpoint: &str) -> Result<String, String> {
    let origin = |url: &str| -> Option<String> {
        let after = url.find("://")? + 3;
        let end = url[after..].find(['/', '?', '#']).map_or(url.len(), |i| after + i);
        Some(url[..end].to_ascii_lowercase())
    };
    let Some(base_origin) = origin(base) else { return Err(format!("bad url {base}")) };
    let resolved = if endpoint.starts_with("http://") || endpoint.starts_with("https://") {
        endpoint.to_string()
    } else if endpoint.starts_with('/') {
        format!("{}{endpoint}", &base[..base_origin.len()])
    } else {
        let dir = base.rfind('/').filter(|&i| i >= base_origin.len()).map_or(base, |i| &base[..=i]);
        let dir = if dir.len() == base_origin.len() { format!("{dir}/") } else { dir.to_string() };
        format!("{dir}{endpoint}")
    };
    match origin(&resolved) {
        Some(o) if o == base_origin => Ok(resolved),
        _ => Err(format!("the server named an endpoint on another origin: {endpoint}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_stay_on_the_servers_origin() {
        let base = "http://127.0.0.1:8080/sse";
        assert_eq!(
            same_origin(base, "/messages?s=1").unwrap(),
            "http://127.0.0.1:8080/messages?s=1"
        );
        assert_eq!(same_origin(base, "messages").unwrap(), "http://127.0.0.1:8080/messages");
        assert_eq!(same_origin("https://h/a/sse", "post").unwrap(), "https://h/a/post");
        assert!(same_origin(base, "http://127.0.0.1:8080/x").is_ok());
        assert!(same_origin(base, "http://evil.example/x").is_err());
        assert!(same_origin(base, "http://127.0.0.1:8081/x").is_err());
    }
}
