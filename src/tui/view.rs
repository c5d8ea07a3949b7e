//! The live viewport at the bottom of the terminal: what is still changing (the line being
//! streamed, running tool cards, a question, a form, the `/resume` picker, completions, a
//! history search, queued messages), the input, and the status line (model, mode,
//! sandbox, context used, session cost).

use ratatui::layout::Position;
use ratatui::text::{Line, Span};

use super::app::App;
use super::theme::{Role, wrap};

/// Rows of a streaming line shown live.
const PARTIAL_ROWS: usize = 4;
/// Completions listed at most.
const COMPLETIONS: usize = 6;

/// The viewport's rows at `width`, and where the cursor goes (row, column).
pub fn rows(app: &App, width: u16) -> (Vec<Line<'static>>, Position) {
    let theme = &app.theme;
    let mut live: Vec<Line<'static>> = Vec::new();
    if let Some(line) = app.stream.partial(theme) {
        let rows = wrap(&line, width);
        live.extend(rows[rows.len().saturating_sub(PARTIAL_ROWS)..].iter().cloned());
    } else if app.flow == super::app::Flow::Thought {
        live.push(Line::from(theme.span(Role::Comment, "✻ Thinking…")));
    }
    for card in &app.cards {
        live.extend(card.lines(theme, true));
    }
    if let Some(q) = &app.question {
        live.extend(q.lines(theme));
    }
    if let Some(f) = &app.form {
        live.extend(f.lines(theme));
    }
    if let Some((sessions, at)) = &app.picker {
        live.push(Line::from(theme.span(Role::Heading, "Resume a session (↑/↓, Enter, Esc)")));
        let start = at.saturating_sub(COMPLETIONS - 1);
        for (i, (id, title)) in sessions.iter().enumerate().skip(start).take(COMPLETIONS) {
            let mark = if i == *at { "▶ " } else { "  " };
            let style = if i == *at { theme.style(Role::Strong) } else { theme.style(Role::Dim) };
            live.push(Line::from(Span::styled(format!("{mark}{title}  {id}"), style)));
        }
    }
    if let Some(typed) =
        app.editor.text.strip_prefix('/').filter(|t| !t.contains(char::is_whitespace))
    {
        for name in app.matches(typed).into_iter().take(COMPLETIONS) {
            let about = app
                .commands
                .iter()
                .find(|(n, _)| n == name)
                .map_or("sessions of this directory", |(_, d)| d.as_str());
            live.push(Line::from(vec![
                theme.span(Role::Key, format!("  /{name}")),
                theme.span(Role::Dim, format!("  {about}")),
            ]));
        }
    }
    for q in &app.queued {
        let first = q.lines().next().unwrap_or("");
        live.push(Line::from(vec![
            theme.span(Role::Dim, "  queued: "),
            Span::raw(first.to_string()),
        ]));
    }
    if let Some(notice) = &app.notice {
        live.push(Line::from(theme.span(Role::Warn, notice.clone())));
    }
    let mut out: Vec<Line<'static>> = live.iter().flat_map(|l| wrap(l, width)).collect();
    out.push(Line::from(theme.span(Role::Dim, "─".repeat(usize::from(width)))));
    let top = out.len();
    let (prompt, text) = match &app.search {
        Some((query, found)) => {
            let entry = found.and_then(|i| app.history.entries.get(i)).map_or("", String::as_str);
            (format!("(search) '{query}': "), entry.replace('\n', " ⏎ "))
        }
        None => ("› ".to_string(), app.editor.text.clone()),
    };
    let (cursor_line, cursor_col) = match &app.search {
        Some(_) => (0, text.chars().count()),
        None => app.editor.position(),
    };
    let mut cursor = Position { x: 0, y: 0 };
    let mut row = top;
    for (i, line) in text.split('\n').enumerate() {
        let lead = if i == 0 { prompt.clone() } else { " ".repeat(super::theme::width(&prompt)) };
        let lead_w = super::theme::width(&lead);
        let rows = wrap(
            &Line::from(vec![theme.span(Role::User, lead), Span::raw(line.to_string())]),
            width,
        );
        if i == cursor_line {
            let before: String = line.chars().take(cursor_col).collect();
            let at = lead_w + super::theme::width(&before);
            let w = usize::from(width.max(1));
            cursor = Position { x: (at % w) as u16, y: (row + at / w) as u16 };
        }
        row += rows.len();
        out.extend(rows);
    }
    out.push(status(app, width));
    (out, cursor)
}

/// The status line.
fn status(app: &App, width: u16) -> Line<'static> {
    let theme = &app.theme;
    let mut parts: Vec<String> = Vec::new();
    // What is happening first: a narrow terminal cuts the end of the line.
    if app.session.is_none() {
        parts.push("starting…".into());
    } else if app.turn {
        parts.push("working (Esc interrupts)".into());
    }
    if !app.model.is_empty() {
        parts.push(app.model.clone());
    }
    let mode = app
        .modes
        .iter()
        .find(|(id, _)| *id == app.mode)
        .map_or(app.mode.clone(), |(_, name)| name.clone());
    if !mode.is_empty() {
        parts.push(format!("mode: {mode}"));
    }
    if !app.sandbox.is_empty() {
        parts.push(app.sandbox.clone());
    }
    if let Some((used, size)) = app.used {
        let pct = (used * 100).checked_div(size).unwrap_or(0);
        parts.push(format!("context {pct}% ({}k/{}k)", used / 1000, size / 1000));
    }
    if let Some(cost) = &app.cost {
        parts.push(cost.clone());
    }
    let line = Line::from(theme.span(Role::Dim, parts.join(" · ")));
    // One row: cut, never wrapped.
    wrap(&line, width).into_iter().next().unwrap_or_default()
}
