//! A project's `.mcp.json` (`{"mcpServers": {…}}` in the session cwd) starts programs, so
//! it is used only once the user approved it. The approval keeps the approved content
//! itself, byte for byte, in `<config dir>/mcp-approvals.json` (mode 0600), keyed by the
//! file's path in its project: any change to the file, however small, asks again, and no
//! crafted content can pass for approved (as a short hash could). The file must be a
//! regular file of the project itself: a symbolic link (to another project's approved
//! file, say) is never read, and it is opened once, without following links or blocking
//! on a FIFO, and read to at most 1 MiB (`config::approval`, shared with the project's
//! permission rules).
//!
//! The approval also keeps what the file runs (`runs`): the SHA-256 of each stdio
//! server's program (found as the child would find it: a path with a slash from the
//! project, else along `PATH`) and of each project file an argument names (`server.py`,
//! `--config=srv.toml`). When one changes, its servers do not start until the user
//! approves again; a write to one asks (the file tools' judge knows them).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::spec::{BadEntry, Origin, ServerSpec, Transport, parse_servers};
use crate::config::approval::{
    Fingerprint, MCP as APPROVALS, Runs, Standing, fingerprint, read_project_file,
};

/// The project file's name.
pub const FILE: &str = ".mcp.json";

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

    /// Whether exactly this content was approved, with the files it runs as they are now.
    pub fn approved(&self, config_dir: &Path) -> bool {
        self.standing(config_dir) == Standing::Approved
    }

    /// How its approval stands: approved, not approved, or approved but a file it runs
    /// changed since.
    pub fn standing(&self, config_dir: &Path) -> Standing {
        APPROVALS.standing(config_dir, &self.path, &self.text, &self.runs())
    }

    /// Remembers this content as approved, with the files it runs as they are now.
    pub fn approve(&self, config_dir: &Path) -> std::io::Result<()> {
        APPROVALS.approve_running(config_dir, &self.path, &self.text, &self.runs())
    }

    /// What its stdio servers run: each program file and each project file an argument
    /// names, with its fingerprint.
    pub fn runs(&self) -> Runs {
        let root = self.path.parent().unwrap_or(Path::new("/"));
        let mut runs = Runs::new();
        for spec in self.servers().into_iter().flatten() {
            let Transport::Stdio { command, args, env } = &spec.transport else { continue };
            let path_var = env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone());
            let program = program_file(command, root, path_var);
            let key = program.as_ref().map_or_else(|| command.clone(), |p| p.display().to_string());
            runs.insert(key, program.as_deref().map_or(Fingerprint::Absent, fingerprint));
            for file in args.iter().filter_map(|arg| project_file(arg, root)) {
                let digest = fingerprint(&file);
                runs.insert(file.display().to_string(), digest);
            }
        }
        runs
    }
}

/// Whether the project file in `cwd` is approved as it is now, with what it runs; else
/// why its servers do not start.
pub(super) fn still_approved(cwd: &Path, config_dir: &Path) -> Result<(), String> {
    let again = "approve it again to start them";
    match ProjectFile::find(cwd).map(|file| file.standing(config_dir)) {
        Some(Standing::Approved) => Ok(()),
        Some(Standing::Changed(files)) => Err(format!(
            "not started: {} changed since {FILE} was approved ({again})",
            files.join(", ")
        )),
        _ => Err(format!("not started: {FILE} is not approved as it is now ({again})")),
    }
}

/// The file `command` starts, as the child would find it (a path with a slash from the
/// project, else the first executable along the entry's `PATH` or ours), made real.
fn program_file(command: &str, root: &Path, path_var: Option<String>) -> Option<PathBuf> {
    if command.contains('/') {
        // `components` drops the `.`s: the path as the judge of a write resolves it.
        let path: PathBuf = root.join(command).components().collect();
        return Some(std::fs::canonicalize(&path).unwrap_or(path));
    }
    let path_var = path_var.or_else(|| std::env::var("PATH").ok()).unwrap_or_default();
    path_var.split(':').filter(|dir| !dir.is_empty()).find_map(|dir| {
        let candidate = root.join(dir).join(command);
        let meta = std::fs::metadata(&candidate).ok()?;
        use std::os::unix::fs::PermissionsExt;
        (meta.is_file() && meta.permissions().mode() & 0o111 != 0)
            .then(|| std::fs::canonicalize(&candidate).unwrap_or(candidate))
    })
}

/// The project file an argument names (`server.py`, `--config=srv.toml`), if it names an
/// existing regular file whose real path lies in the project.
fn project_file(arg: &str, root: &Path) -> Option<PathBuf> {
    let named = match arg.split_once('=') {
        Some((flag, value)) if flag.starts_with('-') => value,
        _ => arg,
    };
    if named.is_empty() || named.starts_with('-') {
        return None;
    }
    let real = std::fs::canonicalize(root.join(named)).ok()?;
    let root = std::fs::canonicalize(root).ok()?;
    (real.starts_with(&root) && real.is_file()).then_some(real)
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

    #[test]
    fn what_it_runs_is_the_program_and_the_project_files_named() {
        let dir = std::env::temp_dir().join(format!("iac-mcp-runs-{}", std::process::id()));
        let config = dir.join("config");
        std::fs::create_dir_all(dir.join("mcp")).unwrap();
        let dir = std::fs::canonicalize(&dir).unwrap();
        std::fs::write(dir.join("mcp/server.py"), "print(1)").unwrap();
        std::fs::write(dir.join("srv.toml"), "a = 1").unwrap();
        let entry = r#"{"mcpServers":{"a":{"command":"sh","args":["mcp/server.py",
            "--config=srv.toml","-v","/etc/hostname","missing.py"]},
            "b":{"command":"./run.sh"}}}"#;
        std::fs::write(dir.join(FILE), entry).unwrap();
        let file = ProjectFile::find(&dir).unwrap();
        let runs = file.runs();
        let keys: Vec<&str> = runs.keys().map(String::as_str).collect();
        let sh = program_file("sh", &dir, None).unwrap();
        let mut want = vec![
            sh.to_str().unwrap().to_string(),
            dir.join("mcp/server.py").display().to_string(),
            dir.join("srv.toml").display().to_string(),
            dir.join("run.sh").display().to_string(),
        ];
        want.sort();
        assert_eq!(keys, want, "the program, the project files named, the missing ./run.sh");
        assert_eq!(runs[&dir.join("run.sh").display().to_string()], Fingerprint::Absent);
        file.approve(&config).unwrap();
        assert!(file.approved(&config));
        std::fs::write(dir.join("mcp/server.py"), "print(2)").unwrap();
        let standing = ProjectFile::find(&dir).unwrap().standing(&config);
        let changed = vec![dir.join("mcp/server.py").display().to_string()];
        assert_eq!(standing, Standing::Changed(changed), "a changed script asks again");
        std::fs::write(dir.join("run.sh"), "#!/bin/sh").unwrap();
        assert!(!ProjectFile::find(&dir).unwrap().approved(&config), "so does a new program");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
