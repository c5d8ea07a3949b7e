//! Writing HTTP/1.1 responses and SSE chunks, each write bounded by a deadline so a client
//! that stops reading cannot pin a thread.

use std::io::{self, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Longest time one response or one SSE event may take to write.
pub const WRITE_DEADLINE: Duration = Duration::from_secs(30);

/// The reason phrase of a status.
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}

/// Writes all of `bytes` before `WRITE_DEADLINE` runs out.
pub fn write_all(stream: &TcpStream, bytes: &[u8]) -> io::Result<()> {
    let deadline = Instant::now() + WRITE_DEADLINE;
    let mut rest = bytes;
    let mut out = stream;
    while !rest.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "client stopped reading"));
        }
        stream.set_write_timeout(Some(left))?;
        match out.write(rest) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "connection closed")),
            Ok(n) => rest = &rest[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A complete response with a body.
pub fn send(
    stream: &TcpStream,
    status: u16,
    headers: &[(&str, &str)],
    body: &[u8],
    keep_alive: bool,
) -> io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: {}\r\n\r\n",
        body.len(),
        if keep_alive { "keep-alive" } else { "close" }
    ));
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    write_all(stream, &bytes)
}

/// A JSON error body `{"error": why}`.
pub fn error(
    stream: &TcpStream,
    status: u16,
    why: &str,
    extra: &[(&str, &str)],
    keep_alive: bool,
) -> io::Result<()> {
    let body = serde_json::json!({ "error": why }).to_string();
    let mut headers = vec![("Content-Type", "application/json")];
    headers.extend_from_slice(extra);
    send(stream, status, &headers, body.as_bytes(), keep_alive)
}

/// Starts an SSE response (chunked, never cached or buffered by proxies).
pub fn start_sse(stream: &TcpStream) -> io::Result<()> {
    write_all(
        stream,
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n\
          Cache-Control: no-cache\r\nConnection: keep-alive\r\nX-Accel-Buffering: no\r\n\
          Transfer-Encoding: chunked\r\n\r\n",
    )
}

/// Appends one SSE event, as one chunk, to `out`.
pub fn push_sse_event(out: &mut Vec<u8>, seq: u64, json: &[u8]) {
    let tail = format!("\nid: {seq}\nretry: 5000\n\n");
    let head: &[u8] = b"event: message\ndata: ";
    out.extend_from_slice(format!("{:x}\r\n", head.len() + json.len() + tail.len()).as_bytes());
    out.extend_from_slice(head);
    out.extend_from_slice(json);
    out.extend_from_slice(tail.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// A final `event: error` (not a JSON-RPC message) as one chunk.
pub fn sse_error(stream: &TcpStream, json: &[u8]) -> io::Result<()> {
    let mut event = b"event: error\ndata: ".to_vec();
    event.extend_from_slice(json);
    event.extend_from_slice(b"\n\n");
    chunk(stream, &event)
}

/// An SSE comment (heartbeats, notes) as one chunk.
pub fn sse_comment(stream: &TcpStream, text: &str) -> io::Result<()> {
    chunk(stream, format!(": {text}\n\n").as_bytes())
}

/// Ends a chunked response.
pub fn end_chunks(stream: &TcpStream) -> io::Result<()> {
    write_all(stream, b"0\r\n\r\n")
}

fn chunk(stream: &TcpStream, data: &[u8]) -> io::Result<()> {
    let mut bytes = format!("{:x}\r\n", data.len()).into_bytes();
    bytes.extend_from_slice(data);
    bytes.extend_from_slice(b"\r\n");
    write_all(stream, &bytes)
}
