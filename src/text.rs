//! Shortening text for titles, messages and listings: one rule, one place. What is cut is
//! replaced by `…`, and the result is never longer than asked. A title that leaves for the
//! client (a tool call's, a question's) is a [`Title`]: one line of printable characters,
//! bounded, head and tail kept, its claimant first.

/// Characters of a session title at most (from the first prompt or a `/rename`).
pub const TITLE_CHARS: usize = 80;

/// `text` cut to at most `max_chars` characters, the last of them `…` when it was cut.
pub fn clip(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_string(),
        Some(_) => {
            let keep: String = text.chars().take(max_chars.saturating_sub(1)).collect();
            format!("{keep}…")
        }
    }
}

/// `text` on one line (line breaks shown as `sep`), clipped to `max_chars`.
pub fn one_line(text: &str, sep: &str, max_chars: usize) -> String {
    clip(&text.trim().replace("\r\n", "\n").replace('\n', sep), max_chars)
}

/// A session title from text: its first non-empty line, trimmed and clipped.
pub fn title(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("(empty)");
    clip(line, TITLE_CHARS)
}

/// Characters of a title at most: a tool call's, a question's, an option's.
pub const MAX_TITLE_CHARS: usize = 500;
/// Characters of a title's claimant at most ("MCP server <name>").
const MAX_CLAIMANT_CHARS: usize = 100;
/// What a line break becomes in a title.
pub const LINE_BREAK: &str = " ⏎ ";
/// A run of more blanks than this is shown as a count (padding never pushes text away).
const MAX_BLANKS: usize = 8;

/// A title that may leave for the client: one line of printable characters (controls,
/// escape sequences, bidi and other invisible format characters gone, line breaks shown as
/// `⏎`), at most `MAX_TITLE_CHARS` characters, with whose claim it is first ("MCP server
/// x: …"), and the head and the tail of a long text around `[… N characters …]`, never
/// only the head. Built only by [`Title::new`] (or [`Title::bounded`]): a wire field of this
/// type cannot carry an unsanitised title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Title(String);

impl Title {
    /// The title for `text`, claimed by `claimant` (put first, followed by `: `).
    pub fn new(claimant: Option<&str>, text: &str) -> Title {
        Title::bounded(claimant, text, MAX_TITLE_CHARS)
    }

    /// `new` with at most `max_chars` characters (for a title's parts).
    pub fn bounded(claimant: Option<&str>, text: &str, max_chars: usize) -> Title {
        let text = printable(text);
        let claimant = claimant.map(printable).filter(|c| !c.is_empty());
        let Some(claimant) = claimant else { return Title(middle_cut(&text, max_chars)) };
        let claimant = middle_cut(&claimant, MAX_CLAIMANT_CHARS.min(max_chars / 2));
        let left = max_chars.saturating_sub(claimant.chars().count() + 2);
        Title(format!("{claimant}: {}", middle_cut(&text, left)))
    }

    /// The title's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The title's text, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::fmt::Display for Title {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `text` as one line of printable characters: escape sequences, control characters, bidi
/// controls and other invisible format characters removed; each run of line breaks (LF, CR,
/// CRLF, VT, FF, NEL, U+2028, U+2029) shown as ` ⏎ `; blanks made plain spaces, a run of
/// more than `MAX_BLANKS` shown as `[… N spaces …]`; trimmed. Never longer than `text`'s
/// characters plus the markers; unbounded (bound it with `Title`).
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(4096));
    let mut chars = text.chars().peekable();
    let (mut line_break, mut blanks) = (false, 0usize);
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars, None),
            '\u{9b}' => skip_escape(&mut chars, Some('[')),
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => {
                skip_escape(&mut chars, Some(']'));
            }
            c if is_line_break(c) => line_break = true,
            c if c.is_whitespace() => blanks += 1,
            c if is_invisible(c) => {}
            c => {
                if !out.is_empty() {
                    if line_break {
                        out.push_str(LINE_BREAK);
                    } else if blanks > MAX_BLANKS {
                        out.push_str(&format!(" [… {blanks} spaces …] "));
                    } else {
                        out.extend(std::iter::repeat_n(' ', blanks));
                    }
                }
                (line_break, blanks) = (false, 0);
                out.push(c);
            }
        }
    }
    out
}

fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// Controls (C0, DEL, C1), bidi controls, and characters that show nothing (format
/// characters, fillers, tags, variation selectors).
fn is_invisible(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{ad}' | '\u{34f}' | '\u{61c}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}'
            | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}' | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}'
            | '\u{ffa0}' | '\u{fff0}'..='\u{fffb}' | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}')
}

/// Skips the rest of an escape sequence whose introducer (ESC, or a C1 control standing
/// for `ESC kind`) was read: a CSI's parameters and final byte, a string (OSC, DCS, …) up
/// to its terminator (BEL, ST, ESC \), or an intermediate run and one final byte.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, kind: Option<char>) {
    let kind = match kind {
        Some(kind) => kind,
        None => match chars.peek() {
            Some(&c @ ('[' | ']' | 'P' | 'X' | '^' | '_')) => {
                chars.next();
                if c == '[' { '[' } else { ']' }
            }
            _ => {
                while chars.next_if(|c| ('\u{20}'..='\u{2f}').contains(c)).is_some() {}
                chars.next_if(|c| ('\u{30}'..='\u{7e}').contains(c));
                return;
            }
        },
    };
    if kind == '[' {
        while chars.next_if(|c| ('\u{20}'..='\u{3f}').contains(c)).is_some() {}
        chars.next_if(|c| ('\u{40}'..='\u{7e}').contains(c));
        return;
    }
    while let Some(c) = chars.next() {
        match c {
            '\u{07}' | '\u{9c}' => return,
            '\u{1b}' => {
                chars.next_if_eq(&'\\');
                return;
            }
            _ => {}
        }
    }
}

/// `text` in at most `max_chars` characters: when longer, its head and its tail around
/// `[… N characters …]` (N the characters left out); plainly clipped when even the marker
/// does not fit.
pub fn middle_cut(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_string();
    }
    let marker = |n: usize| format!(" [… {n} characters …] ");
    let room = max_chars.saturating_sub(marker(total).chars().count());
    if room < 2 {
        return clip(text, max_chars);
    }
    let head = room * 2 / 3;
    let tail = room - head;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(total - tail).collect();
    format!("{}{}{}", start.trim_end(), marker(total - room), end.trim_start())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_to_the_limit_with_a_mark() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("exactly10!", 10), "exactly10!");
        assert_eq!(clip("eleven char", 10), "eleven ch…");
        assert_eq!(clip("ééééé", 3).chars().count(), 3);
        assert_eq!(one_line("a\nb\r\nc", " ⏎ ", 50), "a ⏎ b ⏎ c");
        assert_eq!(title("\n  fix the vpc  \nmore"), "fix the vpc");
        assert_eq!(title(&"x".repeat(100)).chars().count(), TITLE_CHARS);
        assert_eq!(title("  \n "), "(empty)");
    }

    #[test]
    fn a_title_is_one_printable_bounded_line_claimed_first() {
        let padded = format!("read{}(MCP server fake)", " ".repeat(4096));
        let cases: &[(&str, &str)] = &[
            ("a\nb\r\nc\rd\u{2028}e\u{2029}f\u{85}g", "a ⏎ b ⏎ c ⏎ d ⏎ e ⏎ f ⏎ g"),
            ("\x1b[31mred\x1b[0m \x1b]0;pwned\x07title\x1b]8;;x\x1b\\y", "red titley"),
            ("bell\x07 nul\0 del\x7f c1\u{9b}2Jok", "bell nul del c1ok"),
            ("abc\u{202e}txt.exe\u{2066}\u{200f}\u{61c}\u{200b}\u{feff}", "abctxt.exe"),
            ("tab\there", "tab here"),
            ("  \n lead and trail \n\n ", "lead and trail"),
            (&padded, "read [… 4096 spaces …] (MCP server fake)"),
        ];
        for (raw, want) in cases {
            assert_eq!(Title::new(None, raw).as_str(), *want, "{raw:?}");
        }
        let claimed = Title::new(Some("MCP server evil\n\u{202e}x"), "Delete\tall");
        assert_eq!(claimed.as_str(), "MCP server evil ⏎ x: Delete all");
        let long = format!("echo {}; touch X", "a".repeat(3000));
        let title = Title::new(None, &long);
        let shown = title.as_str();
        assert!(shown.chars().count() <= MAX_TITLE_CHARS, "{}", shown.chars().count());
        assert!(shown.starts_with("echo aaa") && shown.ends_with("; touch X"), "{shown}");
        let (head, rest) = shown.split_once(" [… ").unwrap();
        let (n, tail) = rest.split_once(" characters …] ").unwrap();
        let n: usize = n.parse().unwrap();
        assert_eq!(head.chars().count() + n + tail.chars().count(), long.chars().count());
        let huge_name = "n".repeat(1000);
        let claimed = Title::new(Some(&huge_name), &long);
        assert!(claimed.as_str().chars().count() <= MAX_TITLE_CHARS);
        assert!(claimed.as_str().ends_with("; touch X") && claimed.as_str().contains("n: echo"));
        assert_eq!(Title::new(None, title.as_str()), title, "sanitising twice changes nothing");
        assert_eq!(middle_cut("abcdef", 2), "a…");
    }
}
