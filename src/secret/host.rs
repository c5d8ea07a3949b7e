//! The host's own credentials, learned by exact value into a session's vault: credential
//! variables of this process's environment (the caller says which names are credentials),
//! the files of the credential stores (scanned: what they hold is learned), and terraform
//! state files in the session's directory (read again when they change), so a value
//! printed bare (`terraform output -raw`, `echo $TOKEN`) is still known.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::Vault;

/// Biggest credential or state file read.
const MAX_FILE: u64 = 16 << 20;

/// Files read at most below one credential store directory.
const MAX_STORE_FILES: usize = 64;

/// Learns the values of the environment variables whose names `credential` accepts (paths
/// and short values are not secrets).
pub fn from_env(vault: &Vault, credential: &dyn Fn(&str) -> bool) {
    for (name, value) in std::env::vars_os() {
        let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else { continue };
        if credential(name) && !value.starts_with(['/', '~', '.']) {
            vault.learn("credential", value);
        }
    }
}

/// Learns what the credential store files (or directories, one level deep) hold.
pub fn from_stores(vault: &Vault, stores: &[PathBuf]) {
    for store in stores {
        let Ok(meta) = std::fs::metadata(store) else { continue };
        if meta.is_file() {
            learn_file(vault, store);
        } else if meta.is_dir()
            && let Ok(entries) = std::fs::read_dir(store)
        {
            for entry in entries.flatten().take(MAX_STORE_FILES) {
                if entry.file_type().is_ok_and(|t| t.is_file()) {
                    learn_file(vault, &entry.path());
                }
            }
        }
    }
}

/// Scans one file for secrets (they are learned; the redacted text is dropped).
fn learn_file(vault: &Vault, path: &Path) {
    if std::fs::metadata(path).is_ok_and(|m| m.len() <= MAX_FILE)
        && let Ok(text) = std::fs::read_to_string(path)
    {
        let _ = vault.redact(&text);
    }
}

/// Terraform state files under a directory and when each was last read.
#[derive(Default)]
pub struct StateWatch {
    seen: HashMap<PathBuf, SystemTime>,
}

/// Subdirectories of the session directory looked in for state, at most.
const MAX_DIRS: usize = 64;

impl StateWatch {
    /// Reads the state files of `cwd` and its subdirectories (one level, and
    /// `terraform.tfstate.d/*`) that changed since last time, learning their sensitive values.
    pub fn refresh(&mut self, vault: &Vault, cwd: &Path) {
        if !vault.on() {
            return;
        }
        let mut dirs = vec![cwd.to_path_buf(), cwd.join("terraform.tfstate.d")];
        if let Ok(entries) = std::fs::read_dir(cwd) {
            let subdirs = entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir()));
            dirs.extend(subdirs.take(MAX_DIRS).map(|e| e.path()));
        }
        if let Ok(entries) = std::fs::read_dir(cwd.join("terraform.tfstate.d")) {
            dirs.extend(entries.flatten().take(MAX_DIRS).map(|e| e.path()));
        }
        for dir in dirs {
            for name in ["terraform.tfstate", "terraform.tfstate.backup"] {
                let path = dir.join(name);
                let Ok(meta) = std::fs::metadata(&path) else { continue };
                let Ok(modified) = meta.modified() else { continue };
                if self.seen.get(&path) == Some(&modified) || meta.len() > MAX_FILE {
                    continue;
                }
                self.seen.insert(path.clone(), modified);
                if let Ok(text) = std::fs::read_to_string(&path) {
                    super::learn::structures(&text, &mut |kind, value| vault.learn(kind, &value));
                }
            }
        }
    }
}
