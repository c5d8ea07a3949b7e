//! Writing HTTP/1.1 responses and SSE chunks: each write is bounded by a deadline, so a
//! client that stops reading cannot pin a thread.

use std::io::{self, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::codes::Code;

/// Longest time one response or one SSE event may take to write.
pub const WRITE_DEADLINE: Duration = Duration::from_secs(30);

/// The reason phrase of a status.
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        200 => "OK",
        202 => "Accepted",
        304 => "Not Modified",
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
        426 => "Upgrade Required",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}

/// Writes all of `bytes` before `WRITE_DEADLINE` runs out.
pub fn write_all(stream: &TcpStream, bytes: &[u8]) -> io::Result<()> {
    Writer::new(stream).write_all(bytes)
}

/// Writes to one socket, each `write_all` within `WRITE_DEADLINE`, remembering the write
/// timeout it set last: an SSE stream writes once per event, and a whole write then costs
/// one system call instead of two.
pub struct Writer<'a> {
    stream: &'a TcpStream,
    /// The socket's write timeout as this writer last set it.
    timeout: Option<Duration>,
}

impl<'a> Writer<'a> {
    /// A writer for `stream`; only this writer sets its write timeout (an SSE stream's
    /// router writes to it too, but without waiting: `sse::write_direct`).
    pub fn new(stream: &'a TcpStream) -> Writer<'a> {
        Writer { stream, timeout: None }
    }

    /// Writes all of `bytes` before `WRITE_DEADLINE` runs out. Each write may block at most
    /// for what is left of the deadline; one that timed out earlier (a timeout left from
    /// an earlier call) is tried again with what is left.
    pub fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        let deadline = Instant::now() + WRITE_DEADLINE;
        let mut rest = bytes;
        let mut out = self.stream;
        while !rest.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "client stopped reading"));
            }
            if self.timeout.is_none_or(|set| set > left) {
                self.stream.set_write_timeout(Some(left))?;
                self.timeout = Some(left);
            }
            match out.write(rest) {
                Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "connection closed")),
                Ok(n) => rest = &rest[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) =>
                {
                    // Set again from what is left (an error once none is).
                    self.timeout = None;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
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
    // A 304 has no body, and a Content-Length there would describe the one it stands for.
    if status != 304 {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str(&format!(
        "Connection: {}\r\n\r\n",
        if keep_alive { "keep-alive" } else { "close" }
    ));
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    write_all(stream, &bytes)
}

/// A JSON error body `{"error": why, "code": code}` with its status.
pub fn error(
    stream: &TcpStream,
    (status, code): (u16, Code),
    why: &str,
    extra: &[(&str, &str)],
    keep_alive: bool,
) -> io::Result<()> {
    let body = code.body(why);
    let mut headers = vec![("Content-Type", "application/json")];
    headers.extend_from_slice(extra);
    send(stream, status, &headers, body.as_bytes(), keep_alive)
}

/// Appends the head of an SSE response (chunked, never cached or buffered by proxies).
pub fn start_sse(out: &mut Vec<u8>) {
    out.extend_from_slice(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n\
          Cache-Control: no-cache\r\nConnection: keep-alive\r\nX-Accel-Buffering: no\r\n\
          Transfer-Encoding: chunked\r\n\r\n",
    );
}

/// Appends one SSE event, as one chunk, to `out`.
pub fn push_sse_event(out: &mut Vec<u8>, seq: u64, json: &[u8]) {
    const HEAD: &[u8] = b"event: message\ndata: ";
    let mut tail = [0u8; 48];
    let tail_len = {
        let mut cursor = io::Cursor::new(&mut tail[..]);
        // 48 bytes hold the longest tail (a u64 has 20 digits).
        let _ = write!(cursor, "\nid: {seq}\nretry: 5000\n\n");
        cursor.position() as usize
    };
    // Writing into a Vec cannot fail.
    let _ = write!(out, "{:x}\r\n", HEAD.len() + json.len() + tail_len);
    out.extend_from_slice(HEAD);
    out.extend_from_slice(json);
    out.extend_from_slice(&tail[..tail_len]);
    out.extend_from_slice(b"\r\n");
}

/// Appends a final `event: error` (not a JSON-RPC message) as one chunk.
pub fn sse_error(out: &mut Vec<u8>, json: &[u8]) {
    sse_named(out, "error", json);
}

/// Appends an event named `name` (not a JSON-RPC message; without an id) as one chunk.
pub fn sse_named(out: &mut Vec<u8>, name: &str, json: &[u8]) {
    let mut event = format!("event: {name}\ndata: ").into_bytes();
    event.extend_from_slice(json);
    event.extend_from_slice(b"\n\n");
    chunk(out, &event);
}

/// Appends an SSE comment (heartbeats, notes) as one chunk.
pub fn sse_comment(out: &mut Vec<u8>, text: &str) {
    chunk(out, format!(": {text}\n\n").as_bytes());
}

/// Appends the end of a chunked response.
pub fn end_chunks(out: &mut Vec<u8>) {
    out.extend_from_slice(b"0\r\n\r\n");
}

fn chunk(out: &mut Vec<u8>, data: &[u8]) {
    // Writing into a Vec cannot fail.
    let _ = write!(out, "{:x}\r\n", data.len());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// The id (as JSON text) of a response frame; `None` for requests and notifications.
pub fn response_id(bytes: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    if value.get("method").is_some() {
        return None;
    }
    value.get("id").map(|id| id.to_string())
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::net::TcpListener;

    use super::*;

    #[test]
    fn an_sse_event_is_one_whole_chunk() {
        for seq in [0, 7, u64::MAX] {
            let mut out = b"before".to_vec();
            push_sse_event(&mut out, seq, br#"{"a":1}"#);
            let event = format!("event: message\ndata: {{\"a\":1}}\nid: {seq}\nretry: 5000\n\n");
            let want = format!("before{:x}\r\n{event}\r\n", event.len());
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
    }

    #[test]
    fn a_writer_sets_the_timeout_once_and_delivers_everything() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        let mut writer = Writer::new(&server);
        writer.write_all(b"one ").unwrap();
        let set = server.write_timeout().unwrap().unwrap();
        assert!(set <= WRITE_DEADLINE && set > WRITE_DEADLINE / 2, "{set:?}");
        writer.write_all(b"two").unwrap();
        assert_eq!(server.write_timeout().unwrap(), Some(set), "not set again");
        drop(server);
        let mut got = String::new();
        (&client).read_to_string(&mut got).unwrap();
        assert_eq!(got, "one two");
    }
}
