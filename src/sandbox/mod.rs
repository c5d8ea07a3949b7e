//! The OS sandbox: the second line of defence behind the permission gate. Every command
//! that runs without a person's yes to that very command runs inside it; the gate decides
//! which `Profile` (`gate::pass`), this room builds and enters it.
//!
//! A sandboxed command runs under its supervisor (`child::supervisor`), which before
//! starting it moves itself into new user, mount, IPC and process namespaces (and a
//! network namespace with only a loopback interface, unless the profile grants the
//! network), then lays out the files (`mounts.rs`): everything read-only (a sealed
//! command's `/tmp` emptied), the workspace roots and a private temporary directory writable, inside them terraform state, `.git`,
//! `.iac-code`, `.mcp.json`, `.agents` and what an approval covers read-only again, the
//! credential stores and our configuration directory replaced by empty ones. The program's
//! own process then gets a `/proc` of its process namespace, loses every capability (even
//! as root), and is confined by Landlock (writes only below the writable roots, where the
//! kernel has it) and seccomp (no mount, no new user namespace, no keyrings) before the
//! exec (`confine.rs`). Its environment loses the credential variables (`env.rs`). When
//! the program ends, the kernel kills whatever it left in its process namespace.
//!
//! `child::sandbox()` says, once per process, whether the kernel lets us build it (a
//! process of its own tries, with `probe_flags`); where it does not (or
//! `IAC_CODE_SANDBOX=off`), the gate asks instead of relying on it.
//! Invariant: nothing here decides whether a command may run; it only confines what runs.

mod confine;
mod env;
mod mounts;
mod paths;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use env::is_credential_var;
pub use paths::{credential_stores, is_state_file, protected_names};

/// What a sandboxed command is given besides the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Profile {
    /// No network, no credentials, terraform state read-only: anything the gate could not
    /// judge whole, and every local command.
    Sealed,
    /// The network and the user's cloud credentials, for a known infrastructure client the
    /// gate judged whole, for the operation it was judged to be.
    Cloud(State),
}

/// What a `Cloud` command may do to the terraform state in the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// It writes a private copy (a plan takes its lock by opening the state read-write);
    /// the real state is unchanged when it ends.
    Scratch,
    /// It writes the real state (an apply the mode or a rule lets run unasked).
    Write,
}

/// How one command runs, as the gate decided and as the client is told
/// (`_meta.iacCode.sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    /// Inside the sandbox.
    Confined(Profile),
    /// Outside it: a person allowed this very command, and the question said so.
    Approved,
    /// Outside it, because the sandbox cannot be built here (or is turned off): the gate
    /// let only what the parser understood whole as a local read run this way.
    Unavailable,
}

impl Run {
    /// The value of `_meta.iacCode.sandbox` for a tool call.
    pub fn meta(self) -> serde_json::Value {
        let (confined, network, credentials, state) = match self {
            Run::Confined(Profile::Sealed) => (true, false, false, "read-only"),
            Run::Confined(Profile::Cloud(State::Scratch)) => (true, true, true, "scratch-copy"),
            Run::Confined(Profile::Cloud(State::Write)) => (true, true, true, "writable"),
            Run::Approved | Run::Unavailable => (false, true, true, "writable"),
        };
        let why = match self {
            Run::Confined(_) => None,
            Run::Approved => Some("approved"),
            Run::Unavailable => Some("unavailable"),
        };
        let mut meta = serde_json::json!({
            "confined": confined,
            "network": network,
            "credentials": credentials,
            "state": state,
        });
        if let Some(why) = why {
            meta["why"] = why.into();
        }
        meta
    }

    /// How the run is described in words, for the question and the log.
    pub fn words(self) -> &'static str {
        match self {
            Run::Confined(Profile::Sealed) => {
                "in the sandbox: no network, no credentials, writes only in the workspace"
            }
            Run::Confined(Profile::Cloud(State::Scratch)) => {
                "in the sandbox with network and your cloud credentials; terraform state \
                 is a throw-away copy"
            }
            Run::Confined(Profile::Cloud(State::Write)) => {
                "in the sandbox with network, your cloud credentials and write access to \
                 terraform state"
            }
            Run::Approved | Run::Unavailable => {
                "outside the sandbox: with network, your cloud credentials and all your files"
            }
        }
    }
}

/// Where a command's sandbox is laid out: the session's directories and what the session
/// protects besides the fixed names.
#[derive(Debug, Clone, Copy)]
pub struct Roots<'a> {
    /// The session's working directory.
    pub cwd: &'a Path,
    /// Its additional directories.
    pub extra: &'a [PathBuf],
    /// Our configuration directory (it holds the API key): never visible inside.
    pub config_dir: &'a Path,
    /// What an approval covers (hook scripts and their directories, skill folders, what
    /// `.mcp.json` starts): read-only inside.
    pub approved: &'a [PathBuf],
    /// A file of ours the command must read although its directory is hidden: the saved
    /// plan a prepared apply applies (in our configuration directory).
    pub reveal: Option<&'a Path>,
}

/// The sandbox of one command, as the server laid it out for its supervisor: every path
/// absolute. Sent over the supervisor's control socket as JSON.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Spec {
    /// Keep the host's network (no network namespace).
    pub network: bool,
    /// Directories writable inside (the workspace roots).
    pub writable: Vec<PathBuf>,
    /// The private temporary directory (writable, `TMPDIR`); removed when the run ends.
    pub tmp: PathBuf,
    /// Paths inside the writable roots that stay read-only.
    pub read_only: Vec<PathBuf>,
    /// Paths replaced by empty ones (directories) or by `/dev/null` (files).
    pub hidden: Vec<PathBuf>,
    /// Files below a hidden directory that stay visible, read-only.
    pub reveal: Vec<PathBuf>,
    /// State files given a private writable copy: (the state, its copy in `tmp`).
    pub scratch: Vec<(PathBuf, PathBuf)>,
    /// The workspace was too large to search for what to protect: it is read-only whole.
    pub whole_read_only: bool,
    /// Variables removed from the command's environment.
    pub unset: Vec<String>,
    /// Protected names missing at the top of a writable root when the run was laid out: a
    /// read-only bind can only cover what exists, so what the command creates there is
    /// removed after it (`undo_created`).
    pub absent: Vec<PathBuf>,
    /// The test switch (`IAC_CODE_SANDBOX_TEST_FAIL`): setting the sandbox up fails.
    pub fail: bool,
}

impl Spec {
    /// Lays out the sandbox of `profile` for a command of the session at `roots`, with the
    /// environment `env` (HOME, the variables naming credential files). Makes its private
    /// temporary directory (and the copies of state a `Scratch` profile writes).
    pub fn build(
        profile: Profile,
        roots: &Roots,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> std::io::Result<Spec> {
        let tmp = paths::private_tmp()?;
        let mut spec = Spec { tmp, fail: test_failure(), ..Spec::default() };
        let layout = paths::layout(profile, roots, env);
        spec.writable = layout.writable;
        spec.read_only = layout.read_only;
        spec.hidden = layout.hidden;
        spec.reveal = roots.reveal.map(Path::to_path_buf).into_iter().collect();
        spec.whole_read_only = layout.too_large;
        spec.absent = layout.absent;
        if let Profile::Cloud(State::Scratch) = profile {
            for (i, state) in layout.states.iter().enumerate() {
                let copy = spec.tmp.join(format!("state-{i}"));
                std::fs::copy(state, &copy)?;
                spec.scratch.push((state.clone(), copy));
            }
        }
        spec.network = matches!(profile, Profile::Cloud(_));
        spec.unset = env::removed(profile);
        Ok(spec)
    }

    /// After the run (every process of it gone): removes the protected names it created
    /// where there were none (`.git`, `.iac-code`, `.mcp.json`, `.agents` at the top of a
    /// writable root) and returns them. They did not exist before, so nothing on disk is
    /// lost; a link is removed, never followed.
    pub fn undo_created(&self) -> Vec<PathBuf> {
        let mut removed = Vec::new();
        for path in &self.absent {
            let Ok(meta) = path.symlink_metadata() else { continue };
            let gone = match meta.is_dir() {
                true => std::fs::remove_dir_all(path),
                false => std::fs::remove_file(path),
            };
            match gone {
                Ok(()) => removed.push(path.clone()),
                Err(err) => log::warn!("sandbox: cannot remove {}: {err}", path.display()),
            }
        }
        removed
    }

    /// Removes the private temporary directory (after the run).
    pub fn clean(&self) {
        if self.tmp.as_os_str().is_empty() {
            return;
        }
        if let Err(err) = std::fs::remove_dir_all(&self.tmp)
            && err.kind() != std::io::ErrorKind::NotFound
        {
            log::debug!("sandbox: cannot remove {}: {err}", self.tmp.display());
        }
    }
}

/// Enters the sandbox `spec` describes: called by the supervisor, single-threaded, before
/// it starts the program; what the program's own process must do before its exec is set
/// on `program`.
pub fn enter(spec: &Spec, program: &mut std::process::Command) -> std::io::Result<()> {
    if spec.fail {
        return Err(std::io::Error::other("the sandbox test switch is on"));
    }
    mounts::enter(spec)?;
    for name in &spec.unset {
        program.env_remove(name);
    }
    program.env("TMPDIR", &spec.tmp);
    confine::before_exec(spec, program)
}

/// Which layers of the sandbox this host offers, found once per process.
#[derive(Debug, Clone)]
pub struct Status {
    /// The namespaces could be made; else why not.
    pub namespaces: Result<(), String>,
    /// The kernel's Landlock ABI version (0: none).
    pub landlock: i32,
    /// `IAC_CODE_SANDBOX=off`: a person turned it off.
    pub off: bool,
}

impl Status {
    /// Whether commands can be confined: the namespaces work and nobody turned it off.
    pub fn usable(&self) -> bool {
        !self.off && self.namespaces.is_ok()
    }

    /// Why commands cannot be confined, in words; `None` when they can.
    pub fn why_not(&self) -> Option<String> {
        if self.off {
            return Some("the sandbox is turned off (IAC_CODE_SANDBOX=off)".to_string());
        }
        self.namespaces
            .as_ref()
            .err()
            .map(|why| format!("this host does not let us build the sandbox ({why})"))
    }

    /// For `initialize`'s `_meta` and `doctor`.
    pub fn meta(&self) -> serde_json::Value {
        serde_json::json!({
            "usable": self.usable(),
            "off": self.off,
            "namespaces": self.namespaces.is_ok(),
            "landlock": self.landlock > 0 && self.usable(),
            "landlockAbi": self.landlock,
            "seccomp": self.usable(),
            "reason": self.why_not(),
        })
    }
}

impl Status {
    /// What this host offers, given what the probe of the namespaces found (a process of
    /// its own tries them: `child::sandbox`, which keeps the answer for the process).
    pub fn new(namespaces: Result<(), String>) -> Status {
        let off = std::env::var("IAC_CODE_SANDBOX").is_ok_and(|v| v.eq_ignore_ascii_case("off"));
        if off {
            log::warn!(
                "IAC_CODE_SANDBOX=off: commands are not confined; every command the sandbox \
                 would have held is asked instead"
            );
        }
        if let Err(why) = &namespaces {
            log::warn!("sandbox unavailable: {why}; commands it would hold are asked instead");
        }
        Status { namespaces, landlock: crate::sys::sandbox::landlock_abi(), off }
    }
}

/// Whether the test switch that makes setting the sandbox up fail is on.
fn test_failure() -> bool {
    std::env::var_os("IAC_CODE_SANDBOX_TEST_FAIL").is_some_and(|v| !v.is_empty() && v != "0")
}

/// The namespaces a sealed command needs, as the probe's process must make them (with
/// the test switch on, a flag unshare(2) refuses: the kernel's own refusal, as on a host
/// without them).
pub fn probe_flags() -> i32 {
    use crate::sys::sandbox as raw;
    let flags = raw::NEW_USER | raw::NEW_MOUNTS | raw::NEW_NETWORK | raw::NEW_PIDS | raw::NEW_IPC;
    // A flag the probe's clone(2) refuses with EINVAL.
    if test_failure() { flags | raw::REFUSED } else { flags }
}

#[cfg(test)]
mod tests;
