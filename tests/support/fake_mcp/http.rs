//! The HTTP/1.1 wire of the fake MCP servers: requests are read as the fake LLM reads
//! them (`fake_llm::http`); here, writing answers (a complete body, an empty 202, the head of a
//! chunked `text/event-stream`, one SSE event as one flushed chunk, the last chunk).

use std::io::{self, Write};
use std::net::TcpStream;

pub(super) use crate::support::fake_llm::http::{HttpRequest, read_request};

fn reason_phrase(code: u16) -> &'static str {
    match code {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        _ => "Status",
    }
}

fn head(code: u16, headers: &[(&str, &str)]) -> String {
    let mut head = format!("HTTP/1.1 {code} {}\r\n", reason_phrase(code));
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head
}

/// A complete answer: `headers`, then Content-Length and `body` (no Content-Type when
/// `content_type` is `None`).
pub(super) fn write_full(
    mut w: &TcpStream,
    code: u16,
    headers: &[(&str, &str)],
    content_type: Option<&str>,
    body: &[u8],
) -> io::Result<()> {
    let mut text = head(code, headers);
    if let Some(content_type) = content_type {
        text.push_str(&format!("Content-Type: {content_type}\r\n"));
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(body);
    w.write_all(&bytes)?;
    w.flush()
}

/// A JSON answer.
pub(super) fn write_json(
    w: &TcpStream,
    code: u16,
    headers: &[(&str, &str)],
    body: &str,
) -> io::Result<()> {
    write_full(w, code, headers, Some("application/json"), body.as_bytes())
}

/// A 200 `text/event-stream` head, chunked.
pub(super) fn write_sse_head(mut w: &TcpStream, headers: &[(&str, &str)]) -> io::Result<()> {
    let mut text = head(200, headers);
    text.push_str(
        "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
         Transfer-Encoding: chunked\r\n\r\n",
    );
    w.write_all(text.as_bytes())?;
    w.flush()
}

/// One SSE event (`event:` line if named) as one flushed chunk.
pub(super) fn write_event(mut w: &TcpStream, event: Option<&str>, data: &str) -> io::Result<()> {
    let mut text = String::new();
    if let Some(event) = event {
        text.push_str(&format!("event: {event}\n"));
    }
    text.push_str(&format!("data: {data}\n\n"));
    let chunk = format!("{:x}\r\n{text}\r\n", text.len());
    w.write_all(chunk.as_bytes())?;
    w.flush()
}

/// The last chunk: the stream ends cleanly.
pub(super) fn write_last_chunk(mut w: &TcpStream) -> io::Result<()> {
    w.write_all(b"0\r\n\r\n")?;
    w.flush()
}
