//! Drives `iac-code acp --transport http` over raw loopback HTTP/1.1: plain requests,
//! SSE streams read on their own thread (chunked decoding, event parsing), and every
//! JSON-RPC message received validated against the ACP schema.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdout, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};
use serde_json::Value;

use super::command::{TestCommand, iac_code};
use super::fake_llm::FakeLlm;
use super::schema;
use super::workspace::Workspace;

/// How long a test waits for one event or response.
pub const WAIT: Duration = Duration::from_secs(20);

/// The running server (and, through `Deref`, its endpoint).
pub struct HttpServer {
    child: Child,
    endpoint: Endpoint,
    stderr: Receiver<String>,
    _stdout: BufReader<ChildStdout>,
}

/// Where ACP over HTTP is served: a node, or a load balancer in front of nodes.
pub struct Endpoint {
    /// `host:port`.
    pub addr: String,
    /// Request id (JSON text) → method, for validating responses on the streams.
    pub methods: Arc<Mutex<HashMap<String, String>>>,
    /// Sent as `Authorization: Bearer` with every request, when set.
    pub token: Option<String>,
}

impl std::ops::Deref for HttpServer {
    type Target = Endpoint;
    fn deref(&self) -> &Endpoint {
        &self.endpoint
    }
}

impl Endpoint {
    /// The endpoint at `addr` (`host:port`).
    pub fn at(addr: &str) -> Endpoint {
        Endpoint { addr: addr.to_string(), methods: Arc::default(), token: None }
    }

    /// The endpoint at `addr`, every request carrying `token`.
    pub fn with_token(addr: &str, token: &str) -> Endpoint {
        Endpoint { token: Some(token.to_string()), ..Endpoint::at(addr) }
    }

    fn auth(&self) -> String {
        self.token.as_ref().map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default()
    }

    /// One request on a fresh connection.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Response {
        let mut stream = TcpStream::connect(&self.addr).expect("connect");
        stream.set_read_timeout(Some(WAIT)).expect("timeout");
        let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
            head.push_str(&format!("Host: {}\r\n", self.addr));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("authorization")) {
            head.push_str(&self.auth());
        }
        let has_length = headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("content-length"));
        if !has_length && (!body.is_empty() || method == "POST") {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).expect("write");
        stream.write_all(body).expect("write body");
        read_response(&mut BufReader::new(stream))
    }

    /// POSTs a JSON-RPC message on connection `conn` (None for initialize).
    pub fn post(&self, conn: Option<&str>, message: &Value) -> Response {
        if let (Some(id), Some(method)) =
            (message.get("id"), message.get("method").and_then(Value::as_str))
        {
            self.methods.lock().unwrap().insert(id.to_string(), method.to_string());
        }
        let mut headers = vec![("Content-Type", "application/json")];
        if let Some(conn) = conn {
            headers.push(("Acp-Connection-Id", conn));
        }
        self.request("POST", "/acp", &headers, message.to_string().as_bytes())
    }

    /// Initializes a connection; returns its id.
    pub fn initialize(&self) -> String {
        let message = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}});
        let response = self.post(None, &message);
        assert_eq!(response.status, 200, "{response:?}");
        schema::validate("InitializeResponse", &response.json()["result"]);
        response.header("acp-connection-id").expect("Acp-Connection-Id").to_string()
    }

    /// Opens an SSE stream.
    pub fn stream(&self, conn: &str, session: Option<&str>, last_id: Option<u64>) -> Sse {
        let mut stream = TcpStream::connect(&self.addr).expect("connect");
        let mut head = format!(
            "GET /acp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nAcp-Connection-Id: {conn}\r\n",
            self.addr
        );
        head.push_str(&self.auth());
        if let Some(session) = session {
            head.push_str(&format!("Acp-Session-Id: {session}\r\n"));
        }
        if let Some(id) = last_id {
            head.push_str(&format!("Last-Event-ID: {id}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).expect("write");
        Sse::start(stream, Arc::clone(&self.methods))
    }
}

/// A response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

impl HttpServer {
    /// Spawns the server on a free port with `args` and `env` (plus the fake LLM's env).
    pub fn spawn(
        ws: &Workspace,
        llm: Option<&FakeLlm>,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> HttpServer {
        let mut command = iac_code(ws);
        command.args(["acp", "--transport", "http", "--port", "0"]).args(args);
        command.env("IAC_CODE_LOG", "debug");
        if let Some(llm) = llm {
            command.fake_llm(llm);
        }
        let mut child = command
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (tx, stderr) = crossbeam_channel::unbounded();
        let err = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the server prints its address");
        let url = line.trim().strip_prefix("iac-code listening on ").unwrap_or_else(|| {
            let logs: Vec<String> = stderr.try_iter().collect();
            panic!("unexpected first line {line:?}; stderr: {logs:?}")
        });
        let addr = url.trim_start_matches("http://").trim_end_matches("/acp").to_string();
        HttpServer { child, endpoint: Endpoint::at(&addr), stderr, _stdout: stdout }
    }

    /// Waits for a stderr line containing `needle`.
    pub fn wait_log(&self, needle: &str) -> String {
        let mut seen = Vec::new();
        loop {
            match self.stderr.recv_timeout(WAIT) {
                Ok(line) if line.contains(needle) => return line,
                Ok(line) => seen.push(line),
                Err(_) => {
                    let tail = &seen[seen.len().saturating_sub(60)..];
                    panic!("no log line containing {needle:?}; last lines:\n{}", tail.join("\n"))
                }
            }
        }
    }

    /// The server's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the process to exit.
    pub fn wait_exit(&mut self) -> std::process::ExitStatus {
        self.child.wait().expect("wait")
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads a response head and body (Content-Length or chunked).
pub fn read_response(reader: &mut impl BufRead) -> Response {
    let mut status_line = String::new();
    reader.read_line(&mut status_line).expect("status line");
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((n, v)) = line.split_once(':') {
            headers.push((n.trim().to_string(), v.trim().to_string()));
        }
    }
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok());
    let mut body = vec![0; length.unwrap_or(0)];
    reader.read_exact(&mut body).expect("body");
    Response { status, headers, body }
}

/// One SSE event.
#[derive(Debug, Clone)]
pub struct Event {
    pub id: Option<u64>,
    #[allow(
        dead_code,
        reason = "shown by Debug when an assertion on it fails; no test reads it directly"
    )]
    pub event: String,
    pub data: Value,
}

/// An SSE stream read on its own thread.
pub struct Sse {
    /// The response status and headers.
    pub status: u16,
    pub headers: Vec<(String, String)>,
    events: Receiver<Event>,
    socket: TcpStream,
    clean_end: Arc<std::sync::atomic::AtomicBool>,
}

impl Sse {
    fn start(stream: TcpStream, methods: Arc<Mutex<HashMap<String, String>>>) -> Sse {
        let socket = stream.try_clone().expect("clone");
        let mut reader = BufReader::new(stream);
        let mut status_line = String::new();
        reader.read_line(&mut status_line).expect("status line");
        let status =
            status_line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                break;
            }
            if let Some((n, v)) = line.trim_end().split_once(':') {
                headers.push((n.trim().to_string(), v.trim().to_string()));
            }
        }
        let (tx, events) = crossbeam_channel::unbounded();
        let clean_end = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ended = Arc::clone(&clean_end);
        if status == 200 {
            std::thread::spawn(move || {
                let mut text = String::new();
                loop {
                    let chunk = match read_chunk(&mut reader) {
                        Chunk::Data(chunk) => chunk,
                        Chunk::Last => {
                            ended.store(true, std::sync::atomic::Ordering::SeqCst);
                            return;
                        }
                        Chunk::Broken => return,
                    };
                    text.push_str(&String::from_utf8_lossy(&chunk));
                    while let Some(end) = text.find("\n\n") {
                        let block: String = text.drain(..end + 2).collect();
                        if let Some(event) = parse_event(&block, &methods)
                            && tx.send(event).is_err()
                        {
                            return;
                        }
                    }
                }
            });
        }
        Sse { status, headers, events, socket, clean_end }
    }

    /// Whether the server ended the stream with the last chunk (not by dropping it).
    pub fn ended_cleanly(&self) -> bool {
        self.clean_end.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The next event, or `None` when the stream ended (or nothing came in `WAIT`).
    pub fn next(&self) -> Option<Event> {
        match self.events.recv_timeout(WAIT) {
            Ok(event) => Some(event),
            Err(RecvTimeoutError::Timeout) => panic!("no SSE event within {WAIT:?}"),
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// How many events arrived and were not read yet.
    pub fn waiting(&self) -> usize {
        self.events.len()
    }

    /// Events until one satisfies `done` (included).
    pub fn until(&self, done: impl Fn(&Event) -> bool) -> Vec<Event> {
        let mut seen = Vec::new();
        loop {
            let event = self.next().unwrap_or_else(|| panic!("stream ended; saw {seen:?}"));
            let stop = done(&event);
            seen.push(event);
            if stop {
                return seen;
            }
        }
    }

    /// Drops the connection abruptly.
    pub fn disconnect(self) {
        let _ = self.socket.shutdown(std::net::Shutdown::Both);
    }
}

enum Chunk {
    Data(Vec<u8>),
    Last,
    Broken,
}

fn read_chunk(reader: &mut impl BufRead) -> Chunk {
    let mut size_line = String::new();
    if reader.read_line(&mut size_line).unwrap_or(0) == 0 {
        return Chunk::Broken;
    }
    let Ok(size) = usize::from_str_radix(size_line.trim(), 16) else { return Chunk::Broken };
    if size == 0 {
        return Chunk::Last;
    }
    let mut data = vec![0; size + 2];
    if reader.read_exact(&mut data).is_err() {
        return Chunk::Broken;
    }
    data.truncate(size);
    Chunk::Data(data)
}

fn parse_event(block: &str, methods: &Mutex<HashMap<String, String>>) -> Option<Event> {
    let mut id = None;
    let mut event = "message".to_string();
    let mut data = String::new();
    for line in block.lines() {
        if line.starts_with(':') {
            continue;
        }
        match line.split_once(": ") {
            Some(("id", v)) => id = v.parse().ok(),
            Some(("event", v)) => event = v.to_string(),
            Some(("data", v)) => data.push_str(v),
            _ => {}
        }
    }
    if data.is_empty() {
        return None;
    }
    let data: Value =
        serde_json::from_str(&data).unwrap_or_else(|_| panic!("SSE data is not JSON: {data}"));
    if event == "message" {
        let method = data
            .get("id")
            .filter(|_| data.get("method").is_none())
            .and_then(|id| methods.lock().unwrap().get(&id.to_string()).cloned());
        schema::validate_agent_message(&data, method.as_deref());
    }
    Some(Event { id, event, data })
}
