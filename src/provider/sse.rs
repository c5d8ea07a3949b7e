//! A blocking Server-Sent Events parser over `BufRead`: `data:` lines joined, comments
//! skipped, events dispatched on a blank line (or at EOF), lines capped.

use std::io::{self, BufRead};

/// Longest accepted line.
const MAX_LINE: u64 = 16 << 20;

/// Events read in one go: the data of each (its `data:` lines joined with `\n`), one
/// after another in one buffer, so that a burst costs no allocation per event and the
/// buffer can be used again. (The `event:` type is not needed by the chat APIs we speak.)
#[derive(Debug, Default)]
pub struct SseBatch {
    text: String,
    ends: Vec<usize>,
}

impl SseBatch {
    /// An empty batch with room for `events` events of `bytes` bytes in all.
    pub fn with_capacity(events: usize, bytes: usize) -> SseBatch {
        SseBatch { text: String::with_capacity(bytes), ends: Vec::with_capacity(events) }
    }

    /// How many events it holds.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Forgets the events, keeping the room.
    pub fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    /// The events' data, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(self.ends.iter().copied()).map(|(start, end)| &self.text[start..end])
    }
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

    /// Reads the next event into `batch`; false at the end of the stream.
    pub fn next_into(&mut self, batch: &mut SseBatch) -> io::Result<bool> {
        let start = batch.text.len();
        let mut has_data = false;
        loop {
            self.line.clear();
            let mut limited = io::Read::take(&mut self.input, MAX_LINE);
            let n = limited.read_until(b'\n', &mut self.line)?;
            if n == 0 {
                break;
            }
            if n as u64 == MAX_LINE && self.line.last() != Some(&b'\n') {
                batch.text.truncate(start);
                return Err(io::Error::new(io::ErrorKind::InvalidData, "stream line too long"));
            }
            // Valid UTF-8 (nearly always) is read as is; anything else is repaired.
            let text = match std::str::from_utf8(&self.line) {
                Ok(text) => std::borrow::Cow::Borrowed(text),
                Err(_) => String::from_utf8_lossy(&self.line),
            };
            let text = text.trim_end_matches(['\n', '\r']);
            if text.is_empty() {
                if has_data {
                    break;
                }
                continue;
            }
            if text.starts_with(':') {
                continue;
            }
            let (field, value) = match text.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (text, ""),
            };
            if field == "data" {
                if has_data {
                    batch.text.push('\n');
                }
                batch.text.push_str(value);
                has_data = true;
            }
        }
        if has_data {
            batch.ends.push(batch.text.len());
        }
        Ok(has_data)
    }
}

impl<R: io::Read> SseReader<io::BufReader<R>> {
    /// Whether a whole event (a `data` line, then a blank line) is already buffered, so that
    /// reading it cannot wait for the network: a batch may then grow instead of being
    /// handed over. Half an event buffered does not count; the events before it must not
    /// wait for its other half.
    pub fn event_ready(&self) -> bool {
        let buffer = self.input.buffer();
        let mut start = 0;
        let mut data = false;
        // Line by line (memchr: a burst's check must cost next to nothing per event).
        for end in memchr::memchr_iter(b'\n', buffer) {
            let line = &buffer[start..end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                if data {
                    return true;
                }
            } else if line == b"data" || line.starts_with(b"data:") {
                data = true;
            }
            start = end + 1;
        }
        false
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
        let mut batch = SseBatch::default();
        while r.next_into(&mut batch).unwrap() {}
        assert_eq!(batch.iter().collect::<Vec<_>>(), ["{\"a\":1}", "one\ntwo", "[DONE]"]);
        assert_eq!(batch.len(), 3);
        batch.clear();
        assert!(batch.is_empty());
        assert!(!r.next_into(&mut batch).unwrap());
        assert_eq!(batch.iter().count(), 0);
    }

    #[test]
    fn only_a_whole_buffered_event_is_ready() {
        let ready = |bytes: &'static [u8]| {
            let mut reader = io::BufReader::new(bytes);
            let _ = reader.fill_buf();
            SseReader::new(reader).event_ready()
        };
        assert!(ready(b"data: a\n\n"));
        assert!(ready(b"event: x\r\ndata: a\r\n\r\ndata: b"));
        assert!(ready(b": ping\n\ndata\n\n"));
        assert!(!ready(b""));
        assert!(!ready(b"data: a\n"));
        assert!(!ready(b"data: a"));
        assert!(!ready(b": ping\n\ndata: half"), "a comment is no event");
        assert!(!ready(b"event: x\n\n"), "no data, no event");
    }

    #[test]
    fn empty_data_is_an_event_and_a_too_long_line_leaves_the_batch_as_it_was() {
        let mut batch = SseBatch::default();
        let mut r = SseReader::new(&b"data:\n\n"[..]);
        assert!(r.next_into(&mut batch).unwrap());
        assert_eq!(batch.iter().collect::<Vec<_>>(), [""]);
        let long = format!("data: {}", "x".repeat(MAX_LINE as usize));
        let mut r = SseReader::new(long.as_bytes());
        assert!(r.next_into(&mut batch).is_err());
        assert_eq!(batch.iter().collect::<Vec<_>>(), [""]);
    }
}
