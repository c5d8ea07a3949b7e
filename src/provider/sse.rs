//! A blocking Server-Sent Events parser over `BufRead`: `data:` lines joined, comments
//! skipped, events dispatched on a blank line (or at EOF), lines capped.

use std::io::{self, BufRead};

/// Longest accepted line.
const MAX_LINE: u64 = 16 << 20;

/// One event's data (the `event:` type is not needed by the chat APIs we speak).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// `event:` field, if any.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Reads events from a byte stream.
pub struct SseReader<R> {
    input: R,
    line: Vec<u8>,
}

impl<R: BufRead> SseReader<R> {
    /// Wraps a reader.
    pub fn new(input: R) -> SseReader<R> {
        SseReader { input, line: Vec::new() }
    }

    /// The next event, or `None` at the end of the stream.
    pub fn next_event(&mut self) -> io::Result<Option<SseEvent>> {
        let mut data: Option<String> = None;
        let mut event = None;
        loop {
            self.line.clear();
            let mut limited = io::Read::take(&mut self.input, MAX_LINE);
            let n = limited.read_until(b'\n', &mut self.line)?;
            if n == 0 {
                return Ok(data.map(|data| SseEvent { event, data }));
            }
            if n as u64 == MAX_LINE && self.line.last() != Some(&b'\n') {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "stream line too long"));
            }
            // Valid UTF-8 (nearly always) is read as is; anything else is repaired.
            let text = match std::str::from_utf8(&self.line) {
                Ok(text) => std::borrow::Cow::Borrowed(text),
                Err(_) => String::from_utf8_lossy(&self.line),
            };
            let text = text.trim_end_matches(['\n', '\r']);
            if text.is_empty() {
                if data.is_some() {
                    return Ok(data.map(|data| SseEvent { event, data }));
                }
                event = None;
                continue;
            }
            if text.starts_with(':') {
                continue;
            }
            let (field, value) = match text.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (text, ""),
            };
            match field {
                "data" => match &mut data {
                    Some(d) => {
                        d.push('\n');
                        d.push_str(value);
                    }
                    None => data = Some(value.to_string()),
                },
                "event" => event = Some(value.to_string()),
                _ => {}
            }
        }
    }
}

impl<R: io::Read> SseReader<io::BufReader<R>> {
    /// Whether bytes are already buffered, so that the next event may come without waiting
    /// for the network (a batch of events can grow instead of being handed over).
    pub fn has_buffered(&self) -> bool {
        !self.input.buffer().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_events_comments_and_multiline_data() {
        let input =
            b": hi\n\ndata: {\"a\":1}\n\nevent: x\ndata:one\r\ndata: two\r\n\r\ndata: [DONE]";
        let mut r = SseReader::new(&input[..]);
        let ev = |e: Option<&str>, d: &str| {
            Some(SseEvent { event: e.map(String::from), data: d.into() })
        };
        assert_eq!(r.next_event().unwrap(), ev(None, "{\"a\":1}"));
        assert_eq!(r.next_event().unwrap(), ev(Some("x"), "one\ntwo"));
        assert_eq!(r.next_event().unwrap(), ev(None, "[DONE]"));
        assert_eq!(r.next_event().unwrap(), None);
    }
}
