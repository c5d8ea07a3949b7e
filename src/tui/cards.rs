//! Tool calls as cards (kind, title, tier, sandbox, status, the last lines of live
//! output), an edit's unified diff, and the plan as a checklist. A running call is drawn
//! in the live area; a finished one is printed once into the scrollback.

use ratatui::text::{Line, Span};
use serde_json::Value;

use super::theme::{Role, Theme};

/// Lines of live output a running card shows.
const TAIL: usize = 5;
/// Lines of output a finished card keeps.
const KEPT: usize = 12;

/// One tool call as its updates left it.
#[derive(Debug, Clone)]
pub struct Card {
    pub id: String,
    pub title: String,
    pub kind: String,
    pub status: String,
    pub tier: Option<String>,
    /// `confined`, `network`, `credentials` (from `_meta.iacCode.sandbox`).
    pub sandbox: Option<String>,
    pub content: Vec<Value>,
}

impl Card {
    /// A card from a `tool_call` update.
    pub fn new(update: &Value) -> Card {
        let mut card = Card {
            id: update["toolCallId"].as_str().unwrap_or("").to_string(),
            title: "tool".into(),
            kind: "other".into(),
            status: "pending".into(),
            tier: None,
            sandbox: None,
            content: Vec::new(),
        };
        card.update(update);
        card
    }

    /// Applies a `tool_call_update` (only the fields it carries).
    pub fn update(&mut self, u: &Value) {
        if let Some(t) = u["title"].as_str() {
            self.title = t.to_string();
        }
        if let Some(k) = u["kind"].as_str() {
            self.kind = k.to_string();
        }
        if let Some(s) = u["status"].as_str() {
            self.status = s.to_string();
        }
        if let Some(t) = u.pointer("/_meta/iacCode/tier").and_then(Value::as_str) {
            self.tier = Some(t.to_string());
        }
        if let Some(s) = u.pointer("/_meta/iacCode/sandbox").filter(|s| s.is_object()) {
            self.sandbox = Some(sandbox_words(s));
        }
        if let Some(c) = u["content"].as_array() {
            self.content.clone_from(c);
        }
    }

    /// Whether the call has ended.
    pub fn finished(&self) -> bool {
        matches!(self.status.as_str(), "completed" | "failed")
    }

    /// The head line: kind, title, tier, sandbox, status.
    pub fn head(&self, theme: &Theme) -> Line<'static> {
        let kind = match self.kind.as_str() {
            "read" => "Read",
            "edit" => "Edit",
            "delete" => "Delete",
            "move" => "Move",
            "search" => "Search",
            "execute" => "Run",
            "think" => "Think",
            "fetch" => "Fetch",
            "switch_mode" => "Mode",
            _ => "Tool",
        };
        let (status, role) = match self.status.as_str() {
            "completed" => ("✓ done", Role::Ok),
            "failed" => ("✗ failed", Role::Removed),
            "in_progress" => ("… running", Role::Warn),
            _ => ("pending", Role::Dim),
        };
        let mut spans =
            vec![theme.span(Role::Accent, format!("● {kind} ")), Span::raw(self.title.clone())];
        if let Some(tier) = &self.tier {
            let role = if tier == "destroy" { Role::Danger } else { Role::Key };
            spans.push(Span::raw(" "));
            spans.push(theme.span(role, format!("[{tier}]")));
        }
        if let Some(sandbox) = &self.sandbox {
            spans.push(theme.span(Role::Dim, format!(" ({sandbox})")));
        }
        spans.push(Span::raw("  "));
        spans.push(theme.span(role, status));
        Line::from(spans)
    }

    /// The card: head, then its content (the last `TAIL` lines of output while it runs).
    pub fn lines(&self, theme: &Theme, live: bool) -> Vec<Line<'static>> {
        let mut out = vec![self.head(theme)];
        for item in &self.content {
            match item["type"].as_str() {
                Some("diff") => out.extend(diff_lines(item, theme)),
                Some("content") => {
                    let text = item["content"]["text"].as_str().unwrap_or("");
                    let lines: Vec<&str> = text.lines().collect();
                    let keep = if live { TAIL } else { KEPT };
                    if lines.len() > keep {
                        let hidden = lines.len() - keep;
                        out.push(Line::from(
                            theme.span(Role::Dim, format!("  … {hidden} earlier lines")),
                        ));
                    }
                    for l in &lines[lines.len().saturating_sub(keep)..] {
                        out.push(Line::from(vec![
                            theme.span(Role::Dim, "  │ "),
                            Span::raw(l.to_string()),
                        ]));
                    }
                }
                Some("terminal") => out.push(Line::from(theme.span(Role::Dim, "  (terminal)"))),
                _ => {}
            }
        }
        out
    }
}

/// `_meta.iacCode.sandbox` in words: confined, or what it reaches.
fn sandbox_words(s: &Value) -> String {
    let mut words = Vec::new();
    if s["confined"] == true {
        words.push("confined");
    } else {
        words.push("not confined");
    }
    if s["network"] == true {
        words.push("network");
    }
    if s["credentials"] == true {
        words.push("credentials");
    }
    words.join(", ")
}

/// A `diff` content item as a coloured unified diff.
pub fn diff_lines(item: &Value, theme: &Theme) -> Vec<Line<'static>> {
    let path = item["path"].as_str().unwrap_or("");
    let old = item["oldText"].as_str().unwrap_or("");
    let new = item["newText"].as_str().unwrap_or("");
    let mut out = vec![Line::from(theme.span(Role::Strong, format!("  {path}")))];
    for (tag, text) in unified(old, new) {
        let (role, mark) = match tag {
            '+' => (Some(Role::Added), "+"),
            '-' => (Some(Role::Removed), "-"),
            '@' => (Some(Role::Hunk), ""),
            _ => (None, " "),
        };
        let line = format!("  {mark}{text}");
        out.push(match role {
            Some(role) => Line::from(theme.span(role, line)),
            None => Line::from(line),
        });
    }
    out
}

/// The lines of a unified diff with three lines of context: (' ' | '+' | '-' | '@', text).
pub fn unified(old: &str, new: &str) -> Vec<(char, String)> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = edit_script(&a, &b);
    let changed: Vec<usize> =
        ops.iter().enumerate().filter(|(_, o)| o.0 != ' ').map(|(i, _)| i).collect();
    let mut out = Vec::new();
    let mut shown_to = 0;
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(3).max(shown_to);
        let mut end = changed[k] + 1;
        while k + 1 < changed.len() && changed[k + 1] <= end + 6 {
            k += 1;
            end = changed[k] + 1;
        }
        let end = (end + 3).min(ops.len());
        out.push(('@', "@@".to_string()));
        out.extend(ops[start..end].iter().map(|(t, s)| (*t, s.to_string())));
        shown_to = end;
        k += 1;
    }
    out
}

/// The line operations turning `a` into `b` (a longest common subsequence; past a
/// million cells, everything removed then added).
fn edit_script<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(char, &'a str)> {
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > 1_000_000 {
        return a.iter().map(|l| ('-', *l)).chain(b.iter().map(|l| ('+', *l))).collect();
    }
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i * (m + 1) + j] = if a[i] == b[j] {
                lcs[(i + 1) * (m + 1) + j + 1] + 1
            } else {
                lcs[(i + 1) * (m + 1) + j].max(lcs[i * (m + 1) + j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1]) {
            out.push(('-', a[i]));
            i += 1;
        } else {
            out.push(('+', b[j]));
            j += 1;
        }
    }
    out
}

/// A `plan` update's entries as a checklist.
pub fn plan_lines(entries: &[Value], theme: &Theme) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(theme.span(Role::Heading, "Plan"))];
    for e in entries {
        let (mark, role) = match e["status"].as_str() {
            Some("completed") => ("☑", Role::Ok),
            Some("in_progress") => ("▶", Role::Warn),
            _ => ("☐", Role::Dim),
        };
        let text = e["content"].as_str().unwrap_or("").to_string();
        out.push(Line::from(vec![theme.span(role, format!("  {mark} ")), Span::raw(text)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_diff_shows_the_change_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        let d = unified(old, new);
        let tags: String = d.iter().map(|(t, _)| *t).collect();
        assert_eq!(tags, "@   -+   ");
        assert_eq!(d[4], ('-', "e".to_string()));
        assert_eq!(d[5], ('+', "E".to_string()));
    }

    #[test]
    fn a_card_follows_its_updates() {
        let theme = Theme { color: false };
        let mut card =
            Card::new(&json!({"toolCallId": "c1", "title": "terraform plan", "kind": "execute",
            "_meta": {"iacCode": {"tier": "plan"}}}));
        card.update(&json!({"status": "in_progress", "_meta": {"iacCode": {"sandbox": {"confined": true, "network": true}}},
            "content": [{"type": "content", "content": {"type": "text", "text": "1\n2\n3\n4\n5\n6\n7"}}]}));
        let shown: Vec<String> = card.lines(&theme, true).iter().map(|l| l.to_string()).collect();
        assert_eq!(shown[0], "● Run terraform plan [plan] (confined, network)  … running");
        assert_eq!(shown.len(), 1 + 1 + TAIL);
        assert!(shown.last().unwrap().ends_with('7'));
        assert!(!card.finished());
    }
}
