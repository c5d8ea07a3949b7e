//! Per-test scratch directories: a fresh root holding `project/` (the session cwd)
//! and `config/` (the agent's config dir, `IAC_CODE_CONFIG_DIR`).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Distinguishes workspaces created by the same process (tests run in parallel threads).
static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A fresh directory tree under `$TMPDIR/iac-code-tests/`; left on disk for post-mortem debugging.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// Creates `<temp>/iac-code-tests/<name>-<pid>-<n>` with `project/` and `config/` inside.
    pub fn new(name: &str) -> Workspace {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let pid = std::process::id();
        let root = std::env::temp_dir().join("iac-code-tests").join(format!("{name}-{pid}-{n}"));
        if root.exists() {
            fs::remove_dir_all(&root).unwrap_or_else(|e| {
                panic!("cannot remove stale workspace {}: {e}", root.display())
            });
        }
        for sub in ["project", "config"] {
            let dir = root.join(sub);
            fs::create_dir_all(&dir)
                .unwrap_or_else(|e| panic!("cannot create workspace dir {}: {e}", dir.display()));
        }
        Workspace { root }
    }

    /// The workspace root (also used as `HOME` for the agent).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The canonicalized project directory (the session cwd).
    pub fn project(&self) -> PathBuf {
        let project = self.root.join("project");
        project
            .canonicalize()
            .unwrap_or_else(|e| panic!("cannot canonicalize {}: {e}", project.display()))
    }

    /// The agent's config directory.
    pub fn config(&self) -> PathBuf {
        self.root.join("config")
    }

    /// Absolute path of `rel` inside the project directory.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.project().join(rel)
    }

    /// Writes `contents` to `rel` (relative to the project), creating parent directories.
    pub fn write(&self, rel: &str, contents: &str) {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", parent.display()));
        }
        fs::write(&path, contents)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }

    /// Reads `rel` (relative to the project) as UTF-8.
    pub fn read(&self, rel: &str) -> String {
        let path = self.path(rel);
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
    }

    /// Whether `rel` (relative to the project) exists.
    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }
}
