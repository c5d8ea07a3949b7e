//! Where a session's project is: the one walk from the cwd up to its git repository's root
//! (a directory holding `.git`), or the cwd alone outside a repository. AGENTS.md and
//! project skills are read from each directory of that walk, outermost first.

use std::path::{Path, PathBuf};

/// A cwd's project: its root and every directory from the root down to the cwd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// The git repository's root (the nearest ancestor holding `.git`), else the cwd.
    pub root: PathBuf,
    /// Whether `root` is a git repository's root.
    pub in_git: bool,
    /// The root first, the cwd last (just the cwd outside a repository).
    pub dirs: Vec<PathBuf>,
}

impl Project {
    /// The project of `cwd` (an absolute path; nothing is resolved, only `.git` looked for).
    pub fn of(cwd: &Path) -> Project {
        let git = cwd.ancestors().find(|dir| dir.join(".git").exists());
        let stop = git.unwrap_or(cwd);
        let mut dirs: Vec<PathBuf> = Vec::new();
        for dir in cwd.ancestors() {
            dirs.push(dir.to_path_buf());
            if dir == stop {
                break;
            }
        }
        dirs.reverse();
        Project { root: stop.to_path_buf(), in_git: git.is_some(), dirs }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_from_the_git_root_down_to_the_cwd() {
        let dir = std::env::temp_dir().join(format!("iac-project-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("repo/.git")).unwrap();
        std::fs::create_dir_all(dir.join("repo/envs/prod")).unwrap();
        std::fs::create_dir_all(dir.join("alone/sub")).unwrap();
        let project = Project::of(&dir.join("repo/envs/prod"));
        assert_eq!(project.root, dir.join("repo"));
        assert!(project.in_git);
        let names: Vec<PathBuf> =
            vec![dir.join("repo"), dir.join("repo/envs"), dir.join("repo/envs/prod")];
        assert_eq!(project.dirs, names);
        let alone = Project::of(&dir.join("alone/sub"));
        assert_eq!((alone.root.clone(), alone.in_git), (dir.join("alone/sub"), false));
        assert_eq!(alone.dirs, vec![dir.join("alone/sub")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
