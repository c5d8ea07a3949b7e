//! Gitignore-aware parallel walks for `glob` and `grep`. Hidden files are included
//! (`.github/`, `.gitlab-ci.yml`); `.git/` and sensitive files are skipped (reading them
//! needs a question); symlinks are not followed, so a walk never leaves the tree it was
//! given; a cancel stops it.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use ignore::{DirEntry, WalkBuilder, WalkState};

use super::{ToolContext, paths};

/// Calls `visit` for every file under `root` (or `root` itself when it is a file), from
/// several threads. Sensitive entries are skipped unless `root` itself is sensitive (then
/// the user was asked). Returns `false` if the walk was cancelled.
pub(super) fn files(root: &Path, ctx: &ToolContext, visit: &(dyn Fn(&DirEntry) + Sync)) -> bool {
    let cancel = ctx.cancel;
    let config_dir = ctx.config_dir.to_path_buf();
    let root_sensitive = paths::sensitive(&paths::real(root), ctx.cwd, &config_dir).is_some();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(8);
    let stopped = AtomicBool::new(false);
    WalkBuilder::new(root)
        .hidden(false)
        .parents(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .threads(threads)
        .filter_entry(move |entry| {
            entry.depth() == 0 || root_sensitive || !paths::skip_in_walk(entry.path(), &config_dir)
        })
        .build_parallel()
        .run(|| {
            Box::new(|result| {
                if cancel.is_cancelled() {
                    stopped.store(true, Ordering::Relaxed);
                    return WalkState::Quit;
                }
                if let Ok(entry) = result
                    && entry.file_type().is_some_and(|t| t.is_file())
                {
                    visit(&entry);
                }
                WalkState::Continue
            })
        });
    !stopped.load(Ordering::Relaxed)
}

/// `path` relative to `cwd` when inside it, else absolute; for listing results.
pub(super) fn shown(path: &Path, cwd: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}
