//! Output caps shared by every tool: head and tail kept, with a marker saying how much was
//! left out.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail() {
        assert_eq!(truncate_middle("short", 10), "short");
        let text: String = "é".repeat(100);
        let cut = truncate_middle(&text, 10);
        assert!(cut.starts_with("éééééé\n[... 90 characters omitted ...]\néééé"), "{cut}");
    }
}
