//! A project's `.mcp.json` (`{"mcpServers": {…}}` in the session cwd) starts programs, so
//! it is used only once the user approved it. The approval keeps the approved content
//! itself, byte for byte, in `<config dir>/mcp-approvals.json` (mode 0600), keyed by the
//! file's path in its project: any change to the file, however small, asks again, and no
//! crafted content can pass for approved (as a short hash could). The file must be a
//! regular file of the project itself: a symbolic link (to another project's approved
//! file, say) is never read, and it is opened once, without following links or blocking
//! on a FIFO, and read to at most 1 MiB (`config::approval`, shared with the project's
//! permission rules).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::spec::{BadEntry, Origin, ServerSpec, Transport, parse_servers};
use crate::config::approval::{Approvals, read_project_file};

/// The project file's name.
pub const FILE: &str = ".mcp.json";
const APPROVALS: Approvals = Approvals::new("mcp-approvals.json");

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
        match read_project_file(&path) {
            Ok(text) => text.map(|text| ProjectFile { path, text }),
            Err(why) => {
                log::warn!("{why}: its MCP servers are not used");
                None
            }
        }
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
        APPROVALS.approved(config_dir, &self.path, &self.text)
    }

    /// Remembers this content as approved.
    pub fn approve(&self, config_dir: &Path) -> std::io::Result<()> {
        APPROVALS.approve(config_dir, &self.path, &self.text)
    }
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
