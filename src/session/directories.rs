//! A session's additional directories (ACP `additionalDirectories`): workspace roots beside
//! the cwd, in which the tools' paths are judged as inside the cwd (read without asking,
//! written as the mode writes inside the cwd). Each is checked like the cwd (absolute, an
//! existing directory), journalled as a whole list (`Record::Directories`), kept in the
//! metadata for `session/list`, and restored when the session is opened again. `AGENTS.md`
//! is read from the cwd only, never from them.

use std::path::{Path, PathBuf};

use super::Session;
use super::record::Record;
use crate::error::{Error, Result};
use crate::sync::lock;

/// Directories one session may add, at most.
pub const MAX_DIRECTORIES: usize = 64;

/// A session's additional directories: as the client gave them, and resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Directories {
    /// As given (what is journalled and listed).
    pub given: Vec<String>,
    /// Canonical (symlinks resolved): the roots the tools judge paths against.
    pub roots: Vec<PathBuf>,
}

impl Directories {
    /// The directories a request names, each absolute and an existing directory (the
    /// filesystem root is refused: it would make every path the project's); else a clear
    /// `InvalidParams` naming the entry.
    pub fn check(dirs: &[String]) -> Result<Directories> {
        if dirs.len() > MAX_DIRECTORIES {
            return Err(Error::InvalidParams(format!(
                "additionalDirectories has {} entries; at most {MAX_DIRECTORIES}",
                dirs.len()
            )));
        }
        let mut out = Directories::default();
        for dir in dirs {
            let root = resolve(dir)?;
            if !out.roots.contains(&root) {
                out.given.push(dir.clone());
                out.roots.push(root);
            }
        }
        Ok(out)
    }

    /// Journalled directories opened again: one that no longer resolves is left out, with a
    /// warning.
    pub fn restored(dirs: &[String]) -> Directories {
        let mut out = Directories::default();
        for dir in dirs {
            match resolve(dir) {
                Ok(root) => {
                    out.given.push(dir.clone());
                    out.roots.push(root);
                }
                Err(err) => log::warn!("additional directory left out: {err}"),
            }
        }
        out
    }
}

/// `dir`, canonical, if it is an absolute path to an existing directory other than `/`.
fn resolve(dir: &str) -> Result<PathBuf> {
    let bad = |why: String| Error::InvalidParams(format!("additionalDirectories: {why}"));
    let path = Path::new(dir);
    if !path.is_absolute() {
        return Err(bad(format!("'{dir}' is not an absolute path")));
    }
    let meta =
        std::fs::metadata(path).map_err(|err| bad(format!("'{dir}' does not exist: {err}")))?;
    if !meta.is_dir() {
        return Err(bad(format!("'{dir}' is not a directory")));
    }
    let root =
        path.canonicalize().map_err(|err| bad(format!("'{dir}' cannot be resolved: {err}")))?;
    if root == Path::new("/") {
        return Err(bad(format!("'{dir}' is the filesystem root")));
    }
    Ok(root)
}

impl Session {
    /// The additional directories in force.
    pub fn directories(&self) -> Directories {
        lock(&self.extra).clone()
    }

    /// Replaces the additional directories; a change is journalled and kept in the metadata.
    pub fn set_directories(&self, dirs: Directories) {
        let given = dirs.given.clone();
        {
            let mut extra = lock(&self.extra);
            if *extra == dirs {
                return;
            }
            *extra = dirs;
        }
        log::info!(
            "session {}: additional directories {given:?}; the system prompt is built again",
            self.id
        );
        lock(&self.prefix).thaw();
        self.record(&Record::Directories { dirs: given.clone() });
        self.touch(|meta| meta.additional_directories = given);
    }

    /// The system prompt's section naming the additional directories (empty without any).
    pub(super) fn directories_section(&self) -> String {
        let roots = self.directories().roots;
        if roots.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "\n# Additional directories\nBesides the working directory, these directories are \
             part of the workspace (use absolute paths for them):\n",
        );
        for root in roots {
            out.push_str(&format!("- {}\n", root.display()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_absolute_existing_directories_other_than_the_root() {
        let err = |dirs: &[&str]| {
            let dirs: Vec<String> = dirs.iter().map(|d| d.to_string()).collect();
            Directories::check(&dirs).unwrap_err().to_string()
        };
        assert!(err(&["relative"]).contains("not an absolute path"));
        assert!(err(&["/definitely/not/here"]).contains("does not exist"));
        assert!(err(&["/"]).contains("filesystem root"));
        let file = std::env::temp_dir().join(format!("iac-extra-file-{}", std::process::id()));
        std::fs::write(&file, "x").unwrap();
        assert!(err(&[file.to_str().unwrap()]).contains("not a directory"));
        std::fs::remove_file(&file).unwrap();
        let tmp = std::env::temp_dir().to_string_lossy().into_owned();
        let ok = Directories::check(&[tmp.clone(), tmp.clone()]).unwrap();
        assert_eq!(ok.given, [tmp], "a repeated entry counts once");
        let restored = Directories::restored(&["/definitely/not/here".into()]);
        assert!(restored.given.is_empty());
    }
}
