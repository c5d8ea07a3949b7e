//! A project's `.mcp.json` (`{"mcpServers": {…}}` in the session cwd) starts programs, so
//! it is used only once the user approved it. The approval keeps the approved content
//! itself, byte for byte, in `<config dir>/mcp-approvals.json` (mode 0600), keyed by the
//! file's path in its project: any change to the file, however small, asks again, and no
//! crafted content can pass for approved (as a short hash could). The file must be a
//! regular file of the project itself: a symbolic link (to another project's approved
//! file, say) is never read, and it is opened once, without following links or blocking
//! on a FIFO, and read to at most 1 MiB.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::spec::{BadEntry, Origin, ServerSpec, Transport, parse_servers};

/// The project file's name.
pub const FILE: &str = ".mcp.json";
const APPROVALS: &str = "mcp-approvals.json";
/// The largest project file read.
const MAX_SIZE: u64 = 1 << 20;

/// A project's MCP file as read now.
#[derive(Debug, Clone)]
pub struct ProjectFile {
    /// Its real path.
    pub path: PathBuf,
    /// Its content.
    pub text: String,
}

impl ProjectFile {
    /// The file in `cwd` (canonical), if there is one: a regular file, not a link, at
    /// most 1 MiB, valid UTF-8.
    pub fn find(cwd: &Path) -> Option<ProjectFile> {
        let path = cwd.join(FILE);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(&path);
        let file = match file {
            Ok(file) => file,
            Err(err) if err.raw_os_error() == Some(libc::ELOOP) => {
                log::warn!("{} is a symbolic link: its MCP servers are not used", path.display());
                return None;
            }
            Err(_) => return None,
        };
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() > MAX_SIZE {
            log::warn!("{} is not a regular file of at most 1 MiB: not used", path.display());
            return None;
        }
        let mut text = String::new();
        file.take(MAX_SIZE).read_to_string(&mut text).ok()?;
        Some(ProjectFile { path, text })
    }

    /// Its servers (or why the file cannot be used).
    pub fn servers(&self) -> Vec<Result<ServerSpec, BadEntry>> {
        let bad = |reason: String| vec![Err(BadEntry { name: FILE.to_string(), reason })];
        match serde_json::from_str::<Value>(&self.text) {
            Ok(Value::Object(root)) => match root.get("mcpServers") {
                Some(servers) => parse_servers(servers, Origin::Project),
                None => bad("it has no mcpServers object".to_string()),
            },
            Ok(_) => bad("it is not a JSON object".to_string()),
            Err(err) => bad(format!("it is not valid JSON: {err}")),
        }
    }

    /// The servers it declares, each with its command or URL and the names of the
    /// variables it sets (for the question: they can change what a command runs).
    pub fn names(&self) -> Vec<String> {
        self.servers()
            .into_iter()
            .map(|entry| match entry {
                Ok(spec) => {
                    let mut shown = format!("{} ({}", spec.name, spec.transport.describe());
                    if let Transport::Stdio { env, .. } = &spec.transport
                        && !env.is_empty()
                    {
                        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
                        shown.push_str(&format!("; sets {}", names.join(", ")));
                    }
                    shown.push(')');
                    shown
                }
                Err(bad) => bad.name,
            })
            .collect()
    }

    /// Whether exactly this content was approved.
    pub fn approved(&self, config_dir: &Path) -> bool {
        read(config_dir).get(&self.path.to_string_lossy().into_owned()) == Some(&self.text)
    }

    /// Remembers this content as approved.
    pub fn approve(&self, config_dir: &Path) -> std::io::Result<()> {
        let mut all = read(config_dir);
        all.insert(self.path.to_string_lossy().into_owned(), self.text.clone());
        write(config_dir, &all)
    }
}

fn read(config_dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(config_dir.join(APPROVALS))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

fn write(config_dir: &Path, all: &BTreeMap<String, String>) -> std::io::Result<()> {
    std::fs::create_dir_all(config_dir)?;
    let path = config_dir.join(APPROVALS);
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = config_dir.join(format!(".{APPROVALS}.{}.{n}", std::process::id()));
    let text = serde_json::to_string_pretty(all).map_err(std::io::Error::other)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&tmp, &path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_is_for_this_content_only() {
        let dir = std::env::temp_dir().join(format!("iac-mcp-project-{}", std::process::id()));
        let config = dir.join("config");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(dir.join(FILE), r#"{"mcpServers":{"a":{"command":"srv"}}}"#).unwrap();
        let file = ProjectFile::find(&dir).unwrap();
        assert!(!file.approved(&config));
        file.approve(&config).unwrap();
        assert!(ProjectFile::find(&dir).unwrap().approved(&config));
        assert_eq!(file.servers().len(), 1);
        std::fs::write(dir.join(FILE), r#"{"mcpServers":{"a":{"command":"srv2"}}}"#).unwrap();
        assert!(!ProjectFile::find(&dir).unwrap().approved(&config), "a changed file asks again");
        // Another project linking to this approved file gets nothing.
        let other = dir.join("other");
        std::fs::create_dir_all(&other).unwrap();
        std::os::unix::fs::symlink(dir.join(FILE), other.join(FILE)).unwrap();
        ProjectFile::find(&dir).unwrap().approve(&config).unwrap();
        assert!(ProjectFile::find(&other).is_none(), "a link is never read");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
