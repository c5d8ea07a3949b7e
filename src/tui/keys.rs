//! What each key does: the input's editing keys, Enter and the ways to add a line, the
//! history (↑/↓, Ctrl+R), `/` completion, Shift+Tab's mode cycle, Esc and Ctrl+C's
//! interrupts, the exits (Ctrl+C twice, Ctrl+D), queued messages and steering (Tab), and
//! the keys of a question, a form and the `/resume` picker.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use serde_json::json;

use super::app::App;
use super::question::Question;
use super::rpc::Call;
use super::theme::Role;

/// What the loop must do after a key.
#[derive(Debug, PartialEq, Eq)]
pub enum After {
    Nothing,
    /// Open the input in `$EDITOR`.
    Editor,
}

impl App {
    pub fn key(&mut self, key: KeyEvent) -> After {
        if key.kind == KeyEventKind::Release {
            return After::Nothing;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        if !(ctrl && key.code == KeyCode::Char('c')) {
            self.armed = false;
            if !self.turn {
                self.notice = None;
            }
        }
        if self.question.is_some() {
            self.question_key(key);
            return After::Nothing;
        }
        if self.picker.is_some() {
            self.picker_key(key);
            return After::Nothing;
        }
        if self.search.is_some() && self.search_key(key) {
            return After::Nothing;
        }
        match key.code {
            KeyCode::Char('c') if ctrl => self.ctrl_c(),
            KeyCode::Char('d') if ctrl => {
                if self.editor.is_empty() {
                    self.exit = Some(0);
                } else {
                    self.editor.delete();
                }
            }
            KeyCode::Char('g') if ctrl => return After::Editor,
            KeyCode::Char('r') if ctrl => self.search = Some((String::new(), None)),
            KeyCode::Char('a') if ctrl => self.editor.home(),
            KeyCode::Char('e') if ctrl => self.editor.end(),
            KeyCode::Char('u') if ctrl => self.editor.kill_to_start(),
            KeyCode::Char('w') if ctrl => self.editor.kill_word(),
            KeyCode::Char('j') if ctrl => self.editor.insert("\n"),
            KeyCode::Esc => {
                if self.form.is_some() {
                    if let Some(f) = self.form.take() {
                        self.rpc.respond(&f.id, json!({"action": "decline"}));
                    }
                } else if self.turn {
                    self.interrupt();
                }
            }
            KeyCode::Enter if alt || key.modifiers.contains(KeyModifiers::SHIFT) => {
                self.editor.insert("\n");
            }
            KeyCode::Enter => self.enter(),
            KeyCode::BackTab => self.cycle_mode(),
            KeyCode::Tab => self.tab(),
            KeyCode::Backspace => self.editor.backspace(),
            KeyCode::Delete => self.editor.delete(),
            KeyCode::Left => self.editor.left(),
            KeyCode::Right => self.editor.right(),
            KeyCode::Home => self.editor.home(),
            KeyCode::End => self.editor.end(),
            KeyCode::Up if self.editor.on_first_line() => {
                let current = self.editor.text.clone();
                if let Some(entry) = self.history.older(&current).map(str::to_string) {
                    self.editor.set(&entry);
                }
            }
            KeyCode::Down if self.editor.on_last_line() => {
                if let Some(entry) = self.history.newer() {
                    self.editor.set(&entry);
                }
            }
            KeyCode::Char(c) if !ctrl => self.editor.insert(c.encode_utf8(&mut [0; 4])),
            _ => {}
        }
        After::Nothing
    }

    /// Bracketed paste: the text as typed, its line ends kept.
    pub fn paste(&mut self, text: &str) {
        if self.question.is_none() && self.picker.is_none() {
            self.editor.insert(text);
        }
    }

    fn ctrl_c(&mut self) {
        if self.question.is_some() || self.turn {
            self.interrupt();
        } else if !self.editor.is_empty() {
            self.editor.take();
        } else if self.armed {
            self.exit = Some(0);
        } else {
            self.armed = true;
            self.notice = Some("Press Ctrl+C again to exit".into());
        }
    }

    fn enter(&mut self) {
        // A trailing backslash continues the message on a new line.
        if self.editor.text[..self.editor.cursor].ends_with('\\') {
            self.editor.backspace();
            self.editor.insert("\n");
            return;
        }
        if let Some(form) = self.form.as_mut() {
            let text = self.editor.take();
            match form.give(&text) {
                Ok(Some(answer)) => {
                    let id = form.id.clone();
                    self.form = None;
                    self.rpc.respond(&id, answer);
                }
                Ok(None) => {}
                Err(why) => self.notice = Some(why),
            }
            return;
        }
        let text = self.editor.text.trim().to_string();
        if text.is_empty() {
            return;
        }
        self.editor.take();
        self.history.add(&text);
        if text == "/resume" {
            if self.turn || self.rpc.loading() {
                self.notice =
                    Some("/resume waits until the turn has ended (Esc interrupts it)".into());
                self.editor.set(&text);
                return;
            }
            let cwd = self.opts.cwd.display().to_string();
            self.rpc.request("session/list", json!({"cwd": cwd}), Call::ListPicker);
            return;
        }
        if self.turn || self.session.is_none() || self.rpc.loading() {
            self.queued.push(text);
            if self.turn {
                self.notice = Some("Queued: Tab sends it to the running turn now".into());
            }
            return;
        }
        self.prompt(&text);
    }

    /// Tab: completes a `/` command, or sends the queued messages now (steering).
    fn tab(&mut self) {
        if self.turn && !self.queued.is_empty() {
            self.steer();
            return;
        }
        if let Some(done) = self.complete() {
            self.editor.set(&done);
        }
    }

    /// The completion of a `/` command being typed (the common prefix of the matches).
    pub fn complete(&self) -> Option<String> {
        let typed = self.editor.text.strip_prefix('/')?;
        if typed.contains(char::is_whitespace) {
            return None;
        }
        let matches = self.matches(typed);
        let first = matches.first()?;
        let mut common = first.to_string();
        for m in &matches[1..] {
            while !m.starts_with(common.as_str()) {
                common.pop();
            }
        }
        let space = if matches.len() == 1 { " " } else { "" };
        Some(format!("/{common}{space}"))
    }

    /// The command names starting with `typed` (with `resume`, this client's own).
    pub fn matches(&self, typed: &str) -> Vec<&str> {
        let own = std::iter::once("resume");
        let names = self.commands.iter().map(|(n, _)| n.as_str()).chain(own);
        let mut all: Vec<&str> = names.filter(|n| n.starts_with(typed)).collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// Shift+Tab: the next mode (bypass only when the session started with it allowed).
    fn cycle_mode(&mut self) {
        let allowed: Vec<String> = self
            .modes
            .iter()
            .map(|(id, _)| id.clone())
            .filter(|id| id != "bypass_permissions" || self.opts.allow_bypass)
            .collect();
        if allowed.is_empty() {
            return;
        }
        let at =
            allowed.iter().position(|m| *m == self.mode).map_or(0, |i| (i + 1) % allowed.len());
        let next = allowed[at].clone();
        self.set_mode(&next);
    }

    fn question_key(&mut self, key: KeyEvent) {
        let Some(q) = self.question.as_mut() else { return };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        // Any key but the confirming one takes a destroy's first allow back.
        let confirming = std::mem::take(&mut q.confirming);
        let chosen = match key.code {
            KeyCode::Esc => {
                self.interrupt();
                return;
            }
            KeyCode::Char('c') if ctrl => {
                self.interrupt();
                return;
            }
            KeyCode::Left | KeyCode::Up | KeyCode::BackTab => {
                q.selected = q.selected.checked_sub(1).unwrap_or(q.choices.len().saturating_sub(1));
                return;
            }
            KeyCode::Right | KeyCode::Down | KeyCode::Tab => {
                q.selected = (q.selected + 1) % q.choices.len().max(1);
                return;
            }
            KeyCode::Enter => q.choices.get(q.selected).cloned(),
            KeyCode::Char(c) if !ctrl => q.by_key(c).cloned(),
            _ => None,
        };
        let Some(choice) = chosen else {
            if confirming {
                q.selected = q.refusal();
            }
            return;
        };
        q.confirming = confirming;
        if !q.confirm(&choice) {
            return;
        }
        let id = q.id.clone();
        self.question = None;
        let role = if choice.kind.starts_with("allow") { Role::Ok } else { Role::Removed };
        self.say(role, format!("  → {}", choice.name));
        self.rpc.respond(&id, Question::answer(&choice));
    }

    fn picker_key(&mut self, key: KeyEvent) {
        let Some((sessions, at)) = self.picker.as_mut() else { return };
        match key.code {
            KeyCode::Up => *at = at.saturating_sub(1),
            KeyCode::Down => *at = (*at + 1).min(sessions.len().saturating_sub(1)),
            KeyCode::Enter => {
                let id = sessions[*at].0.clone();
                self.picker = None;
                self.load(&id);
            }
            KeyCode::Esc => self.picker = None,
            _ => {}
        }
    }

    /// Ctrl+R's keys; false for a key that ends the search and acts as itself.
    fn search_key(&mut self, key: KeyEvent) -> bool {
        let Some((query, found)) = self.search.as_mut() else { return false };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('r') if ctrl => *found = self.history.search(query, *found).or(*found),
            KeyCode::Char(c) if !ctrl => {
                query.push(c);
                *found = self.history.search(query, None);
            }
            KeyCode::Backspace => {
                query.pop();
                *found = self.history.search(query, None);
            }
            // Ctrl+C leaves the search with the input as it was, as Esc does.
            KeyCode::Esc | KeyCode::Char('g' | 'c') => self.search = None,
            _ => {
                let entry = found.and_then(|i| self.history.entries.get(i).cloned());
                self.search = None;
                if let Some(entry) = entry {
                    self.editor.set(&entry);
                }
                return key.code == KeyCode::Enter;
            }
        }
        true
    }
}
