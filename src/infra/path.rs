//! Paths as commands name them: what looks like a path, how a word resolves against the
//! directory in effect (`~` from HOME, `.`/`..` folded), and which paths are special (build
//! output, terraform state, raw disks). No I/O but `Path::exists`.

use super::word::{Words, words};
use std::path::{Component, Path, PathBuf};

/// Whether a word looks like a path: it has a `/`, starts with `~` or `.`, or has an
/// extension (`main.tf`, not `1.5`); URLs do not.
pub(super) fn looks_like_path(word: &str) -> bool {
    if word.is_empty() || word.contains("://") {
        return false;
    }
    if word.contains('/') || word.starts_with('~') || word.starts_with('.') {
        return true;
    }
    word.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=10).contains(&ext.len())
            && ext.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !ext.bytes().all(|b| b.is_ascii_digit())
    })
}

/// Whether `word` names an existing file relative to `cwd`.
pub(super) fn exists(cwd: &Path, word: &str) -> bool {
    !word.is_empty() && word.len() < 256 && !word.contains('\0') && cwd.join(word).exists()
}

/// The directory a glob lists: its literal part up to the last `/` before the first
/// wildcard (`modules/*/main.tf` → `modules`, `*.tf` → `.`).
pub(super) fn glob_dir(word: &str) -> &str {
    let first = word.find(['*', '?', '[', '$', '`']).unwrap_or(word.len());
    match word[..first].rfind('/') {
        Some(0) => "/",
        Some(i) => &word[..i],
        None => ".",
    }
}

/// `word` made absolute: `~` and `~/…` from `home`, the rest against `cwd`; `.` and `..`
/// folded. `None` when it is in an unknown home (`~user`, or no HOME).
pub(super) fn resolve(word: &str, cwd: &Path, home: Option<&str>) -> Option<PathBuf> {
    let joined = if word == "~" {
        PathBuf::from(home?)
    } else if let Some(rest) = word.strip_prefix("~/") {
        Path::new(home?).join(rest)
    } else if word.starts_with('~') {
        return None;
    } else {
        cwd.join(word)
    };
    Some(normalise(&joined))
}

/// Folds `.` and `..` without looking at the disk.
pub(super) fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The directory holding `path`.
pub(super) fn parent(path: &Path) -> PathBuf {
    path.parent().map_or_else(|| path.to_path_buf(), Path::to_path_buf)
}

/// Whether a path is in build output: below the project, its first component one of the
/// directories builds recreate.
pub(super) fn build_output(path: &Path, root: &Path) -> bool {
    const BUILD: Words = words!("target build dist node_modules __pycache__ .pytest_cache out");
    let Ok(rel) = path.strip_prefix(root) else { return false };
    rel.components().next().is_some_and(|c| BUILD.iter().any(|b| c.as_os_str() == b))
}

/// Whether a file name is terraform state (`*.tfstate`, `*.tfstate.backup`, the backend's
/// `.terraform/terraform.tfstate`), in any case. The one predicate: the classifier, the
/// file tools (`terraform_owned`) and the sandbox (`sandbox::is_state_file`) all ask it.
/// Allocates nothing: walks ask it of every name.
pub fn holds_state(name: &str) -> bool {
    name.as_bytes().windows(STATE.len()).any(|w| w.eq_ignore_ascii_case(STATE))
}

/// What every state file's name holds.
const STATE: &[u8] = b".tfstate";

/// Whether a word names terraform state by its last component.
pub(super) fn state_file(word: &str) -> bool {
    holds_state(basename(word))
}

/// Whether a path is a raw disk device.
pub(super) fn raw_disk(target: &str) -> bool {
    const DISKS: Words = words!("sd hd vd xvd nvme mmcblk disk rdisk mapper/ md dm- loop nbd");
    target.strip_prefix("/dev/").is_some_and(|d| DISKS.iter().any(|p| d.starts_with(p)))
}

/// The last component of a program path.
pub(super) fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}
