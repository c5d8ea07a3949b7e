//! The benches' ACP-over-HTTP client: one POST on a fresh connection, `initialize`, a
//! connection's SSE stream and its events, over plain `TcpStream`s (cheap, so that the
//! client does not take the CPU the server under test needs).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use serde_json::{Value, json};

/// The bearer token every request carries, once set (a cluster started with one).
pub static TOKEN: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// How long a read may wait: a bench that stops moving fails, saying where, not hangs.
const READ_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

fn auth() -> String {
    TOKEN.get().map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default()
}

pub fn post(addr: &str, conn: Option<&str>, body: &Value) -> (u16, Option<String>, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(READ_WAIT)).unwrap();
    let body = body.to_string();
    let conn_header = conn.map(|c| format!("Acp-Connection-Id: {c}\r\n")).unwrap_or_default();
    write!(stream, "POST /acp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\n{conn_header}{}Content-Length: {}\r\n\r\n{body}", auth(), body.len()).unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    let code = status.split_whitespace().nth(1).unwrap().parse().unwrap();
    let (mut id, mut length) = (None, 0);
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("acp-connection-id:") {
            id = Some(v.trim().to_string());
        }
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    (code, id, body)
}

pub fn initialize(addr: &str) -> String {
    let (code, id, _) = post(
        addr,
        None,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
    );
    assert_eq!(code, 200);
    id.unwrap()
}

/// Opens the connection stream; returns the reader positioned after the head.
pub fn open_stream(addr: &str, conn: &str) -> BufReader<TcpStream> {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(READ_WAIT)).unwrap();
    write!(
        stream,
        "GET /acp HTTP/1.1\r\nHost: {addr}\r\nAcp-Connection-Id: {conn}\r\n{}\r\n",
        auth()
    )
    .unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line.trim().is_empty() {
            return reader;
        }
    }
}

/// Reads SSE `data:` payloads; calls `each` until it returns false.
pub fn read_events(reader: &mut BufReader<TcpStream>, mut each: impl FnMut(Value) -> bool) {
    read_data(reader, |data| match serde_json::from_str::<Value>(data) {
        Ok(value) => each(value),
        Err(_) => true,
    });
}

/// Reads SSE `data:` payloads as text (a load generator can then skip parsing most of
/// them); calls `each` until it returns false.
pub fn read_data(reader: &mut BufReader<TcpStream>, mut each: impl FnMut(&str) -> bool) {
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if let Some(data) = line.strip_prefix("data: ")
            && !each(data.trim_end())
        {
            return;
        }
    }
}
