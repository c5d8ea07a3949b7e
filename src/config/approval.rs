//! A project's own files that widen what runs (`.mcp.json`, `.iac-code/settings.json`'s
//! allow rules) count only once the user approved them. An approval keeps the approved
//! content itself, byte for byte, in a file of the config dir (mode 0600, replaced
//! atomically), keyed by the project file's real path: any change to the file, however
//! small, needs approving again, and no crafted content can pass for approved (as a short
//! hash could). A project file is opened once, without following a link or blocking on a
//! FIFO, must be a regular file, and is read to at most 1 MiB.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

/// The largest project file read.
pub const MAX_SIZE: u64 = 1 << 20;

/// The text of the project file at `path`: `Ok(None)` when there is none, `Err` (why, for
/// the user) when it is a symbolic link, not a regular file, over 1 MiB, not UTF-8 or
/// unreadable.
pub fn read_project_file(path: &Path) -> Result<Option<String>, String> {
    let shown = path.display();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path);
    let file = match file {
        Ok(file) => file,
        Err(err) if matches!(err.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
            return Ok(None);
        }
        Err(err) if err.raw_os_error() == Some(libc::ELOOP) => {
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
        self.read(config_dir).get(&*real_path.to_string_lossy()).is_some_and(|a| a == text)
    }

    /// Remembers `text` as approved for the file at `real_path`.
    pub fn approve(&self, config_dir: &Path, real_path: &Path, text: &str) -> std::io::Result<()> {
        let mut all = self.read(config_dir);
        all.insert(real_path.to_string_lossy().into_owned(), text.to_string());
        self.write(config_dir, &all)
    }

    fn read(&self, config_dir: &Path) -> BTreeMap<String, String> {
        std::fs::read_to_string(self.path(config_dir))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    fn write(&self, config_dir: &Path, all: &BTreeMap<String, String>) -> std::io::Result<()> {
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
}
