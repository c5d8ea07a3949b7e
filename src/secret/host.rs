//! The host's own credentials, learned by exact value into a session's vault: credential
//! variables of this process's environment (the caller says which names are credentials),
//! the files of the credential stores (scanned: what they hold is learned), and terraform
//! state files and Kubernetes Secret manifests in the session's directory (read again
//! when they change), so a value printed bare (`terraform output -raw`, `echo $TOKEN`, a
//! Secret's data line read on its own) is still known.

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

/// Scans one file for secrets (they are learned, not shown), and learns what the stores
/// whose values have no shape of their own hold: `.netrc`'s passwords, `.pgpass`'s last
/// field, a vault token file, the tokens of terraform's credentials files.
fn learn_file(vault: &Vault, path: &Path) {
    if std::fs::metadata(path).is_ok_and(|m| m.len() <= MAX_FILE)
        && let Ok(text) = std::fs::read_to_string(path)
    {
        vault.absorb(&text);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        for value in store_values(name, &text) {
            vault.learn("credential", &value);
        }
    }
}

/// The values of a credential store file named `name` that only its format shows.
fn store_values(name: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    match name {
        ".netrc" | "_netrc" => {
            let words: Vec<&str> = text.split_whitespace().collect();
            for pair in words.windows(2) {
                if matches!(pair[0], "password" | "passwd") {
                    out.push(pair[1].to_string());
                }
            }
        }
        ".pgpass" => {
            let last = text.lines().filter_map(|l| l.rsplit(':').next());
            out.extend(last.filter(|v| !v.is_empty()).map(str::to_string));
        }
        ".vault-token" => out.push(text.trim().to_string()),
        "credentials.tfrc.json" => {
            // {"credentials": {"app.terraform.io": {"token": "…"}}}
            if let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) {
                for host in doc["credentials"].as_object().into_iter().flatten() {
                    if let Some(token) = host.1["token"].as_str() {
                        out.push(token.to_string());
                    }
                }
            }
        }
        _ => {}
    }
    out
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
        for dir in &dirs {
            for name in ["terraform.tfstate", "terraform.tfstate.backup"] {
                self.learn_changed(vault, &dir.join(name), None);
            }
        }
        // Kubernetes Secrets in the workspace's manifests (two levels down): a windowed read
        // of one (`read_file` from line 4, `grep -A2 data:`, a cut output) shows values
        // without the `kind: Secret` that tells them apart.
        let mut manifests = dirs;
        for dir in manifests.clone().iter().skip(2) {
            if let Ok(entries) = std::fs::read_dir(dir) {
                let subdirs = entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir()));
                manifests.extend(subdirs.take(MAX_DIRS).map(|e| e.path()));
            }
            if manifests.len() > MAX_DIRS * 4 {
                break;
            }
        }
        for dir in manifests {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten().take(MAX_STORE_FILES * 4) {
                let path = entry.path();
                let manifest =
                    path.extension().is_some_and(|e| e == "yaml" || e == "yml" || e == "json");
                if manifest && entry.file_type().is_ok_and(|t| t.is_file()) {
                    self.learn_changed(vault, &path, Some("Secret"));
                }
            }
        }
    }

    /// Learns what `path` marks secret when it changed since last read (and, with `needs`,
    /// only when its text holds that word).
    fn learn_changed(&mut self, vault: &Vault, path: &Path, needs: Option<&str>) {
        let Ok(meta) = std::fs::metadata(path) else { return };
        let Ok(modified) = meta.modified() else { return };
        if self.seen.get(path) == Some(&modified) || meta.len() > MAX_FILE {
            return;
        }
        self.seen.insert(path.to_path_buf(), modified);
        if let Ok(text) = std::fs::read_to_string(path)
            && needs.is_none_or(|word| text.contains(word))
        {
            super::learn::structures(&text, &mut |kind, value| vault.learn(kind, &value));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::store_values;

    #[test]
    fn stores_without_shapes_give_their_values() {
        let netrc = "machine git.example.com login me password hunter2plain\n";
        assert_eq!(store_values(".netrc", netrc), ["hunter2plain"]);
        assert_eq!(store_values(".pgpass", "db:5432:app:me:pgsecretword\n"), ["pgsecretword"]);
        assert_eq!(store_values(".vault-token", "hvs.somevaulttoken\n"), ["hvs.somevaulttoken"]);
        let tfrc = r#"{"credentials": {"app.terraform.io": {"token": "abc.atlasv1.def"}}}"#;
        assert_eq!(store_values("credentials.tfrc.json", tfrc), ["abc.atlasv1.def"]);
        assert!(store_values("config", "password x").is_empty());
    }
}
