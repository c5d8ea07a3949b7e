//! The HTTP/1.1 wire of the fake LLM: reading one request (head, `Expect: 100-continue`,
//! Content-Length or chunked body) and writing answers (status lines, a complete JSON
//! answer, the head of a chunked `text/event-stream`, one flushed chunk).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use serde_json::Value;

use super::recorded::Recorded;

/// A parsed HTTP request (the fake MCP servers read theirs with it too); header names
/// lowercased.
pub(crate) struct HttpRequest {
    pub(crate) method: String,
    /// The request target, query included.
    pub(crate) path: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl HttpRequest {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The target without its query.
    pub(crate) fn route(&self) -> &str {
        self.path.split('?').next().unwrap_or_default()
    }

    /// The value of `name` in the query, as written (no percent-decoding).
    pub(crate) fn query(&self, name: &str) -> Option<&str> {
        let (_, query) = self.path.split_once('?')?;
        query.split('&').find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
    }

    pub(crate) fn wants_close(&self) -> bool {
        self.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }

    pub(super) fn is_chat(&self) -> bool {
        let path = self.path.split('?').next().unwrap_or_default();
        self.method == "POST"
            && (path.ends_with("/chat/completions") || path.ends_with("/messages"))
    }

    /// An Anthropic Messages request: the reply uses Anthropic's event stream.
    pub(super) fn is_anthropic(&self) -> bool {
        self.path.split('?').next().unwrap_or_default().ends_with("/messages")
    }

    pub(super) fn into_recorded(self) -> Recorded {
        let body = serde_json::from_slice(&self.body).unwrap_or(Value::Null);
        Recorded {
            method: self.method,
            path: self.path,
            headers: self.headers,
            body,
            raw: self.body,
        }
    }
}

/// Reads one request; `None` on a clean EOF before a request line.
pub(crate) fn read_request(reader: &mut BufReader<TcpStream>) -> io::Result<Option<HttpRequest>> {
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
    let path = parts.next().unwrap_or_default().to_owned();

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
    let mut request = HttpRequest { method, path, headers, body: Vec::new() };

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
        let len =
            request.header("content-length").and_then(|v| v.parse::<usize>().ok()).unwrap_or(0);
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
            // Skip optional trailers up to the blank line.
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
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// A complete (Content-Length) JSON answer.
pub(super) fn write_json(
    w: &mut TcpStream,
    code: u16,
    body: &str,
    retry_after: Option<&str>,
) -> io::Result<()> {
    let reason = reason_phrase(code);
    let len = body.len();
    let mut response = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n"
    );
    if let Some(retry_after) = retry_after {
        response.push_str("Retry-After: ");
        response.push_str(retry_after);
        response.push_str("\r\n");
    }
    response.push_str("\r\n");
    response.push_str(body);
    w.write_all(response.as_bytes())?;
    w.flush()
}

pub(super) fn write_stream_head(w: &mut TcpStream) -> io::Result<()> {
    w.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
          Transfer-Encoding: chunked\r\n\r\n",
    )?;
    w.flush()
}

/// Where a stream's events are written: buffered, so a reply written in one go leaves in
/// few large writes (the fake LLM must stay cheap next to the server it feeds); a pause or a
/// timestamp flushes, and so does the end of the reply.
pub(super) type Out<'a> = io::BufWriter<&'a TcpStream>;

/// Writes `data` as one HTTP chunk (empty data is skipped: it would end the body).
pub(super) fn write_chunk(w: &mut Out<'_>, data: &str) -> io::Result<()> {
    write_chunk_bytes(w, data.as_bytes())
}

/// `write_chunk` for bytes.
pub(super) fn write_chunk_bytes(w: &mut Out<'_>, data: &[u8]) -> io::Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    write!(w, "{:x}\r\n", data.len())?;
    w.write_all(data)?;
    w.write_all(b"\r\n")
}

/// Writes one SSE event whose JSON is `before`, `text` as a JSON string, then `after`, as
/// one HTTP chunk, through `scratch`: the streamed pieces of a long reply cost no `Value`
/// tree (the fake LLM must stay cheap next to the server it feeds).
pub(super) fn write_piece(
    w: &mut Out<'_>,
    scratch: &mut Vec<u8>,
    before: &str,
    text: &str,
    after: &str,
) -> io::Result<()> {
    scratch.clear();
    scratch.extend_from_slice(before.as_bytes());
    serde_json::to_writer(&mut *scratch, text).map_err(io::Error::other)?;
    scratch.extend_from_slice(after.as_bytes());
    write_chunk_bytes(w, scratch)
}
