//! The HTTP/1.1 wire of the fake MCP servers: reading one request (head, Content-Length
//! or chunked body) and writing answers (a complete body, an empty 202, the head of a
//! chunked `text/event-stream`, one SSE event as one flushed chunk, the last chunk).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// A parsed HTTP request; header names lowercased.
pub(super) struct HttpRequest {
    pub(super) method: String,
    /// The request target, query included.
    pub(super) target: String,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
}

impl HttpRequest {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The target without its query.
    pub(super) fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// The value of `name` in the query, as written (no percent-decoding).
    pub(super) fn query(&self, name: &str) -> Option<&str> {
        let (_, query) = self.target.split_once('?')?;
        query.split('&').find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
    }

    pub(super) fn wants_close(&self) -> bool {
        self.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

/// Reads one request; `None` on a clean EOF before a request line.
pub(super) fn read_request(reader: &mut BufReader<TcpStream>) -> io::Result<Option<HttpRequest>> {
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        if !line.trim().is_empty() {
            break;
        }
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let target = parts.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        let mut raw = String::new();
        if reader.read_line(&mut raw)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "EOF inside request head"));
        }
        let raw = raw.trim_end_matches(['\r', '\n']);
        if raw.is_empty() {
            break;
        }
        if let Some((name, value)) = raw.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let mut request = HttpRequest { method, target, headers, body: Vec::new() };
    if request.header("expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue")) {
        let stream = reader.get_mut();
        stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        stream.flush()?;
    }
    let chunked = request
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    request.body = if chunked {
        read_chunked_body(reader)?
    } else {
        let len = request.header("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
        let mut body = vec![0u8; len];
        reader.read_exact(&mut body)?;
        body
    };
    Ok(Some(request))
}

fn read_chunked_body(reader: &mut BufReader<TcpStream>) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size_line = String::new();
        if reader.read_line(&mut size_line)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "EOF inside chunked body"));
        }
        let size_hex = size_line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_hex, 16)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        if size == 0 {
            loop {
                let mut trailer = String::new();
                if reader.read_line(&mut trailer)? == 0 || trailer.trim().is_empty() {
                    return Ok(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf)?;
    }
}

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
