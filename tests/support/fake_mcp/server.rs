//! The fake MCP server over HTTP, in process on loopback: the public [`HttpMcp`] handle
//! (start, what was received, the waits, the ACP and `.mcp.json` entries), the accept loop
//! and the connection loop, which hands each request to the transport the server speaks
//! (`streamable` or `legacy`); the state they share is in `shared`.

use std::io::BufReader;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use super::engine::{Engine, Pending, list_changed};
use super::http::read_request;
use super::script::Script;
use super::shared::{Push, Seen, Shared, State};
use super::{legacy, streamable};

/// The bearer token [`HttpMcp::entry`] sends.
pub const TEST_TOKEN: &str = "test-token";

/// Which HTTP transport the fake speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpKind {
    /// Streamable HTTP (2025-03-26 and later): `POST`/`GET`/`DELETE /mcp`.
    Streamable,
    /// HTTP+SSE (2024-11-05): `GET /sse`, then `POST /messages?sessionId=…`.
    LegacySse,
}

/// An in-process fake MCP server on loopback; shut down when dropped (connection threads
/// may outlive it briefly).
pub struct HttpMcp {
    /// What the client connects to: `http://127.0.0.1:<port>/mcp` (Streamable) or
    /// `http://127.0.0.1:<port>/sse` (LegacySse).
    pub url: String,
    pub kind: HttpKind,
    shared: Arc<Shared>,
    addr: SocketAddr,
}

impl HttpMcp {
    /// Binds 127.0.0.1:0 and serves `script` over `kind`.
    pub fn start(script: Script, kind: HttpKind) -> HttpMcp {
        let listener = TcpListener::bind("127.0.0.1:0").expect("fake mcp: cannot bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("fake mcp: no local address");
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
            kind,
            engine: Engine::new(script),
            pending: Pending::default(),
        });
        let accept_shared = Arc::clone(&shared);
        thread::Builder::new()
            .name("fake-mcp-accept".to_owned())
            .spawn(move || accept_loop(&listener, &accept_shared))
            .expect("fake mcp: cannot spawn accept thread");
        let path = match kind {
            HttpKind::Streamable => "/mcp",
            HttpKind::LegacySse => "/sse",
        };
        HttpMcp { url: format!("http://{addr}{path}"), kind, shared, addr }
    }

    /// Every HTTP request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Seen> {
        self.shared.lock().requests.clone()
    }

    /// The headers of every HTTP request so far (names lowercased), in arrival order.
    pub fn headers_seen(&self) -> Vec<Vec<(String, String)>> {
        self.shared.lock().requests.iter().map(|r| r.headers.clone()).collect()
    }

    /// How many sessions a client ended with `DELETE`.
    pub fn deleted(&self) -> usize {
        self.shared.lock().deleted
    }

    /// The session ids handed out so far.
    pub fn sessions(&self) -> Vec<String> {
        let mut sessions: Vec<String> = self.shared.lock().sessions.keys().cloned().collect();
        sessions.sort();
        sessions
    }

    /// The first received message satisfying `predicate`, waiting up to `timeout`.
    pub fn wait_for(&self, predicate: impl Fn(&Value) -> bool, timeout: Duration) -> Option<Value> {
        let mut found = None;
        self.shared.wait_until(timeout, |state| {
            found = state.received.iter().find(|m| predicate(m)).cloned();
            found.is_some()
        });
        found
    }

    /// Standing SSE streams open now (Streamable `GET /mcp`, LegacySse `GET /sse`).
    pub fn streams_open(&self) -> usize {
        self.shared.lock().streams.len()
    }

    /// Waits until at least `n` standing streams are open; false on timeout.
    pub fn wait_streams(&self, n: usize, timeout: Duration) -> bool {
        self.shared.wait_until(timeout, |state| state.streams.len() >= n)
    }

    /// Waits until at least `n` hung requests ended; false on timeout.
    pub fn wait_hangs_ended(&self, n: usize, timeout: Duration) -> bool {
        self.shared.wait_until(timeout, |state| state.hangs_ended >= n)
    }

    /// Switches to `tools_after_change` and sends `notifications/tools/list_changed` on
    /// every open standing stream, outside any call: how many streams took it.
    pub fn change_tools(&self) -> usize {
        self.shared.engine.switch_tools();
        self.shared.push(None, &list_changed())
    }

    /// The ACP `McpServer` entry (`type` "http" or "sse") with the header
    /// `Authorization: Bearer test-token`.
    pub fn entry(&self, name: &str) -> Value {
        self.entry_with_headers(name, &[("Authorization", &format!("Bearer {TEST_TOKEN}"))])
    }

    /// The ACP `McpServer` entry with these headers.
    pub fn entry_with_headers(&self, name: &str, headers: &[(&str, &str)]) -> Value {
        let headers: Vec<Value> =
            headers.iter().map(|(n, v)| json!({"name": n, "value": v})).collect();
        json!({"type": self.type_name(), "name": name, "url": self.url, "headers": headers})
    }

    /// The same server as a `.mcp.json` entry: `{"type","url","headers":{"K":"V"}}`.
    pub fn mcp_json_entry(&self) -> Value {
        json!({
            "type": self.type_name(),
            "url": self.url,
            "headers": {"Authorization": format!("Bearer {TEST_TOKEN}")},
        })
    }

    fn type_name(&self) -> &'static str {
        match self.kind {
            HttpKind::Streamable => "http",
            HttpKind::LegacySse => "sse",
        }
    }
}

impl Drop for HttpMcp {
    fn drop(&mut self) {
        // Wake the accept loop, the streams, the held requests and the calls waiting for
        // the client; never join (must not hang).
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.update(|state| {
            for stream in &state.streams {
                let _ = stream.tx.send(Push::Close);
            }
        });
        self.shared.pending.close();
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = conn else { continue };
        let conn_shared = Arc::clone(shared);
        // A failed spawn just drops the connection; the client sees an error.
        let _ = thread::Builder::new().name("fake-mcp-conn".to_owned()).spawn(move || {
            // Read/write errors mean the client went away: end this connection.
            let _ = serve_connection(&stream, &conn_shared);
        });
    }
}

/// Serves requests on one connection until the client closes it, asks to, or a request
/// takes the connection over (a stream, a hang, a crash).
fn serve_connection(stream: &TcpStream, shared: &Arc<Shared>) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    while let Some(request) = read_request(&mut reader)? {
        let close = request.wants_close();
        let keep = match shared.kind {
            HttpKind::Streamable => streamable::serve(shared, stream, &request)?,
            HttpKind::LegacySse => legacy::serve(shared, stream, &request)?,
        };
        if close || !keep {
            return Ok(());
        }
    }
    Ok(())
}
