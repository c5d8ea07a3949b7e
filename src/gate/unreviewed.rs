//! Files written in this session without a person's answer (accept_edits writes, a rule's
//! or bypass mode's, a file-only command's) and tools whose writes nobody can list (an MCP
//! tool that ran unasked). A command that runs project code (`terraform plan`, `ansible-playbook
//! --check`) runs unasked only when none of them lies below the directories it runs code
//! from: no tier runs code the user never saw.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// At most this many files are named in a question; the rest are counted.
const NAMED: usize = 10;

/// What was written without a person's answer.
#[derive(Debug, Default, Clone)]
pub struct Unreviewed {
    files: BTreeSet<PathBuf>,
    /// Tools that may have written anything (`mcp__srv__tool`).
    unknown: BTreeSet<String>,
}

impl Unreviewed {
    /// `paths` were written without a person's answer.
    pub fn wrote(&mut self, paths: impl IntoIterator<Item = PathBuf>) {
        self.files.extend(paths);
    }

    /// `tool` ran without a person's answer and may have written anything.
    pub fn wrote_unknown(&mut self, tool: &str) {
        self.unknown.insert(tool.to_string());
    }

    /// A person answered about `paths` (they saw the write, or said yes to running them).
    pub fn reviewed(&mut self, paths: &[PathBuf]) {
        for path in paths {
            self.files.remove(path);
        }
    }

    /// A person said yes to running code from `dirs` knowing what `found` listed.
    pub fn accept(&mut self, found: &Found) {
        self.reviewed(&found.files);
        for tool in &found.tools {
            self.unknown.remove(tool);
        }
    }

    /// What below `dirs` was written without a person's answer (unknown writers count
    /// everywhere).
    pub fn below(&self, dirs: &[PathBuf]) -> Found {
        if dirs.is_empty() {
            return Found::default();
        }
        let files =
            self.files.iter().filter(|f| dirs.iter().any(|d| f.starts_with(d))).cloned().collect();
        Found { files, tools: self.unknown.iter().cloned().collect() }
    }
}

/// Unreviewed things a command would run.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Found {
    /// Files below the command's directories.
    pub files: Vec<PathBuf>,
    /// Tools that may have written anything.
    pub tools: Vec<String>,
}

impl Found {
    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.tools.is_empty()
    }

    /// One line for a question, naming the files relative to `cwd`.
    pub fn describe(&self, cwd: &Path) -> String {
        let mut parts = Vec::new();
        if !self.files.is_empty() {
            let mut named: Vec<String> = self
                .files
                .iter()
                .take(NAMED)
                .map(|f| f.strip_prefix(cwd).unwrap_or(f).display().to_string())
                .collect();
            if self.files.len() > NAMED {
                named.push(format!("and {} more", self.files.len() - NAMED));
            }
            parts.push(format!("files written without review: {}", named.join(", ")));
        }
        if !self.tools.is_empty() {
            parts.push(format!("after {} ran unasked", self.tools.join(", ")));
        }
        format!("it runs project code, {}", parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_below_the_directories_count_and_answers_clear_them() {
        let mut u = Unreviewed::default();
        u.wrote([PathBuf::from("/p/infra/main.tf"), PathBuf::from("/p/docs/x.md")]);
        let infra = [PathBuf::from("/p/infra")];
        assert_eq!(u.below(&infra).files, vec![PathBuf::from("/p/infra/main.tf")]);
        assert!(u.below(&[PathBuf::from("/p/app")]).is_empty());
        assert!(u.below(&[]).is_empty(), "a command that runs no code finds nothing");
        let found = u.below(&infra);
        assert!(found.describe(Path::new("/p")).contains("infra/main.tf"));
        u.accept(&found);
        assert!(u.below(&infra).is_empty());
        u.wrote_unknown("mcp__s__t");
        let found = u.below(&infra);
        assert_eq!(found.tools, vec!["mcp__s__t".to_string()]);
        u.accept(&found);
        assert!(u.below(&infra).is_empty());
    }
}
