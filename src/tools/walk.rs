//! Gitignore-aware parallel walks for `glob` and `grep`. Hidden files are included
//! (`.github/`, `.gitlab-ci.yml`); `.git/` and sensitive files are skipped (reading them
//! needs a question); symlinks are not followed, so a walk never leaves the tree it was
//! given; a cancel stops it. The walk lists names by path, but every file it reports is
//! opened beneath a descriptor of the judged root without following symlinks, and only
//! regular files count: a directory swapped for a symlink mid-walk yields nothing from
//! where the symlink leads.

use std::collections::HashMap;
use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use ignore::{WalkBuilder, WalkState};

use super::{ToolContext, ToolError, open, paths};
use crate::sys;

/// Directories `stat_file` keeps open at most.
const MAX_OPEN_DIRS: usize = 256;

/// The judged root of a walk, held open.
pub(super) struct Root {
    base: PathBuf,
    fd: OwnedFd,
    /// Directories below the root opened (without symlinks) for `stat_file`.
    dirs: Mutex<HashMap<PathBuf, Arc<OwnedFd>>>,
    /// Whether the root itself was sensitive (then the user was asked, and nothing below
    /// it is skipped for its name).
    sensitive: bool,
}

/// How a walk ended.
pub(super) struct Walked {
    /// `false`: cancelled.
    pub complete: bool,
    /// Sensitive files not searched (`.env`, `*.tfstate`, keys …) that `counts` accepted.
    pub sensitive_skipped: usize,
}

impl Root {
    /// Opens the judged `base` (a directory, or one file).
    pub fn open(ctx: &ToolContext, base: &Path) -> Result<Root, ToolError> {
        let target = open::target(ctx, base)?;
        let fd = open::open(ctx, &target, open::PATH, 0)
            .map_err(|err| ToolError::Model(format!("cannot search {}: {err}", base.display())))?;
        Ok(Root {
            base: base.to_path_buf(),
            fd,
            dirs: Mutex::default(),
            sensitive: target.sensitive.is_some(),
        })
    }

    /// A root opened as it is, for unit tests that have no session.
    #[cfg(test)]
    pub fn at(base: &Path) -> std::io::Result<Root> {
        let fd = OwnedFd::from(File::open(base)?);
        Ok(Root { base: base.to_path_buf(), fd, dirs: Mutex::default(), sensitive: false })
    }

    /// Opens a file the walk found (`path` starts with the root's path) for reading,
    /// beneath the root, never through a symlink.
    pub fn open_file(&self, path: &Path) -> std::io::Result<File> {
        let rel = path.strip_prefix(&self.base).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "not below the walk's root")
        })?;
        open::read_below(self.fd.as_fd(), rel)
    }

    /// What a file the walk found is, beneath the root and without following symlinks:
    /// its directory is opened once (cached), the file itself `fstatat`'ed in it. For
    /// listings that need no content (glob).
    pub fn stat_file(&self, path: &Path) -> std::io::Result<sys::Entry> {
        let invalid =
            || std::io::Error::new(std::io::ErrorKind::InvalidInput, "not below the root");
        let rel = path.strip_prefix(&self.base).map_err(|_| invalid())?;
        let name = rel.file_name().ok_or_else(invalid)?.as_bytes();
        let parent = rel.parent().unwrap_or(Path::new(""));
        match self.dir(parent)? {
            Some(dir) => sys::stat_at(dir.as_fd(), name),
            None => sys::stat_at(self.fd.as_fd(), name),
        }
    }

    /// The directory `rel` below the root (`None`: the root itself), opened one component
    /// at a time from its cached parent with `O_NOFOLLOW`, and cached.
    fn dir(&self, rel: &Path) -> std::io::Result<Option<Arc<OwnedFd>>> {
        if rel.as_os_str().is_empty() {
            return Ok(None);
        }
        if let Some(dir) = crate::sync::lock(&self.dirs).get(rel) {
            return Ok(Some(Arc::clone(dir)));
        }
        let parent = self.dir(rel.parent().unwrap_or(Path::new("")))?;
        let at = parent.as_deref().map_or(self.fd.as_fd(), |fd| fd.as_fd());
        let name = rel.file_name().map(|n| n.as_bytes()).unwrap_or(b".");
        let dir = Arc::new(sys::open_at(at, name, libc::O_PATH | libc::O_DIRECTORY, 0)?);
        let mut dirs = crate::sync::lock(&self.dirs);
        // Bounded: a huge tree must not hold a descriptor per directory.
        if dirs.len() >= MAX_OPEN_DIRS {
            dirs.clear();
        }
        dirs.insert(rel.to_path_buf(), Arc::clone(&dir));
        Ok(Some(dir))
    }

    /// Calls `visit` for every regular file under the root (or the root itself when it is a
    /// file), from several threads. Sensitive files left out are counted when `counts`
    /// accepts their path (the ones the search would otherwise have looked at).
    pub fn files(
        &self,
        ctx: &ToolContext,
        visit: &(dyn Fn(&Path) + Sync),
        counts: Box<dyn Fn(&Path) -> bool + Send + Sync>,
    ) -> Walked {
        let cancel = ctx.cancel;
        let config_dir = ctx.config_dir.to_path_buf();
        let root_sensitive = self.sensitive;
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(8);
        let stopped = AtomicBool::new(false);
        let skipped = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&skipped);
        // The ignore crate opens ignore files with a blocking open: one that is not a plain
        // file above the root (a FIFO planted in /tmp) would hang the walk, so the parents'
        // ignore files are then left out.
        let parents = plain_ignore_files_above(&self.base);
        if !parents {
            log::warn!(
                "an ignore file above {} is not a plain file; not read",
                self.base.display()
            );
        }
        WalkBuilder::new(&self.base)
            .hidden(false)
            .parents(parents)
            .git_ignore(true)
            .git_exclude(true)
            .git_global(false)
            .require_git(false)
            .follow_links(false)
            .threads(threads)
            .filter_entry(move |entry| {
                let walk = entry.depth() == 0
                    || root_sensitive
                    || !paths::skip_in_walk(entry.path(), &config_dir);
                if !walk && !entry.file_type().is_some_and(|t| t.is_dir()) && counts(entry.path()) {
                    counter.fetch_add(1, Ordering::Relaxed);
                }
                walk
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
                        visit(entry.path());
                    }
                    WalkState::Continue
                })
            });
        Walked {
            complete: !stopped.load(Ordering::Relaxed),
            sensitive_skipped: skipped.load(Ordering::Relaxed),
        }
    }
}

/// Whether every ignore file the walk would read above (and at) `base` is a plain file.
fn plain_ignore_files_above(base: &Path) -> bool {
    base.ancestors().all(|dir| {
        [".gitignore", ".ignore", ".git/info/exclude"].iter().all(|name| {
            std::fs::symlink_metadata(dir.join(name)).map_or(true, |m| m.file_type().is_file())
        })
    })
}

/// `path` relative to `cwd` when inside it, else absolute; for listing results.
pub(super) fn shown(path: &Path, cwd: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}
