//! Streamable HTTP, and what both HTTP transports share (the agent, the event stream
//! reader). Streamable HTTP: every message is a POST (`Accept: application/json,
//! text/event-stream`); a request's answer comes as a JSON body or as an event stream read
//! on its own thread (with any progress and server requests before it) until our answer
//! is in; `Mcp-Session-Id` from the `initialize` answer and `MCP-Protocol-Version` go on
//! every later request with the entry's headers; an optional GET stream carries what the
//! server says unprompted; closing DELETEs the session. An error status answers that
//! request with a JSON-RPC error naming the status (never the body: the URL may be a
//! client's); a connection that fails or breaks mid-answer fails the server, so nothing
//! waits for a reply that cannot come. Notifications are bounded by
//! `NOTIFY_WAIT`; a cancel's notification is sent from its own thread.

use std::io::{BufRead, BufReader, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use super::peer::{Link, Peer};
use super::stdio::MAX_LINE;
use crate::sync::lock;

/// How long a POST that expects no answer (a notification, our answer to the server) or a
/// DELETE may take.
pub(super) const NOTIFY_WAIT: Duration = Duration::from_secs(10);

/// A connection's HTTP settings.
#[derive(Clone)]
pub(super) struct HttpSetup {
    /// This connection's own agent (its own pool): closing the connection shuts it down,
    /// which ends every stream and answer still being read at once (`close_streams`).
    pub(super) agent: ureq::Agent,
    pub(super) url: String,
    pub(super) headers: Vec<(String, String)>,
}

impl HttpSetup {
    /// The settings of one connection to `url`, with an agent of its own configured like
    /// `agent`.
    pub(super) fn own(agent: &ureq::Agent, url: &str, headers: &[(String, String)]) -> HttpSetup {
        HttpSetup {
            agent: ureq::Agent::new_with_config(agent.config().clone()),
            url: url.to_string(),
            headers: headers.to_vec(),
        }
    }

    /// Ends every request of this connection still open (a silent GET stream, a call's
    /// answer), closing their sockets: their threads return at once.
    pub(super) fn close_streams(&self) {
        self.agent.clone().shutdown();
    }

    /// A fresh agent configured like this connection's, for what is sent after
    /// `close_streams` (the DELETE that ends the session).
    fn fresh_agent(&self) -> ureq::Agent {
        ureq::Agent::new_with_config(self.agent.config().clone())
    }
}

/// The agent every MCP HTTP connection uses: the site CA (if any) and proxy as for the
/// providers, no redirects; no overall deadline (calls are bounded by their callers,
/// streams may idle).
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

impl Failure {
    fn text(self) -> String {
        match self {
            Failure::Refused(why) | Failure::Broken(why) => why,
        }
    }
}

/// Streamable HTTP.
pub(super) struct StreamableLink {
    me: Weak<StreamableLink>,
    setup: HttpSetup,
    peer: Weak<Peer>,
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

    /// POSTs `message`; the answer to request `id` (JSON or an event stream) goes to the
    /// peer. `wait` bounds a POST that expects no answer.
    fn post(&self, message: &[u8], id: Option<i64>, wait: Option<Duration>) -> Result<(), Failure> {
        let mut request = self
            .setup
            .agent
            .post(&self.setup.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        for (name, value) in self.headers() {
            request = request.header(name, value);
        }
        if let Some(wait) = wait {
            request = request.config().timeout_global(Some(wait)).build();
        }
        let response = request
            .send(message)
            .map_err(|err| Failure::Broken(format!("the request failed: {err}")))?;
        let status = response.status().as_u16();
        if let Some(session) = response.headers().get("mcp-session-id")
            && let Ok(session) = session.to_str()
        {
            lock(&self.session).get_or_insert_with(|| session.to_string());
        }
        let Some(peer) = self.peer.upgrade() else { return Ok(()) };
        if status == 404 && lock(&self.session).is_some() {
            return Err(Failure::Broken("the server ended the MCP session (HTTP 404)".into()));
        }
        if !(200..300).contains(&status) {
            // The status only: the body of whatever answered stays out of errors.
            return Err(Failure::Refused(format!("HTTP {status}")));
        }
        let Some(id) = id.filter(|_| status != 202) else { return Ok(()) };
        let event_stream = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let mut body = response.into_body();
        if event_stream {
            // Until our answer is in: what comes after it is not ours to wait for.
            let end = read_events(body.into_reader(), &mut |_, data| {
                peer.deliver(data.as_bytes());
                peer.broken().is_none() && peer.is_waiting(id)
            });
            if let Events::Broken(why) = end {
                return Err(Failure::Broken(why));
            }
        } else {
            let bytes = body
                .with_config()
                .limit(MAX_LINE as u64)
                .read_to_vec()
                .map_err(|err| Failure::Broken(format!("reading the answer failed: {err}")))?;
            peer.deliver(&bytes);
        }
        if peer.is_waiting(id) {
            return Err(Failure::Broken("it ended its answer without the reply".into()));
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
            let mut request =
                link.setup.agent.get(&link.setup.url).header("Accept", "text/event-stream");
            for (name, value) in link.headers() {
                request = request.header(name, value);
            }
            let Ok(response) = request.call() else { return };
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

    /// POSTs a request on its own thread (its answer may take as long as the call).
    fn request(self: Arc<Self>, message: Vec<u8>, id: i64) -> Result<(), String> {
        let spawned = thread::Builder::new().name("mcp-post".into()).spawn(move || {
            let result = self.post(&message, Some(id), None);
            let Some(peer) = self.peer.upgrade() else { return };
            match result {
                Ok(()) => {}
                Err(Failure::Refused(why)) => {
                    let error = json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32603, "message": why}});
                    peer.deliver(error.to_string().as_bytes());
                }
                Err(Failure::Broken(why)) if !self.closed.load(Ordering::SeqCst) => peer.fail(why),
                Err(Failure::Broken(_)) => {}
            }
        });
        spawned.map(|_| ()).map_err(|err| err.to_string())
    }
}

impl Link for StreamableLink {
    fn send(&self, message: &[u8]) -> Result<(), String> {
        if self.closed.load(Ordering::SeqCst) {
            return Err("the connection is closed".into());
        }
        let Some(this) = self.me.upgrade() else { return Err("the connection is closed".into()) };
        let parsed: Value = serde_json::from_slice(message).unwrap_or(Value::Null);
        let method = parsed.get("method").and_then(Value::as_str).unwrap_or("");
        match parsed.get("id").and_then(Value::as_i64) {
            Some(id) if !method.is_empty() => this.request(message.to_vec(), id),
            // Telling the server to stop never holds up the one who stopped.
            _ if method == "notifications/cancelled" => {
                let message = message.to_vec();
                let spawned = thread::Builder::new().name("mcp-post".into()).spawn(move || {
                    let _ = this.post(&message, None, Some(NOTIFY_WAIT));
                });
                spawned.map(|_| ()).map_err(|err| err.to_string())
            }
            _ => this.post(message, None, Some(NOTIFY_WAIT)).map_err(Failure::text),
        }
    }

    fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        // A silent GET stream (or a hung answer) must not keep a thread and a socket.
        self.setup.close_streams();
        if lock(&self.session).is_some() {
            let mut request = self.setup.fresh_agent().delete(&self.setup.url);
            for (name, value) in self.headers() {
                request = request.header(name, value);
            }
            match request.config().timeout_global(Some(NOTIFY_WAIT)).build().call() {
                Ok(response) => log::debug!("MCP session ended: HTTP {}", response.status()),
                Err(err) => log::debug!("MCP session end failed: {err}"),
            }
        }
    }

    fn set_version(&self, version: &str) {
        *lock(&self.version) = Some(version.to_string());
    }

    fn opened(&self) {
        if let Some(this) = self.me.upgrade() {
            this.listen();
        }
    }
}

/// How an event stream ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Events {
    /// The server closed it, or the reader stopped.
    Ended,
    /// It broke: a read failed, or an event was over `MAX_LINE`.
    Broken(String),
}

/// Reads an event stream, calling `on_event(event, data)` for each event until it returns
/// false or the stream ends. Neither a line nor an event's data may pass `MAX_LINE`.
pub(super) fn read_events(
    reader: impl Read,
    on_event: &mut dyn FnMut(&str, &str) -> bool,
) -> Events {
    let mut reader = BufReader::with_capacity(16 << 10, reader);
    let mut line = Vec::new();
    let mut event = String::new();
    let mut data = String::new();
    let too_big = || Events::Broken(format!("it sent an event over {} MiB", MAX_LINE >> 20));
    loop {
        line.clear();
        match (&mut reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line) {
            Ok(0) => return Events::Ended,
            Err(err) => return Events::Broken(format!("reading its event stream failed: {err}")),
            Ok(_) if line.len() > MAX_LINE => return too_big(),
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if !data.is_empty() || !event.is_empty() {
                let name = if event.is_empty() { "message" } else { event.as_str() };
                if !on_event(name, &data) {
                    return Events::Ended;
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
                if data.len() + value.len() + 1 > MAX_LINE {
                    return too_big();
                }
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
        let end = read_events(&stream[..], &mut |e, d| {
            seen.push(format!("{e}={d}"));
            true
        });
        assert_eq!(seen, ["endpoint=/m", "message={\"a\":\n1}"]);
        assert_eq!(end, Events::Ended);
    }

    #[test]
    fn an_endless_event_breaks_the_stream_not_our_memory() {
        let line = format!("data: {}\n", "x".repeat(1 << 20));
        let stream = line.repeat(17);
        let end = read_events(stream.as_bytes(), &mut |_, _| true);
        assert!(matches!(end, Events::Broken(ref why) if why.contains("over 16 MiB")), "{end:?}");
    }
}
