//! Newline-delimited JSON-RPC framing, shared by our stdio transport (reading the client),
//! the MCP client's stdio transport (reading a server) and `sessions import` (reading an
//! export's JSON lines): one line at a time, never more than a cap of it in memory,
//! whatever the other side sends.

use std::io::{self, BufRead};

/// What `read_capped_line` read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRead {
    /// A whole line (without its newline) is in the buffer.
    Line,
    /// A line over the cap was read and dropped (the buffer is empty).
    TooLong,
    /// The input ended.
    Eof,
}

/// Reads one line into `buf` without ever holding more than `cap` bytes of it.
pub fn read_capped_line(
    input: &mut impl BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<LineRead> {
    let mut too_long = false;
    let mut seen_any = false;
    loop {
        let available = match input.fill_buf() {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if available.is_empty() {
            // EOF: a last line without newline still counts.
            return Ok(match (seen_any, too_long) {
                (false, _) => LineRead::Eof,
                (true, true) => LineRead::TooLong,
                (true, false) => LineRead::Line,
            });
        }
        seen_any = true;
        let (chunk, found_newline) = match available.iter().position(|&b| b == b'\n') {
            Some(pos) => (&available[..pos], Some(pos + 1)),
            None => (available, None),
        };
        if !too_long {
            if buf.len() + chunk.len() > cap {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let consumed = found_newline.unwrap_or(available.len());
        input.consume(consumed);
        if found_newline.is_some() {
            return Ok(if too_long { LineRead::TooLong } else { LineRead::Line });
        }
    }
}
