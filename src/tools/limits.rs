//! Output caps shared by every tool: head and tail kept, with a marker saying how much was
//! left out.

use std::collections::VecDeque;

/// Bytes a `Capture` keeps from the start and from the end of a stream.
pub(super) const KEEP_HEAD: usize = 12 * 1024;
pub(super) const KEEP_TAIL: usize = 12 * 1024;

/// Longest tool output handed to the model, in characters.
pub const MAX_TOOL_OUTPUT_CHARS: usize = 50_000;

/// Cuts `text` to at most about `max_chars` characters, keeping the head and the tail.
pub fn truncate_middle(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_string();
    }
    let head_chars = max_chars * 3 / 5;
    let tail_chars = max_chars - head_chars;
    let head_end = text.char_indices().nth(head_chars).map_or(text.len(), |(i, _)| i);
    let tail_start = text.char_indices().nth(total - tail_chars).map_or(text.len(), |(i, _)| i);
    let omitted = total - head_chars - tail_chars;
    format!(
        "{}\n[... {omitted} characters omitted ...]\n{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

/// What one stream produced: the head and the tail, and how much was dropped between,
/// in bounded memory however long the stream.
#[derive(Default)]
pub(crate) struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    /// Bytes seen in all.
    pub total: u64,
}

impl Capture {
    /// Adds bytes.
    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = KEEP_HEAD - self.head.len();
        let take = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..take]);
        bytes = &bytes[take..];
        push_tail(&mut self.tail, bytes, KEEP_TAIL);
    }

    /// The head, a marker for what was dropped, and the tail.
    pub fn text(&self) -> String {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.total > kept {
            out.push_str(&format!("\n[... {} bytes omitted ...]\n", self.total - kept));
        }
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        out.push_str(&String::from_utf8_lossy(&tail));
        out
    }
}

/// Appends to a bounded tail buffer.
pub(super) fn push_tail(tail: &mut VecDeque<u8>, bytes: &[u8], cap: usize) {
    let bytes = &bytes[bytes.len().saturating_sub(cap)..];
    let overflow = (tail.len() + bytes.len()).saturating_sub(cap);
    tail.drain(..overflow);
    tail.extend(bytes);
}

/// The live tail as the client may see it: whole lines only. When its start was cut
/// (`cut`), from the first whole line (a cut token's prefix would hide its shape from
/// redaction), past the end of a private key whose header was cut away (its body has no
/// shape at all), and up to the last line ended.
pub(super) fn whole_lines(text: &str, cut: bool) -> String {
    let mut text = text;
    if cut {
        text = text.find('\n').map_or("", |at| &text[at + 1..]);
    }
    if let Some(end) = text.find("PRIVATE KEY-----")
        && !text[..end].contains("-----BEGIN")
    {
        let after = end + "PRIVATE KEY-----".len();
        text = text[after..].find('\n').map_or("", |at| &text[after + at + 1..]);
    }
    // The last line may still be printing a value (`password = "abc` has no closing quote
    // yet, a value half printed matches nothing): it shows once it ends.
    text.rfind('\n').map_or("", |at| &text[..=at]).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_tail_starts_on_a_whole_line_and_past_a_headless_key() {
        assert_eq!(whole_lines("hp_abcdef\nnext\n", true), "next\n");
        assert_eq!(whole_lines("ghp_abcdef\nnext\n", false), "ghp_abcdef\nnext\n");
        assert_eq!(whole_lines("done\npassword = \"abc", false), "done\n", "a line still printing");
        let headless = "MIIEvQIBADANBg\nAAAA\n-----END RSA PRIVATE KEY-----\nafter\n";
        assert_eq!(whole_lines(headless, false), "after\n");
        let whole = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";
        assert_eq!(whole_lines(whole, false), whole, "a whole key is redaction's to hide");
    }

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut c = Capture::default();
        c.push(&vec![b'a'; KEEP_HEAD]);
        c.push(&vec![b'b'; 100_000]);
        c.push(b"END");
        let text = c.text();
        assert!(text.starts_with(&"a".repeat(KEEP_HEAD)));
        assert!(text.ends_with("bbbEND"));
        let omitted = 100_003 - KEEP_TAIL as u64;
        assert!(text.contains(&format!("[... {omitted} bytes omitted ...]")), "{}", &text[..100]);
    }

    #[test]
    fn keeps_head_and_tail() {
        assert_eq!(truncate_middle("short", 10), "short");
        let text: String = "é".repeat(100);
        let cut = truncate_middle(&text, 10);
        assert!(cut.starts_with("éééééé\n[... 90 characters omitted ...]\néééé"), "{cut}");
    }
}
