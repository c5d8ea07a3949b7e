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
/// resolved), with the rest appended. Only components that do not exist yet are taken as
/// written (a file or directories about to be created); `None` when an existing part
/// cannot be resolved (a symlink loop, no permission, a component that is not a
/// directory): such a path is never judged to be inside anything.
pub fn real(path: &Path) -> Option<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(canonical) => {
                let mut out = canonical;
                for part in rest.iter().rev() {
                    out.push(part);
                }
                return Some(normalize(&out));
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return None,
        }
        // A dangling symlink is not a missing component: where it points is unknown here.
        if std::fs::symlink_metadata(&existing).is_ok() {
            return None;
        }
        match (existing.file_name().map(|n| n.to_os_string()), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return None,
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
    ".terraform",
];

/// Directories below `~/.config` (or any `.config`) that hold credentials or run code.
const CONFIG_DIRS: &[(&str, &str)] = &[
    ("gcloud", "it holds cloud credentials"),
    ("gh", "it holds GitHub credentials"),
    ("rclone", "it holds storage credentials"),
    ("git", "git configuration can run programs (core.fsmonitor, core.pager)"),
    ("fish", "fish runs it at every shell start"),
];

/// Files, by exact name, and why each one is sensitive.
const SENSITIVE_FILES: &[(&str, &str)] = &[
    (".env", "may hold credentials"),
    (".envrc", "direnv runs it on entering the directory"),
    (".bashrc", "the shell runs it at start"),
    (".zshrc", "the shell runs it at start"),
    (".zshenv", "the shell runs it at start"),
    (".zlogin", "the shell runs it at start"),
    (".zprofile", "the shell runs it at start"),
    (".profile", "the shell runs it at start"),
    (".bash_profile", "the shell runs it at start"),
    (".bash_login", "the shell runs it at start"),
    (".bash_logout", "the shell runs it at exit"),
    (".gitconfig", "git configuration can run programs (core.fsmonitor, core.pager)"),
    (".netrc", "may hold credentials"),
    (".pgpass", "may hold credentials"),
    (".npmrc", "may hold credentials"),
    (".pypirc", "may hold credentials"),
    (".git-credentials", "may hold credentials"),
    (".vault-token", "holds a Vault token"),
    (".s3cfg", "may hold credentials"),
    (".boto", "may hold credentials"),
    (".terraformrc", "may hold credentials"),
    ("credentials.tfrc.json", "holds Terraform Cloud credentials"),
];

/// Sensitive files within a named directory (`parent`, name prefix).
const SENSITIVE_NESTED: &[(&str, &str, &str)] = &[
    (".vscode", "tasks.json", "the editor runs the tasks it defines"),
    (".m2", "settings.xml", "may hold credentials"),
    (".docker", "config.json", "may hold registry credentials"),
    (".cargo", "credentials", "holds crates.io tokens"),
];

/// Why a file name alone makes a file sensitive, if it does.
fn sensitive_name(name: &str) -> Option<&'static str> {
    if let Some((_, why)) = SENSITIVE_FILES.iter().find(|(n, _)| *n == name) {
        return Some(why);
    }
    if name.strip_prefix(".env.").is_some_and(|variant| !ENV_TEMPLATES.contains(&variant)) {
        return Some("may hold credentials");
    }
    // Walks judge every name: no allocation here.
    let ends = |suffix: &str| {
        name.len() >= suffix.len()
            && name.as_bytes()[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
    };
    if crate::infra::holds_state(name) {
        return Some(
            "Terraform state holds every resource attribute in plain text, secrets included",
        );
    }
    if ends(".tfvars") || ends(".tfvars.json") {
        return Some("Terraform variables often hold secrets");
    }
    if [".pem", ".key", ".p12", ".pfx"].iter().any(|ext| ends(ext)) {
        return Some("may be a private key or certificate");
    }
    if name.starts_with("id_") && !ends(".pub") {
        return Some("may be an SSH private key");
    }
    if name.ends_with("_history") {
        return Some("shell histories hold typed secrets");
    }
    None
}

/// `.env` variants that are templates, not secrets.
const ENV_TEMPLATES: &[&str] = &["example", "sample", "template", "dist"];

/// Why the existing regular file at `path` (a real path) is sensitive by its content: it
/// starts like a PEM private key. Never follows a symlink, never blocks on a FIFO.
pub fn sensitive_content(path: &Path) -> Option<String> {
    use std::io::Read;
    let file = crate::sys::own_file::options().read(true).open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut head = [0u8; 128];
    let n = file.take(head.len() as u64).read(&mut head).unwrap_or(0);
    crate::secret::is_private_key_header(&head[..n])
        .then(|| "it starts like a PEM private key".to_string())
}

/// Why `path` is sensitive, if it is. Credential stores and the config dir count anywhere;
/// `.git` internals are judged below `cwd` (the project root itself may sit anywhere).
pub fn sensitive(path: &Path, cwd: &Path, config_dir: &Path) -> Option<String> {
    if !config_dir.as_os_str().is_empty() && path.starts_with(config_dir) {
        return Some(format!("{} is the iac-code configuration directory", config_dir.display()));
    }
    let names: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    for (i, name) in names.iter().enumerate() {
        if CREDENTIAL_DIRS.contains(&name.as_str()) {
            if name == ".terraform" {
                return Some(".terraform/ holds provider credentials and state".to_string());
            }
            return Some(format!("{name} holds credentials"));
        }
        if name == ".config"
            && let Some(next) = names.get(i + 1)
            && let Some((_, why)) = CONFIG_DIRS.iter().find(|(n, _)| n == next)
        {
            return Some(format!(".config/{next}: {why}"));
        }
    }
    if let Some(name) = names.last() {
        if let Some(why) = sensitive_name(name) {
            return Some(format!("{name}: {why}"));
        }
        if let Some(parent) = names.len().checked_sub(2).and_then(|i| names.get(i))
            && let Some((_, _, why)) =
                SENSITIVE_NESTED.iter().find(|(p, n, _)| p == parent && name.starts_with(n))
        {
            return Some(format!("{parent}/{name}: {why}"));
        }
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
    if CREDENTIAL_DIRS.contains(&name) || name == ".git" || sensitive_name(name).is_some() {
        return true;
    }
    let parent = path.parent().and_then(Path::file_name).and_then(|p| p.to_str());
    if parent == Some(".config") && CONFIG_DIRS.iter().any(|(n, _)| *n == name) {
        return true;
    }
    if SENSITIVE_NESTED.iter().any(|(p, n, _)| Some(*p) == parent && name.starts_with(n)) {
        return true;
    }
    path == config_dir
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
            "server.key",
            "certs/tls.pem",
            "id_dsa",
            "keys/id_ed25519_work",
            "terraform.tfstate",
            "env/prod/terraform.tfstate.backup",
            "prod.tfvars",
            "secrets.auto.tfvars.json",
            ".terraform/providers/x",
            "/home/u/.bash_history",
            ".zsh_history",
            "/home/u/.zshenv",
            "/home/u/.zlogin",
            "/home/u/.gitconfig",
            "/home/u/.config/git/config",
            "/home/u/.config/fish/config.fish",
            "/home/u/.config/rclone/rclone.conf",
            ".envrc",
            ".vscode/tasks.json",
            "/home/u/.vault-token",
            "/home/u/.pypirc",
            "/home/u/.cargo/credentials.toml",
            "/home/u/.m2/settings.xml",
            "/home/u/.s3cfg",
            "/home/u/.boto",
            "/home/u/.docker/config.json",
            "/home/u/.azure/accessTokens.json",
            "cert.p12",
            "cert.pfx",
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
            "id_rsa.pub",
            "variables.tf",
            ".vscode/settings.json",
            "history.md",
            "/home/u/.cargo/config.toml",
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
        for skipped in ["/p/prod.tfvars", "/p/terraform.tfstate", "/p/.terraform", "/h/.config/git"]
        {
            assert!(skip_in_walk(Path::new(skipped), conf), "{skipped}");
        }
        for walked in ["/p/.github", "/p/.env.example", "/p/gh", "/p/main.tf", "/p/git"] {
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
        let judged = real(&dir.join("inside/link/new-file")).unwrap();
        assert!(!is_inside(&judged, &root), "{judged:?}");
        assert!(judged.ends_with("new-file"));
        // A dangling link or a loop cannot be judged: never "inside".
        std::os::unix::fs::symlink("/nonexistent-iac", dir.join("inside/dangling")).unwrap();
        assert_eq!(real(&dir.join("inside/dangling")), None);
        assert_eq!(real(&dir.join("inside/dangling/x")), None);
        std::os::unix::fs::symlink("loop", dir.join("inside/loop")).unwrap();
        assert_eq!(real(&dir.join("inside/loop/x")), None);
        std::fs::write(dir.join("inside/file"), "x").unwrap();
        assert_eq!(real(&dir.join("inside/file/x")), None, "a file is not a directory");
        assert_eq!(real(&dir.join("inside/new/deeper")), Some(root.join("new/deeper")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
