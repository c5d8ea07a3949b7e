//! A project's own files that widen what runs (`.mcp.json`, `.iac-code/settings.json`'s
//! allow rules) count only once the user approved them. An approval keeps the approved
//! content itself, byte for byte, in a file of the config dir (mode 0600, replaced
//! atomically), keyed by the project file's real path: any change to the file, however
//! small, needs approving again, and no crafted content can pass for approved (as a short
//! hash could). A project file is opened once, without following a link or blocking on a
//! FIFO, must be a regular file, and is read to at most 1 MiB.
//!
//! An approval of something that starts programs (`.mcp.json`) also keeps what it runs:
//! the SHA-256 of each program file and of each project file its arguments name
//! (`Runs`). When one of them changes, the approval no longer holds (`Standing::Changed`),
//! and the file tools' judge names those files (`MCP.runner_of`) so that a write to one
//! asks like a write to `.envrc`; a directory kept whole (`<dir>/`, the directories of a
//! project hook's scripts) names everything under it.

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

pub use super::fingerprint::{Fingerprint, digest, fingerprint, large};
use super::fingerprint::{Stamp, stamp};
use crate::sync::lock;

/// The largest project file read.
pub const MAX_SIZE: u64 = 1 << 20;

/// The text of the project file at `path`: `Ok(None)` when there is none, `Err` (why, for
/// the user) when it is a symbolic link, not a regular file, over 1 MiB, not UTF-8 or
/// unreadable.
pub fn read_project_file(path: &Path) -> Result<Option<String>, String> {
    let shown = path.display();
    let file = match crate::sys::own_file::options().read(true).open(path) {
        Ok(file) => file,
        Err(err) if matches!(err.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
            return Ok(None);
        }
        Err(err) if crate::sys::own_file::is_link(&err) => {
            return Err(format!(
                "{shown} is a symbolic link: a project's own file is never \
                                read through a link"
            ));
        }
        Err(err) => return Err(format!("{shown}: {err}")),
    };
    let meta = file.metadata().map_err(|err| format!("{shown}: {err}"))?;
    if !meta.is_file() || meta.len() > MAX_SIZE {
        return Err(format!("{shown} is not a regular file of at most 1 MiB"));
    }
    let mut text = String::new();
    file.take(MAX_SIZE)
        .read_to_string(&mut text)
        .map_err(|err| format!("{shown}: cannot read it as UTF-8 text: {err}"))?;
    Ok(Some(text))
}

/// The approvals of projects' `.mcp.json` files.
pub const MCP: Approvals = Approvals::new("mcp-approvals.json");

/// What the approved hooks of projects' `.iac-code/settings.json` run (`config/hook_runs.rs`).
pub const HOOKS: Approvals = Approvals::new("hook-approvals.json");

/// What an approved file runs: each file's path (real, or as named when there is none)
/// and its fingerprint (`fingerprint`).
pub type Runs = BTreeMap<String, Fingerprint>;

/// How the approval of a file that runs programs stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// This content, with the files it runs as they were.
    Approved,
    /// Never approved, or approved with other content (or before what it runs was kept).
    Unapproved,
    /// This content was approved, but these files it runs changed since.
    Changed(Vec<String>),
}

/// One kind of approval, kept in `<config dir>/<file>`.
#[derive(Debug, Clone, Copy)]
pub struct Approvals {
    file: &'static str,
}

impl Approvals {
    /// Approvals kept in `file` (`mcp-approvals.json`, `project-approvals.json`).
    pub const fn new(file: &'static str) -> Approvals {
        Approvals { file }
    }

    /// Where they are kept.
    pub fn path(&self, config_dir: &Path) -> std::path::PathBuf {
        config_dir.join(self.file)
    }

    /// Whether exactly `text` was approved for the file at `real_path`.
    pub fn approved(&self, config_dir: &Path, real_path: &Path, text: &str) -> bool {
        let all = self.read(config_dir);
        all.get(&*real_path.to_string_lossy()).is_some_and(|a| text_of(a) == Some(text))
    }

    /// Remembers `text` as approved for the file at `real_path`.
    pub fn approve(&self, config_dir: &Path, real_path: &Path, text: &str) -> std::io::Result<()> {
        let mut all = self.read(config_dir);
        all.insert(real_path.to_string_lossy().into_owned(), Value::String(text.to_string()));
        self.write(config_dir, &all)
    }

    /// How the approval of `text`, running `runs` now, stands for the file at `real_path`.
    pub fn standing(
        &self,
        config_dir: &Path,
        real_path: &Path,
        text: &str,
        runs: &Runs,
    ) -> Standing {
        let all = self.read(config_dir);
        let Some(entry) = all.get(&*real_path.to_string_lossy()) else {
            return Standing::Unapproved;
        };
        let Some(kept) = entry.get("runs").and_then(Value::as_object) else {
            return Standing::Unapproved;
        };
        if text_of(entry) != Some(text) {
            return Standing::Unapproved;
        }
        let mut changed: Vec<String> = runs
            .iter()
            .filter(|(path, now)| {
                kept.get(*path).and_then(Value::as_str).and_then(Fingerprint::parse).as_ref()
                    != Some(*now)
            })
            .map(|(path, _)| path.clone())
            .collect();
        changed.extend(kept.keys().filter(|path| !runs.contains_key(*path)).cloned());
        if changed.is_empty() { Standing::Approved } else { Standing::Changed(changed) }
    }

    /// Remembers `text` as approved for the file at `real_path`, running `runs`.
    pub fn approve_running(
        &self,
        config_dir: &Path,
        real_path: &Path,
        text: &str,
        runs: &Runs,
    ) -> std::io::Result<()> {
        let mut all = self.read(config_dir);
        let entry = json!({ "text": text, "runs": runs });
        all.insert(real_path.to_string_lossy().into_owned(), entry);
        self.write(config_dir, &all)
    }

    /// The approved file that runs `path` (a real path, or one that does not exist), if
    /// one does: a write to it changes what that file's approval started.
    pub fn runner_of(&self, config_dir: &Path, path: &Path) -> Option<PathBuf> {
        if config_dir.as_os_str().is_empty() {
            return None;
        }
        let file = self.path(config_dir);
        let meta = std::fs::metadata(&file).ok()?;
        let stamp = stamp(&meta);
        static RUN: Mutex<Option<(PathBuf, Stamp, RunnerOf)>> = Mutex::new(None);
        let cached = match &*lock(&RUN) {
            Some((at, seen, map)) if *at == file && *seen == stamp => Some(Arc::clone(map)),
            _ => None,
        };
        let map = cached.unwrap_or_else(|| {
            let mut map = HashMap::new();
            for (approved, entry) in self.read(config_dir) {
                for run in entry.get("runs").and_then(Value::as_object).into_iter().flatten() {
                    map.insert(run.0.clone(), approved.clone());
                }
            }
            let map = Arc::new(map);
            *lock(&RUN) = Some((file, stamp, Arc::clone(&map)));
            map
        });
        if let Some(file) = map.get(&*path.to_string_lossy()) {
            return Some(PathBuf::from(file));
        }
        // Anything under a directory it runs whole (`<dir>/`: the hooks' scripts'), a new
        // file included.
        path.ancestors()
            .skip(1)
            .find_map(|dir| map.get(&format!("{}/", dir.display())))
            .map(PathBuf::from)
    }

    fn read(&self, config_dir: &Path) -> BTreeMap<String, Value> {
        std::fs::read_to_string(self.path(config_dir))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    fn write(&self, config_dir: &Path, all: &BTreeMap<String, Value>) -> std::io::Result<()> {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(config_dir)?;
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = config_dir.join(format!(".{}.{}.{n}", self.file, std::process::id()));
        let text = serde_json::to_string_pretty(all).map_err(std::io::Error::other)?;
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .and_then(|mut file| {
                file.write_all(text.as_bytes())?;
                file.sync_all()
            })
            .and_then(|()| std::fs::rename(&tmp, self.path(config_dir)));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

/// Each file that an approved file runs, and that approved file.
type RunnerOf = Arc<HashMap<String, String>>;

/// The approved text of an entry: the text itself (as first kept), or its `text`.
fn text_of(entry: &Value) -> Option<&str> {
    entry.as_str().or_else(|| entry.get("text").and_then(Value::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_is_for_this_content_and_path_only() {
        let dir = std::env::temp_dir().join(format!("iac-approval-{}", std::process::id()));
        let config = dir.join("config");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("f.json");
        std::fs::write(&file, "{}").unwrap();
        let store = Approvals::new("test-approvals.json");
        let text = read_project_file(&file).unwrap().unwrap();
        assert!(!store.approved(&config, &file, &text));
        store.approve(&config, &file, &text).unwrap();
        assert!(store.approved(&config, &file, "{}"));
        assert!(!store.approved(&config, &file, "{} "), "a changed file asks again");
        assert!(!store.approved(&config, &dir.join("g.json"), "{}"), "another file too");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(store.path(&config)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(read_project_file(&dir.join("none.json")), Ok(None));
        assert_eq!(read_project_file(&file.join("below")), Ok(None), "under a file");
        std::os::unix::fs::symlink(&file, dir.join("link.json")).unwrap();
        let err = read_project_file(&dir.join("link.json")).unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
        let err = read_project_file(&dir).unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_approval_keeps_what_it_runs() {
        let dir = std::env::temp_dir().join(format!("iac-approval-runs-{}", std::process::id()));
        let config = dir.join("config");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(".mcp.json");
        let script = dir.join("server.py");
        std::fs::write(&script, "print(1)").unwrap();
        let store = Approvals::new("test-runs.json");
        let runs = |p: &Path| Runs::from([(p.display().to_string(), fingerprint(p))]);
        let before = runs(&script);
        assert!(
            before.values().all(|v| matches!(v, Fingerprint::Sha256(hex) if hex.len() == 64)),
            "{before:?}"
        );
        assert_eq!(store.standing(&config, &file, "{}", &before), Standing::Unapproved);
        store.approve_running(&config, &file, "{}", &before).unwrap();
        assert_eq!(store.standing(&config, &file, "{}", &before), Standing::Approved);
        assert!(store.approved(&config, &file, "{}"), "the text alone is approved too");
        assert_eq!(store.runner_of(&config, &script), Some(file.clone()));
        assert_eq!(store.runner_of(&config, &dir.join("other.py")), None);
        std::fs::write(&script, "print(2)").unwrap();
        let shown = script.display().to_string();
        assert_eq!(
            store.standing(&config, &file, "{}", &runs(&script)),
            Standing::Changed(vec![shown])
        );
        assert_eq!(store.standing(&config, &file, "{} ", &before), Standing::Unapproved);
        // An approval kept before what it runs was recorded does not hold for a program.
        store.approve(&config, &file, "{}").unwrap();
        assert_eq!(store.standing(&config, &file, "{}", &before), Standing::Unapproved);
        assert_eq!(store.runner_of(&config, &script), None);
        assert_eq!(fingerprint(&dir.join("none")), Fingerprint::Absent);
        assert_eq!(fingerprint(&dir), Fingerprint::NotRegular);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
