//! The input: a multi-line buffer with a cursor, and the history of what was sent, kept
//! per project in a file under the config directory (0600, one JSON string per line) and
//! searched backwards with Ctrl+R.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Entries a history file keeps.
const KEEP: usize = 1000;

/// The text being typed.
#[derive(Debug, Default)]
pub struct Editor {
    pub text: String,
    /// A byte offset on a character boundary.
    pub cursor: usize,
}

impl Editor {
    pub fn insert(&mut self, s: &str) {
        let s = s.replace("\r\n", "\n").replace('\r', "\n");
        self.text.insert_str(self.cursor, &s);
        self.cursor += s.len();
    }

    pub fn backspace(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
            self.text.remove(self.cursor);
        }
    }

    pub fn delete(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
        }
    }

    pub fn left(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
        }
    }

    pub fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    /// To the start of the cursor's line.
    pub fn home(&mut self) {
        self.cursor = self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1);
    }

    /// To the end of the cursor's line.
    pub fn end(&mut self) {
        self.cursor += self.text[self.cursor..].find('\n').unwrap_or(self.text.len() - self.cursor);
    }

    /// Deletes from the line's start to the cursor.
    pub fn kill_to_start(&mut self) {
        let start = self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1);
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Deletes the word before the cursor.
    pub fn kill_word(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        let start = trimmed.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    pub fn set(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
    }

    /// Takes the text, leaving the editor empty.
    pub fn take(&mut self) -> String {
        self.cursor = 0;
        std::mem::take(&mut self.text)
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Whether the cursor is on the first (or last) line, where ↑ (↓) walks the history.
    pub fn on_first_line(&self) -> bool {
        !self.text[..self.cursor].contains('\n')
    }

    pub fn on_last_line(&self) -> bool {
        !self.text[self.cursor..].contains('\n')
    }

    /// The cursor's line and column (in characters).
    pub fn position(&self) -> (usize, usize) {
        let before = &self.text[..self.cursor];
        let line = before.matches('\n').count();
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count());
        (line, col)
    }
}

/// What was sent in this project, oldest first.
#[derive(Debug)]
pub struct History {
    file: Option<PathBuf>,
    pub entries: Vec<String>,
    /// While walking with ↑/↓: the entry shown, and what was typed before the walk.
    walk: Option<(usize, String)>,
}

impl History {
    /// The history kept in `file` (none when `None` or unreadable).
    pub fn open(file: Option<PathBuf>) -> History {
        let entries = file
            .as_deref()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .map(|text| {
                text.lines().filter_map(|l| serde_json::from_str::<String>(l).ok()).collect()
            })
            .unwrap_or_default();
        History { file, entries, walk: None }
    }

    /// The file of the project `cwd` under `config_dir`.
    pub fn file_for(config_dir: &Path, cwd: &Path) -> PathBuf {
        // FNV-1a of the directory: a short stable name, the path itself in no file name.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for b in cwd.as_os_str().as_encoded_bytes() {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        config_dir.join("history").join(format!("{hash:016x}.jsonl"))
    }

    /// Records `entry` (not twice in a row) and appends it to the file.
    pub fn add(&mut self, entry: &str) {
        self.walk = None;
        if entry.trim().is_empty() || self.entries.last().is_some_and(|l| l == entry) {
            return;
        }
        self.entries.push(entry.to_string());
        if let Some(file) = &self.file
            && let Err(err) = append(file, entry, &self.entries)
        {
            log::warn!("cannot write the history {}: {err}", file.display());
        }
    }

    /// ↑: the previous entry, given what the editor holds now.
    pub fn older(&mut self, current: &str) -> Option<&str> {
        let next = match &self.walk {
            None => self.entries.len().checked_sub(1)?,
            Some((0, _)) => return None,
            Some((i, _)) => i - 1,
        };
        let typed = self.walk.take().map_or_else(|| current.to_string(), |(_, t)| t);
        self.walk = Some((next, typed));
        self.entries.get(next).map(String::as_str)
    }

    /// ↓: the next entry, or what was typed before the walk.
    pub fn newer(&mut self) -> Option<String> {
        let (i, typed) = self.walk.take()?;
        if i + 1 < self.entries.len() {
            let entry = self.entries[i + 1].clone();
            self.walk = Some((i + 1, typed));
            Some(entry)
        } else {
            Some(typed)
        }
    }

    /// The newest entry before `before` (an index; all when `None`) containing `query`.
    pub fn search(&self, query: &str, before: Option<usize>) -> Option<usize> {
        let end = before.unwrap_or(self.entries.len()).min(self.entries.len());
        self.entries[..end].iter().rposition(|e| e.contains(query))
    }
}

fn append(file: &Path, entry: &str, all: &[String]) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let open = |truncate: bool| {
        crate::sys::own_file::options()
            .create(true)
            .append(!truncate)
            .write(true)
            .truncate(truncate)
            .mode(0o600)
            .open(file)
    };
    if all.len() > KEEP * 2 {
        // Rewritten now and then with the newest `KEEP`.
        let mut f = open(true)?;
        for e in &all[all.len() - KEEP..] {
            writeln!(f, "{}", serde_json::Value::from(e.as_str()))?;
        }
        return Ok(());
    }
    let mut f = open(false)?;
    writeln!(f, "{}", serde_json::Value::from(entry))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editing_moves_the_cursor_over_characters() {
        let mut e = Editor::default();
        e.insert("héllo\r\nwörld");
        assert_eq!(e.text, "héllo\nwörld");
        assert_eq!(e.position(), (1, 5));
        e.home();
        e.backspace();
        assert_eq!(e.text, "héllowörld");
        e.left();
        e.kill_to_start();
        assert_eq!(e.text, "owörld");
        e.end();
        e.kill_word();
        assert!(e.is_empty());
    }

    #[test]
    fn history_walks_searches_and_survives_a_restart() {
        let dir = std::env::temp_dir().join(format!("iac-code-history-{}", std::process::id()));
        let file = History::file_for(&dir, Path::new("/some/project"));
        let _ = std::fs::remove_file(&file);
        let mut h = History::open(Some(file.clone()));
        h.add("terraform plan");
        h.add("line one\nline two");
        h.add("line one\nline two");
        assert_eq!(h.older("draft"), Some("line one\nline two"));
        assert_eq!(h.older(""), Some("terraform plan"));
        assert_eq!(h.older(""), None);
        assert_eq!(h.newer().as_deref(), Some("line one\nline two"));
        assert_eq!(h.newer().as_deref(), Some("draft"));
        let again = History::open(Some(file.clone()));
        assert_eq!(again.entries, ["terraform plan", "line one\nline two"]);
        assert_eq!(again.search("plan", None), Some(0));
        assert_eq!(again.search("plan", Some(0)), None);
        let mode = std::fs::metadata(&file).unwrap().permissions();
        assert_eq!(std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777, 0o600);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
