//! Shortening text for titles, messages and listings: one rule, one place. What is cut is
//! replaced by `…`, and the result is never longer than asked.

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
}
