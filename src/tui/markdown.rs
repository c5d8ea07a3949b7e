//! Markdown as it streams: each line is drawn once it is complete (a newline arrived),
//! so finished lines go to the terminal's scrollback and only the line being written stays
//! live. Headings, lists, quotes, emphasis, inline code, fenced code (highlighted) and
//! tables (drawn aligned when the table ends) are understood; anything else is text.

use ratatui::text::{Line, Span};

use super::highlight::{self, Lang};
use super::theme::{Role, Theme, width};

/// Bytes of the line being written that are drawn live (its end).
const LIVE_TAIL: usize = 2048;

/// One message's Markdown, fed in pieces.
#[derive(Debug, Default)]
pub struct Stream {
    /// The incomplete last line.
    pending: String,
    /// Inside a fence: its language.
    code: Option<Lang>,
    /// The rows of a table not yet drawn.
    table: Vec<String>,
}

impl Stream {
    /// Adds `text`; returns the lines it completed, drawn.
    pub fn push(&mut self, text: &str, theme: &Theme) -> Vec<Line<'static>> {
        self.pending.push_str(text);
        let mut out = Vec::new();
        while let Some(end) = self.pending.find('\n') {
            let line: String = self.pending.drain(..=end).collect();
            self.line(line.trim_end_matches(['\n', '\r']), theme, &mut out);
        }
        out
    }

    /// The line being written, drawn as it is so far.
    pub fn partial(&self, theme: &Theme) -> Option<Line<'static>> {
        if self.pending.is_empty() {
            let rows = self.table.len();
            return (rows > 0)
                .then(|| Line::from(theme.span(Role::Dim, format!("(a table: {rows} rows…)"))));
        }
        // Only the end of a long line is drawn live.
        let mut start = self.pending.len().saturating_sub(LIVE_TAIL);
        while !self.pending.is_char_boundary(start) {
            start += 1;
        }
        let tail = &self.pending[start..];
        Some(match self.code {
            Some(lang) => Line::from(highlight::line(lang, tail, theme)),
            None => Line::from(inline(tail, theme)),
        })
    }

    /// Ends the message: everything still held, drawn.
    pub fn finish(&mut self, theme: &Theme) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            self.line(&line, theme, &mut out);
        }
        self.flush_table(theme, &mut out);
        self.code = None;
        out
    }

    fn line(&mut self, text: &str, theme: &Theme, out: &mut Vec<Line<'static>>) {
        let trimmed = text.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            self.flush_table(theme, out);
            if self.code.take().is_none() {
                self.code = Some(Lang::of(info));
            }
            out.push(Line::from(theme.span(Role::Dim, text.to_string())));
            return;
        }
        if let Some(lang) = self.code {
            let mut spans = vec![theme.span(Role::Dim, "  ")];
            spans.extend(highlight::line(lang, text, theme));
            out.push(Line::from(spans));
            return;
        }
        if trimmed.starts_with('|') {
            self.table.push(trimmed.to_string());
            return;
        }
        self.flush_table(theme, out);
        out.push(block(text, theme));
    }

    fn flush_table(&mut self, theme: &Theme, out: &mut Vec<Line<'static>>) {
        if self.table.is_empty() {
            return;
        }
        let rows: Vec<Vec<String>> = std::mem::take(&mut self.table)
            .iter()
            .map(|row| {
                let inner = row.trim().trim_start_matches('|').trim_end_matches('|');
                inner.split('|').map(|cell| cell.trim().to_string()).collect()
            })
            .collect();
        out.extend(table(&rows, theme));
    }
}

/// A table's rows (the `---` separator row recognised and drawn as a rule).
pub fn table(rows: &[Vec<String>], theme: &Theme) -> Vec<Line<'static>> {
    let rule = |row: &Vec<String>| {
        row.iter().all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')))
    };
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; columns];
    // Widths as drawn: emphasis and code markers take no room.
    let shown = |cell: &str| inline(cell, theme).iter().map(|s| width(&s.content)).sum::<usize>();
    for row in rows.iter().filter(|r| !rule(r)) {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(shown(cell));
        }
    }
    let mut out = Vec::new();
    for (n, row) in rows.iter().enumerate() {
        if rule(row) {
            let line: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            out.push(Line::from(theme.span(Role::Dim, format!(" {} ", line.join("─┼─")))));
            continue;
        }
        let mut spans = vec![Span::raw(" ")];
        for (i, w) in widths.iter().enumerate() {
            let cell = row.get(i).map(String::as_str).unwrap_or("");
            if i > 0 {
                spans.push(theme.span(Role::Dim, " │ "));
            }
            let pad = " ".repeat(w.saturating_sub(shown(cell)));
            if n == 0 {
                spans.push(theme.span(Role::Strong, format!("{cell}{pad}")));
            } else {
                spans.extend(inline(cell, theme));
                spans.push(Span::raw(pad));
            }
        }
        out.push(Line::from(spans));
    }
    out
}

/// One complete line outside code and tables.
fn block(text: &str, theme: &Theme) -> Line<'static> {
    let trimmed = text.trim_start();
    let indent = &text[..text.len() - trimmed.len()];
    let hashes = trimmed.chars().take_while(|c| *c == '#').count();
    if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
        return Line::from(theme.span(Role::Heading, trimmed[hashes + 1..].to_string()));
    }
    if let Some(rest) = trimmed.strip_prefix("> ") {
        let mut spans = vec![theme.span(Role::Dim, "│ ")];
        spans.extend(inline(rest, theme));
        return Line::from(spans);
    }
    if trimmed == "---" || trimmed == "***" {
        return Line::from(theme.span(Role::Dim, "─".repeat(40)));
    }
    for bullet in ["- [ ] ", "- [x] ", "- ", "* ", "+ "] {
        if let Some(rest) = trimmed.strip_prefix(bullet) {
            let mark = match bullet {
                "- [ ] " => "☐ ",
                "- [x] " => "☑ ",
                _ => "• ",
            };
            let mut spans = vec![Span::raw(indent.to_string()), theme.span(Role::Accent, mark)];
            spans.extend(inline(rest, theme));
            return Line::from(spans);
        }
    }
    let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && trimmed[digits..].starts_with(". ") {
        let mut spans = vec![
            Span::raw(indent.to_string()),
            theme.span(Role::Accent, trimmed[..digits + 2].to_string()),
        ];
        spans.extend(inline(&trimmed[digits + 2..], theme));
        return Line::from(spans);
    }
    Line::from(inline(text, theme))
}

/// Emphasis, strong emphasis and inline code within a line.
pub fn inline(text: &str, theme: &Theme) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    let mut rest = text;
    let mut plain = String::new();
    while !rest.is_empty() {
        let marker = ["**", "__", "`", "*", "_"].into_iter().find(|m| rest.starts_with(m));
        if let Some(m) = marker {
            let after = &rest[m.len()..];
            // `_` inside a word (snake_case) is not emphasis.
            let word_inside = m == "_" && plain.chars().last().is_some_and(char::is_alphanumeric);
            if let Some(close) = after.find(m).filter(|c| *c > 0 && !word_inside) {
                if !plain.is_empty() {
                    spans.push(Span::raw(std::mem::take(&mut plain)));
                }
                let role = match m {
                    "`" => Role::Code,
                    "**" | "__" => Role::Strong,
                    _ => Role::Emphasis,
                };
                spans.push(theme.span(role, after[..close].to_string()));
                rest = &after[close + m.len()..];
                continue;
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            plain.push(c);
        }
        rest = chars.as_str();
    }
    if !plain.is_empty() {
        spans.push(Span::raw(plain));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    const THEME: Theme = Theme { color: true };

    fn text(lines: &[Line<'static>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn lines_are_drawn_once_complete_whatever_the_pieces() {
        let mut stream = Stream::default();
        let mut out = Vec::new();
        for piece in [
            "# Ti",
            "tle\n- **bo",
            "ld** and `code`\n",
            "```hcl\nresource \"x\"",
            "\n```\n| a | bb |\n",
            "|---|---|\n| 1 | 2 |\n",
            "tail",
        ] {
            out.extend(stream.push(piece, &THEME));
        }
        assert_eq!(stream.partial(&THEME).map(|l| l.to_string()), Some("tail".to_string()));
        out.extend(stream.finish(&THEME));
        let shown = text(&out);
        assert_eq!(shown[0], "Title");
        assert_eq!(shown[1], "• bold and code");
        assert_eq!(shown[3], "  resource \"x\"");
        assert_eq!(shown[5], " a │ bb");
        assert_eq!(shown[6], " ──┼─── ");
        assert_eq!(shown[7], " 1 │ 2 ");
        assert_eq!(shown[8], "tail");
        assert_eq!(out[0].spans[0].style, THEME.style(Role::Heading));
    }

    #[test]
    fn snake_case_is_not_emphasis() {
        let spans = inline("terraform_data and _this_", &THEME);
        assert_eq!(spans[0].content, "terraform_data and ");
        assert_eq!(spans[1].content, "this");
    }
}
