//! Which paths a sandbox writes, keeps read-only and hides: the workspace roots, what in
//! them only a person may change (terraform state, `.git`, `.iac-code`, `.mcp.json`,
//! `.agents`, what an approval covers), found by a bounded walk, and the credential stores.

use std::path::{Path, PathBuf};

use super::{Profile, Roots, State};

/// Entries a workspace walk looks at before it gives up: past this the workspace is
/// read-only whole (what to protect in it is not known).
const MAX_WALK: usize = 20_000;

/// Names inside a workspace that a sandboxed command never writes, wherever they are.
const PROTECTED: [&str; 4] = [".git", ".iac-code", ".mcp.json", ".agents"];

/// Directories a walk does not enter (they hold no state of their own, and are large).
const SKIPPED: [&str; 3] = [".git", "node_modules", ".terraform"];

/// The names a sandboxed command never writes inside the workspace, besides state.
pub fn protected_names() -> &'static [&'static str] {
    &PROTECTED
}

/// Credential stores below HOME: never readable by a sealed command.
const STORES: [&str; 19] = [
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".ssh",
    ".docker/config.json",
    ".terraform.d/credentials.tfrc.json",
    ".terraformrc",
    ".netrc",
    ".git-credentials",
    ".vault-token",
    ".config/gh",
    ".config/helm/repositories.yaml",
    ".gnupg",
    ".password-store",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".oci",
];

/// The credential stores of this host that exist: those below HOME and those the
/// variables name (what redaction learns the values of).
pub fn credential_stores() -> Vec<PathBuf> {
    let mut stores = Vec::new();
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from) {
        stores.extend(STORES.iter().map(|s| home.join(s)).filter(|p| p.exists()));
    }
    for var in STORE_VARS {
        let Some(value) = std::env::var_os(var) else { continue };
        let value = value.to_string_lossy().into_owned();
        stores.extend(value.split(':').filter(|p| !p.is_empty()).map(PathBuf::from));
    }
    stores.retain(|p| p.exists());
    stores
}

/// Variables that name a credential file or directory (`:`-separated lists allowed).
const STORE_VARS: [&str; 12] = [
    "KUBECONFIG",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CLOUDSDK_CONFIG",
    "AZURE_CONFIG_DIR",
    "DOCKER_CONFIG",
    "TF_CLI_CONFIG_FILE",
    "VAULT_CONFIG_PATH",
    "SSH_AUTH_SOCK",
    "GNUPGHOME",
    "PASSWORD_STORE_DIR",
];

/// System places a sealed command does not see: service-account tokens of a pod, and the
/// runtime directory (agent and Docker sockets: a socket is reachable on a read-only mount).
const SYSTEM_HIDDEN: [&str; 3] = ["/run", "/var/run/secrets", "/tmp/.X11-unix"];

/// Whether `path` is terraform state (`infra`'s one predicate, by its name).
pub fn is_state_file(path: &Path) -> bool {
    path.file_name().is_some_and(|name| crate::infra::holds_state(&name.to_string_lossy()))
}

/// What the sandbox of one command lays out.
#[derive(Debug, Default)]
pub(super) struct Layout {
    pub writable: Vec<PathBuf>,
    pub read_only: Vec<PathBuf>,
    pub hidden: Vec<PathBuf>,
    /// The state files found in the workspace.
    pub states: Vec<PathBuf>,
    /// The walk gave up: the workspace is read-only whole.
    pub too_large: bool,
    /// Protected names missing at the top of a writable root (`Spec::absent`).
    pub absent: Vec<PathBuf>,
}

/// Lays out `profile`'s sandbox at `roots`.
pub(super) fn layout(
    profile: Profile,
    roots: &Roots,
    env: &dyn Fn(&str) -> Option<String>,
) -> Layout {
    let mut out = Layout::default();
    for root in std::iter::once(roots.cwd).chain(roots.extra.iter().map(PathBuf::as_path)) {
        let Some(root) = real(root) else { continue };
        // A root of `/` would make the whole host writable: it stays read-only.
        if root.parent().is_none() || out.writable.contains(&root) {
            continue;
        }
        out.too_large |= !walk(&root, &mut out.read_only, &mut out.states);
        out.absent.extend(
            PROTECTED.iter().map(|name| root.join(name)).filter(|p| p.symlink_metadata().is_err()),
        );
        out.writable.push(root);
    }
    if out.too_large {
        log::warn!(
            "sandbox: a workspace holds over {MAX_WALK} entries; it is read-only in the sandbox"
        );
    }
    out.read_only.extend(roots.approved.iter().filter_map(|p| real(p)));
    if profile != Profile::Cloud(State::Write) {
        out.read_only.extend(out.states.iter().cloned());
    }
    if matches!(profile, Profile::Cloud(State::Scratch)) {
        // The copies are written instead.
        let states = out.states.clone();
        out.read_only.retain(|p| !states.contains(p));
    }
    out.hidden.extend(real(roots.config_dir));
    if profile == Profile::Sealed {
        let home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        if let Some(home) = home {
            out.hidden.extend(STORES.iter().filter_map(|s| real(&home.join(s))));
        }
        for var in STORE_VARS {
            let Some(value) = env(var) else { continue };
            out.hidden.extend(
                value.split(':').filter(|p| !p.is_empty()).filter_map(|p| real(Path::new(p))),
            );
        }
        out.hidden.extend(SYSTEM_HIDDEN.iter().filter_map(|p| real(Path::new(p))));
    }
    // Hiding an ancestor of a writable root would hide the workspace itself.
    let writable = out.writable.clone();
    out.hidden.retain(|h| !writable.iter().any(|w| w.starts_with(h)));
    out.hidden.sort();
    out.hidden.dedup();
    out.read_only.sort();
    out.read_only.dedup();
    out
}

/// The canonical form of an existing path; `None` when it does not exist.
fn real(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok()
}

/// Walks `root` (not following links, not entering `SKIPPED`), noting what must stay
/// read-only and the state files; `false` when it gave up after `MAX_WALK` entries.
fn walk(root: &Path, read_only: &mut Vec<PathBuf>, states: &mut Vec<PathBuf>) -> bool {
    let mut pending = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_WALK {
                return false;
            }
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = entry.file_type() else { continue };
            if PROTECTED.contains(&name.as_ref()) {
                read_only.push(path.clone());
            }
            if kind.is_file() && is_state_file(&path) {
                states.push(path.clone());
            }
            if name == ".terraform" && kind.is_dir() {
                let backend = path.join("terraform.tfstate");
                if backend.is_file() {
                    states.push(backend);
                }
            }
            if kind.is_dir() && !SKIPPED.contains(&name.as_ref()) {
                pending.push(path);
            }
        }
    }
    true
}

/// Makes the private temporary directory of one run (mode 0700, a fresh name).
pub(super) fn private_tmp() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    let dir = base.join(format!("iac-code-sandbox-{}", uuid::Uuid::new_v4().simple()));
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    std::fs::canonicalize(&dir)
}
