//! A small blocking WebSocket client for the `/acp` WebSocket profile: the RFC 6455
//! handshake written by hand (so that its answer is checked byte for byte), tungstenite's
//! client framing after it, and JSON-RPC helpers. Every message received is validated
//! against the ACP schema.

use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::net::TcpStream;

use serde_json::{Value, json};
use tungstenite::protocol::{Role, WebSocket};
use tungstenite::{Bytes, Message};

use super::http_client::{Response, WAIT, read_response};
use super::schema;

/// RFC 6455's sample key, and the accept value the RFC gives for it.
const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";
pub const ACCEPT: &str = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

/// One open WebSocket.
pub struct WsClient {
    pub socket: WebSocket<TcpStream>,
    /// The `101` response's headers.
    pub headers: Vec<(String, String)>,
    /// Request id (JSON text) → method, for validating results.
    methods: HashMap<String, String>,
}

/// Upgrades a new socket to `addr`'s `/acp` with `extra` headers: the client, or the
/// non-101 response.
pub fn connect(addr: &str, extra: &[(&str, &str)]) -> Result<WsClient, Response> {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(WAIT)).expect("timeout");
    let mut head = format!(
        "GET /acp HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n"
    );
    for (name, value) in extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("write");
    // The head byte by byte: what follows it is the server's first frame.
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => raw.push(byte[0]),
            _ => break,
        }
    }
    if !raw.starts_with(b"HTTP/1.1 101") {
        let mut rest = Vec::new();
        let _ = stream.read_to_end(&mut rest);
        raw.extend_from_slice(&rest);
        return Err(read_response(&mut BufReader::new(&raw[..])));
    }
    let text = String::from_utf8_lossy(&raw).to_string();
    let headers = text
        .lines()
        .skip(1)
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let socket = WebSocket::from_raw_socket(stream, Role::Client, None);
    Ok(WsClient { socket, headers, methods: HashMap::new() })
}

impl WsClient {
    /// A header of the `101` response.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// Sends one JSON-RPC message as a text frame.
    pub fn send(&mut self, message: &Value) {
        if let (Some(id), Some(method)) =
            (message.get("id"), message.get("method").and_then(Value::as_str))
        {
            self.methods.insert(id.to_string(), method.to_string());
        }
        self.socket.send(Message::text(message.to_string())).expect("send");
    }

    /// Sends a request.
    pub fn request(&mut self, id: i64, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    /// The next frame of any kind (tungstenite answers pings by itself).
    pub fn frame(&mut self) -> Message {
        loop {
            match self.socket.read() {
                // A signal to this test process (a child's SIGCHLD) interrupts the read:
                // read again.
                Err(tungstenite::Error::Io(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                other => return other.expect("read a frame"),
            }
        }
    }

    /// The next JSON-RPC message, schema-checked.
    pub fn next(&mut self) -> Value {
        loop {
            match self.frame() {
                Message::Text(text) => {
                    let value: Value = serde_json::from_str(text.as_str()).expect("JSON");
                    let method = value.get("id").and_then(|id| self.methods.get(&id.to_string()));
                    schema::validate_agent_message(&value, method.map(String::as_str));
                    return value;
                }
                Message::Ping(_) | Message::Pong(_) => {}
                other => panic!("expected a text frame, got {other:?}"),
            }
        }
    }

    /// Messages up to and including the first that satisfies `done`.
    pub fn until(&mut self, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let message = self.next();
            let stop = done(&message);
            seen.push(message);
            if stop {
                return seen;
            }
        }
    }

    /// Sends a request and returns what arrived up to its response (the response last).
    pub fn call(&mut self, id: i64, method: &str, params: Value) -> Vec<Value> {
        self.request(id, method, params);
        self.until(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none())
    }

    /// `initialize`; returns its result.
    pub fn initialize(&mut self) -> Value {
        let params = json!({"protocolVersion": 1, "clientCapabilities": {}});
        let answer = self.call(0, "initialize", params).pop().expect("answer");
        answer["result"].clone()
    }

    /// Sends a ping with `data` and waits for its pong (answering nothing else).
    pub fn ping(&mut self, data: &[u8]) -> Bytes {
        self.socket.send(Message::Ping(Bytes::copy_from_slice(data))).expect("ping");
        loop {
            if let Message::Pong(back) = self.frame() {
                return back;
            }
        }
    }

    /// Reads until the server's close frame: its code and reason.
    pub fn close_code(&mut self) -> (u16, String) {
        loop {
            match self.socket.read() {
                Ok(Message::Close(Some(frame))) => {
                    return (u16::from(frame.code), frame.reason.to_string());
                }
                Ok(Message::Close(None)) => return (1005, String::new()),
                Ok(_) => {}
                Err(err) => panic!("the socket ended without a close frame: {err}"),
            }
        }
    }
}
