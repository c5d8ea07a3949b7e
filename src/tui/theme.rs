//! Styles of the terminal client: the sixteen named colours only (the terminal's palette
//! makes them readable on a light or a dark background), none at all under `NO_COLOR`
//! (bold, reverse and underline still mark what matters), and the wrapping of styled lines
//! to the terminal's width.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// What the client draws with.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    /// Colours allowed (no `NO_COLOR`, not `TERM=dumb`).
    pub color: bool,
}

/// The roles a style can play.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Heading,
    Strong,
    Emphasis,
    Code,
    Dim,
    Keyword,
    String,
    Number,
    Comment,
    Key,
    Added,
    Removed,
    Hunk,
    Ok,
    Warn,
    Danger,
    User,
    Accent,
}

impl Theme {
    /// The style of `role`.
    pub fn style(&self, role: Role) -> Style {
        let base = Style::default();
        let (color, modifier) = match role {
            Role::Heading => (Some(Color::Cyan), Modifier::BOLD),
            Role::Strong => (None, Modifier::BOLD),
            Role::Emphasis => (None, Modifier::ITALIC),
            Role::Code => (Some(Color::Yellow), Modifier::empty()),
            Role::Dim => (None, Modifier::DIM),
            Role::Keyword => (Some(Color::Blue), Modifier::BOLD),
            Role::String => (Some(Color::Green), Modifier::empty()),
            Role::Number => (Some(Color::Magenta), Modifier::empty()),
            Role::Comment => (None, Modifier::DIM | Modifier::ITALIC),
            Role::Key => (Some(Color::Cyan), Modifier::empty()),
            Role::Added => (Some(Color::Green), Modifier::empty()),
            Role::Removed => (Some(Color::Red), Modifier::empty()),
            Role::Hunk => (Some(Color::Cyan), Modifier::DIM),
            Role::Ok => (Some(Color::Green), Modifier::empty()),
            Role::Warn => (Some(Color::Yellow), Modifier::BOLD),
            Role::Danger => (Some(Color::Red), Modifier::BOLD | Modifier::REVERSED),
            Role::User => (Some(Color::Blue), Modifier::BOLD),
            Role::Accent => (Some(Color::Magenta), Modifier::BOLD),
        };
        let style = base.add_modifier(modifier);
        match color {
            Some(c) if self.color => style.fg(c),
            _ => style,
        }
    }

    /// A span of `text` in `role`'s style.
    pub fn span(&self, role: Role, text: impl Into<String>) -> Span<'static> {
        Span::styled(text.into(), self.style(role))
    }
}

/// `line` cut into rows at most `width` columns wide: at the last space that fits, or
/// anywhere in a word longer than a row. Every character is kept (a space where a row was
/// cut stays at the end of its row), so the rows can be counted before they are drawn.
pub fn wrap(line: &Line<'static>, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let mut rows: Vec<Vec<(char, Style)>> = Vec::new();
    let mut row: Vec<(char, Style)> = Vec::new();
    let mut used = 0;
    for span in &line.spans {
        for c in span.content.chars() {
            let c = if c == '\t' { ' ' } else { c };
            let w = c.width().unwrap_or(0);
            if used + w > width && used > 0 {
                // Back to the last space, unless the word would fill the row alone.
                let cut = row
                    .iter()
                    .rposition(|(ch, _)| *ch == ' ')
                    .map(|i| i + 1)
                    .filter(|i| *i < row.len());
                let rest = match cut {
                    Some(i) if c != ' ' => row.split_off(i),
                    _ => Vec::new(),
                };
                rows.push(std::mem::replace(&mut row, rest));
                used = row.iter().map(|(ch, _)| ch.width().unwrap_or(0)).sum();
            }
            row.push((c, span.style));
            used += w;
        }
    }
    rows.push(row);
    rows.into_iter().map(|cells| spans_of(&cells, line.style)).collect()
}

/// Cells of one style joined into spans.
fn spans_of(cells: &[(char, Style)], style: Style) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut text = String::new();
    let mut current: Option<Style> = None;
    for (c, s) in cells {
        if current.is_some_and(|cur| cur != *s) {
            spans.push(Span::styled(std::mem::take(&mut text), current.unwrap_or_default()));
        }
        current = Some(*s);
        text.push(*c);
    }
    if let Some(s) = current {
        spans.push(Span::styled(text, s));
    }
    Line::from(spans).style(style)
}

/// The columns `text` takes.
pub fn width(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_every_character_and_counts_wide_ones() {
        let line = Line::from(vec![Span::raw("abcdef"), Span::raw("界界")]);
        let rows = wrap(&line, 4);
        let text: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
        assert_eq!(text, ["abcd", "ef界", "界"]);
        let words = Line::from(vec![
            Span::raw("one two "),
            Span::styled("three", Style::default().add_modifier(Modifier::BOLD)),
        ]);
        let text: Vec<String> = wrap(&words, 9).iter().map(|r| r.to_string()).collect();
        assert_eq!(text, ["one two ", "three"]);
        assert_eq!(
            wrap(&words, 9)[1].spans[0].style,
            Style::default().add_modifier(Modifier::BOLD)
        );
        assert_eq!(width("界a"), 3);
    }

    #[test]
    fn no_color_keeps_emphasis_only() {
        let plain = Theme { color: false }.style(Role::Danger);
        assert!(plain.fg.is_none() && plain.add_modifier.contains(Modifier::REVERSED));
        assert_eq!(Theme { color: true }.style(Role::Removed).fg, Some(Color::Red));
    }
}
