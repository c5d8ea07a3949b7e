//! The request reader driven from memory, for the fuzz targets (`fuzz/`, through
//! `crate::fuzzing`): the same `Reader` a connection uses, over bytes handed out a few at a
//! time, with limits small enough for a fuzzer's inputs to reach.

use std::io::{self, Read};
use std::time::Duration;

use super::request::{Limits, ReadError, Reader, Source};

/// The largest body the fuzz target accepts.
pub const MAX_BODY: u64 = 256;

/// The limits the fuzz target reads with (the server's are larger, the code the same).
const LIMITS: Limits = Limits {
    max_head: 512,
    max_headers: 8,
    max_body: MAX_BODY,
    head_timeout: Duration::from_secs(60),
    body_timeout: Duration::from_secs(60),
};

/// Bytes handed out at most `step` at a time; no deadline ever passes.
struct Slice<'a> {
    rest: &'a [u8],
    step: usize,
}

impl Read for Slice<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.step).min(self.rest.len());
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}

impl Source for Slice<'_> {
    fn set_timeout(&mut self, _: Duration) -> io::Result<()> {
        Ok(())
    }
}

/// One request read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Method, path, headers, body and keep-alive, on one line.
    pub summary: String,
    /// The body's length.
    pub body: usize,
}

/// Reads every request in `bytes`, handed to the reader at most `step` bytes per read, as
/// one connection would, up to the end or the first error (as its HTTP status).
pub fn requests(bytes: &[u8], step: usize) -> Vec<Result<Seen, u16>> {
    let mut reader = Reader::new(Slice { rest: bytes, step: step.max(1) });
    let mut out = Vec::new();
    loop {
        let next = reader.next(&LIMITS, Duration::from_secs(60), &mut |_| Ok(()), &mut || Ok(()));
        match next {
            Ok(r) => out.push(Ok(Seen {
                summary: format!(
                    "{} {} {:?} {:?} keep-alive={}",
                    r.method,
                    r.path,
                    r.headers,
                    String::from_utf8_lossy(&r.body),
                    r.keep_alive
                ),
                body: r.body.len(),
            })),
            Err(ReadError::Closed) => return out,
            Err(ReadError::Status(status, _)) => {
                out.push(Err(status));
                return out;
            }
            Err(ReadError::Refused(refusal)) => {
                out.push(Err(refusal.status));
                return out;
            }
            Err(ReadError::Io(_)) => {
                out.push(Err(0));
                return out;
            }
        }
    }
}
