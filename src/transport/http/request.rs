//! Reading one HTTP/1.1 request from a blocking socket, with every limit enforced before
//! memory or time is spent: the head is capped in size and header count, the body by
//! `Content-Length` before a byte of it is read (chunked bodies as they stream), and the
//! head and body each have a deadline, so a client sending a byte per second is cut.

use std::io::{self, Read};
use std::time::{Duration, Instant};

/// Limits for one request.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest head (request line and headers).
    pub max_head: usize,
    pub max_headers: usize,
    pub max_body: u64,
    /// Time to receive the whole head, once its first byte arrived.
    pub head_timeout: Duration,
    /// Time to receive the whole body.
    pub body_timeout: Duration,
}

/// A parsed request.
#[derive(Debug, Clone)]
pub struct Request {
    /// Method, e.g. `POST`.
    pub method: String,
    /// Path without the query string.
    pub path: String,
    /// Headers, names lowercased, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Whether the connection may serve another request after this one.
    pub keep_alive: bool,
}

impl Request {
    /// The first header called `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Why no request was read.
#[derive(Debug)]
pub enum ReadError {
    /// The peer closed the connection (or stayed silent past the idle time) before a
    /// request started: close quietly.
    Closed,
    /// Answer with this status and close.
    Status(u16, &'static str),
    /// The socket failed.
    Io(io::Error),
    /// The head was refused by the caller's check: answer with it and close.
    Refused(Refusal),
}

/// A request refused on its head alone.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub status: u16,
    /// Why, for the client.
    pub why: String,
    /// Extra headers (`Allow`, `WWW-Authenticate`).
    pub headers: Vec<(&'static str, &'static str)>,
}

/// A byte source with adjustable read timeouts (a socket; a buffer in tests).
pub trait Source: Read {
    /// Sets the timeout of the next reads.
    fn set_timeout(&mut self, timeout: Duration) -> io::Result<()>;
}

impl Source for &std::net::TcpStream {
    fn set_timeout(&mut self, timeout: Duration) -> io::Result<()> {
        self.set_read_timeout(Some(timeout.max(Duration::from_millis(1))))
    }
}

/// Reads requests from one connection, keeping bytes that arrive early (pipelining).
pub struct Reader<S> {
    source: S,
    buf: Vec<u8>,
}

impl<S: Source> Reader<S> {
    /// Wraps a source.
    pub fn new(source: S) -> Reader<S> {
        Reader { source, buf: Vec::new() }
    }

    /// The bytes read past the last request (a WebSocket's first frames).
    pub fn take_buffered(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }

    /// Reads the next request. Waits at most `idle` for its first byte. `check` sees the
    /// parsed head before anything else happens (a refusal is answered without reading
    /// the body); `continue_100` is called when the client asked for `100 Continue` and
    /// the body is acceptable.
    pub fn next(
        &mut self,
        limits: &Limits,
        idle: Duration,
        check: &mut dyn FnMut(&Request) -> Result<(), Refusal>,
        continue_100: &mut dyn FnMut() -> io::Result<()>,
    ) -> Result<Request, ReadError> {
        if self.buf.is_empty() && self.fill(Instant::now() + idle)? == 0 {
            return Err(ReadError::Closed);
        }
        let head_deadline = Instant::now() + limits.head_timeout;
        // Parse only once the blank line that ends a head has arrived (no rescans): a line
        // end (LF or CRLF), then an empty line (LF or CRLF).
        let mut scanned: usize = 0;
        let (mut request, head_len, chunked, length) = loop {
            let from = scanned.saturating_sub(2);
            let complete = self.buf[from..].windows(3).any(|w| w == b"\n\r\n")
                || self.buf[from..].windows(2).any(|w| w == b"\n\n");
            scanned = self.buf.len();
            if complete && let Some(parsed) = parse_head(&self.buf, limits)? {
                break parsed;
            }
            if self.buf.len() >= limits.max_head {
                return Err(ReadError::Status(431, "request head too large"));
            }
            if self.fill(head_deadline)? == 0 {
                return Err(ReadError::Status(400, "connection closed inside the head"));
            }
        };
        // However the bytes came (a whole head may arrive in one read), the cap holds.
        if head_len > limits.max_head {
            return Err(ReadError::Status(431, "request head too large"));
        }
        self.buf.drain(..head_len);
        check(&request).map_err(ReadError::Refused)?;
        if let Some(length) = length
            && length > limits.max_body
        {
            return Err(ReadError::Status(413, "request body too large"));
        }
        let expects =
            request.header("expect").is_some_and(|e| e.eq_ignore_ascii_case("100-continue"));
        if expects && (chunked || length.unwrap_or(0) > 0) {
            continue_100().map_err(ReadError::Io)?;
        }
        let body_deadline = Instant::now() + limits.body_timeout;
        request.body = if chunked {
            self.chunked_body(limits.max_body, body_deadline)?
        } else {
            self.exact(length.unwrap_or(0) as usize, body_deadline)?
        };
        Ok(request)
    }

    /// Reads more bytes before `deadline`; 0 at end of stream.
    fn fill(&mut self, deadline: Instant) -> Result<usize, ReadError> {
        let mut chunk = [0u8; 8192];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(if self.buf.is_empty() {
                    ReadError::Closed
                } else {
                    ReadError::Status(408, "request timed out")
                });
            }
            self.source.set_timeout(left).map_err(ReadError::Io)?;
            match self.source.read(&mut chunk) {
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    return Ok(n);
                }
                Err(e)
                    if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ReadError::Io(e)),
            }
        }
    }

    fn exact(&mut self, len: usize, deadline: Instant) -> Result<Vec<u8>, ReadError> {
        while self.buf.len() < len {
            if self.fill(deadline)? == 0 {
                return Err(ReadError::Status(400, "connection closed inside the body"));
            }
        }
        Ok(self.buf.drain(..len).collect())
    }

    fn line(&mut self, deadline: Instant, max: usize) -> Result<Vec<u8>, ReadError> {
        loop {
            if let Some(pos) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = self.buf[..pos].to_vec();
                self.buf.drain(..pos + 2);
                return Ok(line);
            }
            if self.buf.len() > max {
                return Err(ReadError::Status(400, "chunk framing line too long"));
            }
            if self.fill(deadline)? == 0 {
                return Err(ReadError::Status(400, "connection closed inside a chunked body"));
            }
        }
    }

    fn chunked_body(&mut self, max: u64, deadline: Instant) -> Result<Vec<u8>, ReadError> {
        let mut body = Vec::new();
        loop {
            let line = self.line(deadline, 1024)?;
            let size = std::str::from_utf8(&line)
                .ok()
                .and_then(|l| l.split(';').next())
                .and_then(|hex| strict_number(hex.trim_end_matches([' ', '\t']), 16))
                .ok_or(ReadError::Status(400, "bad chunk size"))?;
            if size == 0 {
                // Trailers, up to the empty line.
                while !self.line(deadline, 8192)?.is_empty() {}
                return Ok(body);
            }
            if size > max.saturating_sub(body.len() as u64) {
                return Err(ReadError::Status(413, "request body too large"));
            }
            let data = self.exact(size as usize, deadline)?;
            body.extend_from_slice(&data);
            if !self.line(deadline, 2)?.is_empty() {
                return Err(ReadError::Status(400, "chunk data longer than its size"));
            }
        }
    }
}

type Head = (Request, usize, bool, Option<u64>);

/// Parses a complete head from `buf`, or `None` if more bytes are needed.
fn parse_head(buf: &[u8], limits: &Limits) -> Result<Option<Head>, ReadError> {
    let mut headers = vec![httparse::EMPTY_HEADER; limits.max_headers];
    let mut parsed = httparse::Request::new(&mut headers);
    let head_len = match parsed.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(ReadError::Status(431, "too many headers"));
        }
        Err(_) => return Err(ReadError::Status(400, "malformed request head")),
    };
    let method = parsed.method.unwrap_or("").to_string();
    let target = parsed.path.unwrap_or("/");
    let path = target.split('?').next().unwrap_or("/").to_string();
    let version = parsed.version.unwrap_or(1);
    let mut out = Vec::with_capacity(parsed.headers.len());
    for h in parsed.headers.iter() {
        let value = std::str::from_utf8(h.value)
            .map_err(|_| ReadError::Status(400, "header value is not UTF-8"))?;
        out.push((h.name.to_ascii_lowercase(), value.trim().to_string()));
    }
    fn get<'a>(out: &'a [(String, String)], name: &'a str) -> impl Iterator<Item = &'a str> {
        out.iter().filter(move |(n, _)| n == name).map(|(_, v)| v.as_str())
    }
    let connection = get(&out, "connection").next().unwrap_or("").to_ascii_lowercase();
    let keep_alive = if version == 0 {
        connection.contains("keep-alive")
    } else {
        !connection.contains("close")
    };
    let encodings: Vec<&str> = get(&out, "transfer-encoding").collect();
    let lengths: Vec<&str> = get(&out, "content-length").collect();
    let chunked = match encodings.as_slice() {
        [] => false,
        [te] if te.eq_ignore_ascii_case("chunked") => true,
        _ => return Err(ReadError::Status(400, "unsupported transfer-encoding")),
    };
    if chunked && !lengths.is_empty() {
        return Err(ReadError::Status(400, "both content-length and transfer-encoding"));
    }
    let length = match lengths.as_slice() {
        [] => None,
        [first, rest @ ..] if rest.iter().all(|l| l == first) => {
            Some(strict_number(first, 10).ok_or(ReadError::Status(400, "bad content-length"))?)
        }
        _ => return Err(ReadError::Status(400, "conflicting content-length")),
    };
    let request = Request { method, path, headers: out, body: Vec::new(), keep_alive };
    Ok(Some((request, head_len, chunked, length)))
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;

/// A number of digits only (`+5`, ` 5`, `0x5` and the empty string are refused: a proxy
/// that read them differently could smuggle a request past us), as `u64`.
fn strict_number(text: &str, radix: u32) -> Option<u64> {
    if text.is_empty() || text.len() > 20 || !text.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(text, radix).ok()
}
