//! A path as the permission gate judged it: where it really points, whether that is inside
//! the session cwd, why it is sensitive, and which file it was. The file tools open exactly
//! this (`open.rs`).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::paths;
use crate::config::approval;

/// A path as the permission gate judged it, before the call runs.
#[derive(Debug, Clone)]
pub struct Target {
    /// As the call named it, resolved lexically against the cwd.
    pub path: PathBuf,
    /// Where it really points (symlinks resolved); `None`: it could not be resolved.
    pub real: Option<PathBuf>,
    /// Whether `real` lies in the session cwd.
    pub inside: bool,
    /// Why it is sensitive, if it is.
    pub sensitive: Option<String>,
    /// Device and inode of `real` when it existed.
    pub id: Option<(u64, u64)>,
    /// Why writing it changes what starts (an approved project's MCP server runs it), if
    /// it does: a write asks like a write to a sensitive file (`writing`).
    pub runs: Option<String>,
}

impl Target {
    /// Whether reaching it takes a question of its own (outside the cwd, unresolvable, or
    /// sensitive).
    pub fn asked(&self) -> bool {
        !self.inside || self.sensitive.is_some()
    }

    /// The target of a write: one that an approved program runs is sensitive.
    pub fn writing(mut self) -> Target {
        if self.sensitive.is_none() {
            self.sensitive = self.runs.clone();
        }
        self
    }

    /// Why reaching it takes a question, for the question's title.
    pub fn reasons(&self) -> Vec<String> {
        let mut reasons = Vec::new();
        if self.real.is_none() {
            reasons
                .push("it cannot be resolved: a dangling or looping symlink, or no access".into());
        } else if !self.inside {
            reasons.push("outside the project".to_string());
        }
        reasons.extend(self.sensitive.clone());
        reasons
    }
}

/// Judges `path` (already resolved against `cwd`) on its name and on where it really
/// points. A path that cannot be resolved counts as outside.
pub fn judge(path: &Path, cwd: &Path, config_dir: &Path) -> Target {
    judge_within(path, cwd, &[], config_dir)
}

/// Judges `path` as `judge` does, a path in one of `extra` (the session's additional
/// directories, canonical) counting as inside like one in the cwd.
pub fn judge_within(path: &Path, cwd: &Path, extra: &[PathBuf], config_dir: &Path) -> Target {
    let real = paths::real(path);
    let inside = real
        .as_deref()
        .is_some_and(|r| paths::is_inside(r, cwd) || extra.iter().any(|e| paths::is_inside(r, e)));
    let sensitive = paths::sensitive(path, cwd, config_dir)
        .or_else(|| real.as_deref().and_then(|r| paths::sensitive(r, cwd, config_dir)))
        .or_else(|| real.as_deref().and_then(paths::sensitive_content));
    let id =
        real.as_deref().and_then(|r| std::fs::symlink_metadata(r).ok()).map(|m| (m.dev(), m.ino()));
    let runs = [Some(path), real.as_deref()].into_iter().flatten().find_map(|p| {
        let mcp = approval::MCP.runner_of(config_dir, p).map(|file| {
            format!(
                "the MCP servers of {} run it: once it changes, they start only when \
                     approved again",
                file.display()
            )
        });
        mcp.or_else(|| {
            approval::HOOKS.runner_of(config_dir, p).map(|file| {
                format!(
                    "the hooks of {} run it: once it changes, they run only when approved \
                         again (iac-code config approve)",
                    file.display()
                )
            })
        })
    });
    Target { path: path.to_path_buf(), real, inside, sensitive, id, runs }
}
