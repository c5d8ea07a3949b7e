//! Path resolution for tools: relative paths join the session cwd, `~` expands, and
//! containment is judged on the real path (symlinks and `..` resolved).

use std::path::{Component, Path, PathBuf};

/// Resolves a path argument against `cwd`, lexically (no filesystem access).
pub fn resolve(cwd: &Path, raw: &str) -> PathBuf {
    let raw = raw.trim();
    let expanded = match (raw.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(raw),
    };
    let joined = if expanded.is_absolute() { expanded } else { cwd.join(expanded) };
    normalize(&joined)
}

/// Removes `.` and folds `..` without touching the filesystem.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => {
                out.push(component.as_os_str())
            }
        }
    }
    out
}

/// The real location of `path`: the longest existing ancestor canonicalized (symlinks
/// resolved), with the rest appended.
pub fn real(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            let mut out = canonical;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return normalize(&out);
        }
        match (existing.file_name().map(|n| n.to_os_string()), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Whether `path` (already real) lies in `root` (already canonical).
pub fn is_inside(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}

/// `path` relative to `cwd` when inside it, else absolute, for titles.
pub fn display_relative(path: &Path, cwd: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_against_cwd_lexically() {
        let cwd = Path::new("/w/p");
        assert_eq!(resolve(cwd, "a/./b.tf"), PathBuf::from("/w/p/a/b.tf"));
        assert_eq!(resolve(cwd, "../x"), PathBuf::from("/w/x"));
        assert_eq!(resolve(cwd, "/etc/hosts"), PathBuf::from("/etc/hosts"));
        assert!(!is_inside(&resolve(cwd, "../p2/f"), cwd));
        assert_eq!(display_relative(&resolve(cwd, "m/main.tf"), cwd), "m/main.tf");
    }

    #[test]
    fn real_follows_symlinks_of_existing_ancestors() {
        let dir = std::env::temp_dir().join(format!("iac-paths-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("inside")).unwrap();
        std::os::unix::fs::symlink("/etc", dir.join("inside/link")).unwrap();
        let root = dir.join("inside").canonicalize().unwrap();
        let judged = real(&dir.join("inside/link/new-file"));
        assert!(!is_inside(&judged, &root), "{judged:?}");
        assert!(judged.ends_with("new-file"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
