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

/// Credential stores: any path through one asks, wherever the project is.
const CREDENTIAL_DIRS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".iac-code",
    ".aliyun",
    ".alibabacloud",
    ".terraform.d",
    ".password-store",
];

/// Files that hold credentials or run at every shell start.
const SENSITIVE_FILES: &[&str] = &[
    ".env",
    ".bashrc",
    ".zshrc",
    ".profile",
    ".bash_profile",
    ".bash_login",
    ".zprofile",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".terraformrc",
    "credentials.tfrc.json",
    "id_rsa",
    "id_ecdsa",
    "id_ed25519",
];

/// `.env` variants that are templates, not secrets.
const ENV_TEMPLATES: &[&str] = &["example", "sample", "template", "dist"];

/// Why `path` is sensitive, if it is. Credential stores and the config dir count anywhere;
/// `.git` internals are judged below `cwd` (the project root itself may sit anywhere).
pub fn sensitive(path: &Path, cwd: &Path, config_dir: &Path) -> Option<String> {
    if !config_dir.as_os_str().is_empty() && path.starts_with(config_dir) {
        return Some(format!("{} is the iac-code configuration directory", config_dir.display()));
    }
    for component in path.components() {
        if let Component::Normal(name) = component
            && CREDENTIAL_DIRS.contains(&name.to_string_lossy().as_ref())
        {
            return Some(format!("{} holds credentials", name.to_string_lossy()));
        }
    }
    let text = path.to_string_lossy();
    if text.contains("/.config/gcloud") || text.contains("/.config/gh/") {
        return Some("it holds cloud credentials".to_string());
    }
    if let Some(name) = path.file_name().map(|n| n.to_string_lossy())
        && sensitive_file(&name)
    {
        return Some(format!("{name} may hold credentials"));
    }
    let below = path.strip_prefix(cwd).unwrap_or(path);
    if below.components().any(|c| c.as_os_str() == ".git") {
        return Some(".git/ is repository internals".to_string());
    }
    None
}

/// Whether a walk (glob, grep) must skip this entry. Judges only the entry's own name: its
/// parents were judged when the walk entered them.
pub fn skip_in_walk(path: &Path, config_dir: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
    if CREDENTIAL_DIRS.contains(&name) || name == ".git" || sensitive_file(name) {
        return true;
    }
    if (name == "gcloud" || name == "gh")
        && path.parent().and_then(Path::file_name).is_some_and(|p| p == ".config")
    {
        return true;
    }
    path == config_dir
}

fn sensitive_file(name: &str) -> bool {
    SENSITIVE_FILES.contains(&name)
        || name.strip_prefix(".env.").is_some_and(|variant| !ENV_TEMPLATES.contains(&variant))
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
    fn sensitive_paths_are_named() {
        let cwd = Path::new("/w/p");
        let conf = Path::new("/home/u/.iac-code");
        let judge = |p: &str| sensitive(&resolve(cwd, p), cwd, conf);
        for bad in [
            ".env",
            "app/.env.production",
            ".git/config",
            ".git",
            "../../home/u/.ssh/id_rsa",
            "/home/u/.aws/credentials",
            "/home/u/.iac-code/settings.json",
            "/root/.bashrc",
            "/home/u/.config/gcloud/credentials.db",
            "/home/u/.kube/config",
        ] {
            assert!(judge(bad).is_some(), "{bad} should be sensitive");
        }
        for fine in [
            "main.tf",
            ".env.example",
            ".gitignore",
            ".github/workflows/ci.yml",
            "env/prod.tf",
            "modules/git/main.tf",
        ] {
            assert_eq!(judge(fine), None, "{fine}");
        }
        // Credential stores count even when the project is one; `.git` only below the root.
        let aws = Path::new("/home/u/.aws");
        assert!(sensitive(&aws.join("credentials"), aws, conf).is_some());
        for skipped in
            ["/p/.git", "/p/a/.env.prod", "/p/.aws", "/h/.config/gh", "/home/u/.iac-code"]
        {
            assert!(skip_in_walk(Path::new(skipped), conf), "{skipped}");
        }
        for walked in ["/p/.github", "/p/.env.example", "/p/gh", "/p/main.tf"] {
            assert!(!skip_in_walk(Path::new(walked), conf), "{walked}");
        }
        let odd = Path::new("/srv/x.git/proj");
        assert_eq!(sensitive(&odd.join("main.tf"), odd, conf), None);
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
