//! Streamable HTTP, and what both HTTP transports share (the agent, the event stream
//! reader). Streamable HTTP: every message is a POST (`Accept:
//! application/json, text/event-stream`); a request's answer comes as a JSON body or as an
//! event stream read on its own thread (with any progress and server requests before it);
//! `Mcp-Session-Id` from the `initialize` answer and `MCP-Protocol-Version` go on every
//! later request with the entry's headers; an optional GET stream carries what the server
//! says unprompted; closing DELETEs the session. A failed POST of a request is answered to
//! its caller as a JSON-RPC error, so nothing waits for a reply that cannot come.

use std::io::{BufRead, BufReader, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use super::peer::{Link, Peer};
use super::stdio::MAX_LINE;
use crate::sync::lock;

/// A connection's HTTP settings.
#[derive(Clone)]
pub(super) struct HttpSetup {
    pub(super) agent: ureq::Agent,
    pub(super) url: String,
    pub(super) headers: Vec<(String, String)>,
}

/// The agent every MCP HTTP connection uses: the site CA (if any) and proxy as for the
/// providers; no overall deadline (calls are bounded by their callers, streams may idle).
pub(super) fn agent(tls: Option<&ureq::tls::TlsConfig>, response: Duration) -> ureq::Agent {
    let mut builder = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(Duration::from_secs(10)))
        .timeout_recv_response(Some(response))
        .user_agent(concat!("iac-code/", env!("CARGO_PKG_VERSION")))
        // A redirect would carry the entry's headers (its credentials) to another host.
        .max_redirects(0);
    if let Some(tls) = tls {
        builder = builder.tls_config(tls.clone());
    }
    builder.build().new_agent()
}

/// Why a POST got no answer.
enum Failure {
    /// The server answered with an error status: the request failed, the server lives.
    Refused(String),
    /// The connection failed or broke mid-answer: the server is failed.
    Broken(String),
}

/// Streamable HTTP.
pub(super) struct StreamableLink {
    me: std::sync::Weak<StreamableLink>,
    setup: HttpSetup,
    peer: std::sync::Weak<Peer>,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    closed: AtomicBool,
    listening: AtomicBool,
}

impl StreamableLink {
    pub(super) fn new(setup: HttpSetup, peer: &Arc<Peer>) -> Arc<StreamableLink> {
        Arc::new_cyclic(|me| StreamableLink {
            me: me.clone(),
            setup,
            peer: Arc::downgrade(peer),
            session: Mutex::new(None),
            version: Mutex::new(None),
            closed: AtomicBool::new(false),
            listening: AtomicBool::new(false),
        })
    }

    fn request(&self, method: &str) -> ureq::RequestBuilder<ureq::typestate::WithoutBody> {
        let url = &self.setup.url;
        let mut request = match method {
            "GET" => self.setup.agent.get(url),
            _ => self.setup.agent.delete(url),
        };
        for (name, value) in self.headers() {
            request = request.header(name, value);
        }
        request
    }

    fn headers(&self) -> Vec<(String, String)> {
        let mut headers = self.setup.headers.clone();
        if let Some(session) = lock(&self.session).clone() {
            headers.push(("Mcp-Session-Id".into(), session));
        }
        if let Some(version) = lock(&self.version).clone() {
            headers.push(("MCP-Protocol-Version".into(), version));
        }
        headers
    }

    /// POSTs `message`; delivers the answer (JSON or an event stream) to the peer.
    fn post(self: &Arc<Self>, message: Vec<u8>, id: Option<Value>) -> Result<(), Failure> {
        let mut request = self
            .setup
            .agent
            .post(&self.setup.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        for (name, value) in self.headers() {
            request = request.header(name, value);
        }
        let response = request
            .send(&message[..])
            .map_err(|err| Failure::Broken(format!("the request failed: {err}")))?;
        let status = response.status().as_u16();
        if let Some(session) = response.headers().get("mcp-session-id")
            && let Ok(session) = session.to_str()
        {
            let mut slot = lock(&self.session);
            if slot.is_none() {
                *slot = Some(session.to_string());
            }
        }
        let Some(peer) = self.peer.upgrade() else { return Ok(()) };
        if status == 404 && lock(&self.session).is_some() {
            peer.fail("the server ended the MCP session (HTTP 404)".to_string());
            return Ok(());
        }
        if !(200..300).contains(&status) {
            let mut body = response.into_body();
            let text = body.with_config().limit(4096).read_to_string().unwrap_or_default();
            let text = crate::text::one_line(&text, " ", 200);
            return Err(Failure::Refused(format!("HTTP {status}: {text}")));
        }
        if status == 202 || id.is_none() {
            return Ok(());
        }
        let event_stream = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let mut body = response.into_body();
        if event_stream {
            read_events(body.into_reader(), &mut |_, data| {
                peer.deliver(data.as_bytes());
                peer.broken().is_none()
            });
        } else {
            let bytes = body
                .with_config()
                .limit(MAX_LINE as u64)
                .read_to_vec()
                .map_err(|err| Failure::Broken(format!("reading the answer failed: {err}")))?;
            peer.deliver(&bytes);
        }
        Ok(())
    }

    /// Opens the GET stream for what the server says unprompted (if it offers one).
    fn listen(self: &Arc<Self>) {
        if self.listening.swap(true, Ordering::SeqCst) {
            return;
        }
        let link = Arc::clone(self);
        let _ = thread::Builder::new().name("mcp-listen".into()).spawn(move || {
            let response = link.request("GET").header("Accept", "text/event-stream").call();
            let Ok(response) = response else { return };
            if response.status().as_u16() != 200 {
                return;
            }
            read_events(
                response.into_body().into_reader(),
                &mut |_, data| match link.peer.upgrade() {
                    Some(peer) if !link.closed.load(Ordering::SeqCst) => {
                        peer.deliver(data.as_bytes());
                        true
                    }
                    _ => false,
                },
            );
        });
    }
}

impl Link for StreamableLink {
    fn send(&self, message: &[u8]) -> Result<(), String> {
        if self.closed.load(Ordering::SeqCst) {
            return Err("the connection is closed".into());
        }
        let parsed: Value = serde_json::from_slice(message).unwrap_or(Value::Null);
        let id = parsed.get("method").and(parsed.get("id")).cloned();
        let Some(this) = self.peer.upgrade().and_then(|_| self.me()) else {
            return Err("the connection is closed".into());
        };
        match id {
            // A request's answer may take as long as the call: read it on its own thread.
            Some(id) => {
                let message = message.to_vec();
                let spawned = thread::Builder::new().name("mcp-post".into()).spawn(move || {
                    let result = this.post(message, Some(id.clone()));
                    let Some(peer) = this.peer.upgrade() else { return };
                    // An answer already delivered makes this one late, and ignored.
                    let refused = |message: String| {
                        let error = json!({"jsonrpc": "2.0", "id": id,
                            "error": {"code": -32603, "message": message}});
                        peer.deliver(error.to_string().as_bytes());
                    };
                    match result {
                        Ok(()) => refused("the server ended its answer without a reply".into()),
                        Err(Failure::Refused(why)) => refused(why),
                        Err(Failure::Broken(why)) if !this.closed.load(Ordering::SeqCst) => {
                            peer.fail(why);
                        }
                        Err(Failure::Broken(_)) => {}
                    }
                });
                spawned.map(|_| ()).map_err(|err| err.to_string())
            }
            None => this.post(message.to_vec(), None).map_err(|failure| match failure {
                Failure::Refused(why) | Failure::Broken(why) => why,
            }),
        }
    }

    fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        if lock(&self.session).is_some() {
            match self.request("DELETE").call() {
                Ok(response) => log::debug!("MCP session ended: HTTP {}", response.status()),
                Err(err) => log::debug!("MCP session end failed: {err}"),
            }
        }
    }

    fn set_version(&self, version: &str) {
        *lock(&self.version) = Some(version.to_string());
        if let Some(this) = self.me() {
            this.listen();
        }
    }
}

impl StreamableLink {
    /// An owning handle to this link (threads it starts keep it alive).
    fn me(&self) -> Option<Arc<StreamableLink>> {
        self.me.upgrade()
    }
}

/// Reads an event stream, calling `on_event(event, data)` for each event until it returns
/// false or the stream ends. Lines are capped at `MAX_LINE`.
pub(super) fn read_events(reader: impl Read, on_event: &mut dyn FnMut(&str, &str) -> bool) {
    let mut reader = BufReader::with_capacity(16 << 10, reader);
    let mut line = Vec::new();
    let mut event = String::new();
    let mut data = String::new();
    loop {
        line.clear();
        match (&mut reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line.len() > MAX_LINE => return,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if !data.is_empty() || !event.is_empty() {
                let name = if event.is_empty() { "message" } else { event.as_str() };
                if !on_event(name, &data) {
                    return;
                }
            }
            event.clear();
            data.clear();
            continue;
        }
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text, ""),
        };
        match field {
            "event" => event = value.to_string(),
            "data" => {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(value);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_split_and_joined() {
        let stream =
            b"event: endpoint\ndata: /m\n\n: comment\ndata: {\"a\":\ndata: 1}\n\ndata: x\n";
        let mut seen = Vec::new();
        read_events(&stream[..], &mut |e, d| {
            seen.push(format!("{e}={d}"));
            true
        });
        assert_eq!(seen, ["endpoint=/m", "message={\"a\":\n1}"]);
    }
}
