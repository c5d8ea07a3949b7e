//! Every process this crate starts goes through here: `command` builds it with an
//! environment that holds none of our secrets (provider keys, the HTTP token, every
//! `IAC_CODE_*`/`IACCODE_*` setting but the tool-run marker), and `spawn` starts it as a
//! child the reaper knows. The server is a child subreaper, so a descendant that
//! daemonises comes back to us instead of to init; the reaper thread reaps the ones that
//! nobody else waits for, so none stays a zombie. A tidy test checks that no other module
//! calls `Command::new`.

pub mod supervisor;

use std::collections::HashSet;
use std::ffi::OsStr;
use std::process::{Child, Command};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub use supervisor::{Jobs, Supervised};

use crate::sync::lock;
use crate::sys;

/// Provider key variables that other tools also read (never ours to pass on).
const PROVIDER_KEYS: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "DEEPSEEK_API_KEY",
    "DASHSCOPE_API_KEY",
    "OPENROUTER_API_KEY",
];

/// Our variables a child may see: the marker that finds a call's processes.
const KEPT: &[&str] = &["IAC_CODE_TOOL_RUN"];

/// Whether a child must not see the variable `name`.
pub fn is_secret(name: &str) -> bool {
    let ours = name.starts_with("IAC_CODE_") || name.starts_with("IACCODE_");
    (ours && !KEPT.contains(&name)) || PROVIDER_KEYS.contains(&name)
}

/// A command for `program` whose environment is ours minus every secret (`is_secret`).
/// The one way this crate builds a process.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut command = Command::new(program);
    for (name, _) in std::env::vars_os() {
        // And the start-up files a non-interactive shell would read before the command.
        if name.to_str().is_some_and(|n| is_secret(n) || matches!(n, "BASH_ENV" | "ENV")) {
            command.env_remove(&name);
        }
    }
    command
}

/// Pids of children that their owner waits for; the reaper leaves them alone.
fn owned() -> &'static Mutex<HashSet<u32>> {
    static OWNED: OnceLock<Mutex<HashSet<u32>>> = OnceLock::new();
    OWNED.get_or_init(Mutex::default)
}

/// Starts `command` as a child whose owner will wait for it (then call `forget`).
pub fn spawn(command: &mut Command) -> std::io::Result<Child> {
    start_reaper();
    // Held across the spawn: the reaper cannot see the new pid before it is recorded.
    let mut owned = lock(owned());
    let child = command.spawn()?;
    owned.insert(child.id());
    Ok(child)
}

/// Which layers of the OS sandbox this host offers, found once per process: a short-lived
/// child is made in the namespaces a sealed command needs (`sandbox::probe_flags`) and
/// exits at once. A bare `clone(2)` rather than a `Command`: `initialize` asks for this,
/// and spawning a program would bring the whole of `Command`'s code into start-up.
pub fn sandbox() -> &'static crate::sandbox::Status {
    static STATUS: OnceLock<crate::sandbox::Status> = OnceLock::new();
    STATUS.get_or_init(|| crate::sandbox::Status::new(probe_sandbox()))
}

fn probe_sandbox() -> Result<(), String> {
    let pid = {
        // Held across the clone: the reaper (if one runs) cannot take the probe.
        let mut owned = lock(owned());
        let pid = sys::sandbox::clone_and_exit(crate::sandbox::probe_flags())
            .map_err(|err| err.to_string())?;
        owned.insert(pid);
        pid
    };
    let ended = sys::sandbox::wait_ok(pid);
    forget(pid);
    ended.map_err(|err| err.to_string())
}

/// Runs `command` to its end, keeping the reaper (if one runs) off it. Starts no reaper
/// itself: a short probe, which may run in a process that is not ours (a test, a library
/// user) where nobody must reap children behind their owners' backs.
pub fn run_to_end(command: &mut Command) -> std::io::Result<std::process::ExitStatus> {
    let mut child = {
        let mut owned = lock(owned());
        let child = command.spawn()?;
        owned.insert(child.id());
        child
    };
    let status = child.wait();
    forget(child.id());
    status
}

/// The owner of `pid` has waited for it (or gave up): the reaper may reap it from now on.
pub fn forget(pid: u32) {
    lock(owned()).remove(&pid);
}

/// Makes this process a child subreaper and blocks SIGCHLD for the thread that reaps the
/// descendants re-parented to it. Call once, early, before other threads start (they all
/// inherit the blocked SIGCHLD, so that only the reaper receives it). The reaper itself
/// starts with the first child (`spawn`): until then nobody can be adopted, and start-up
/// does not pay for a thread it does not need.
pub fn init() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        sys::default_sigchld();
        if let Err(err) = sys::set_child_subreaper() {
            log::warn!("cannot become a child subreaper: {err}");
        }
        if let Err(err) = sys::block_signals(&[sys::SIGCHLD]) {
            log::warn!("cannot block SIGCHLD: {err}");
        }
    });
}

/// Starts the reaper thread, once. It begins with the termination signals blocked too
/// (they belong to the main thread or its signal thread), whatever thread starts it.
fn start_reaper() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        let spawned = sys::with_signals_blocked(&sys::TERMINATION_SIGNALS, || {
            std::thread::Builder::new().name("sigchld".into()).spawn(reap_forever)
        });
        match spawned {
            Ok(Ok(_)) => {}
            Ok(Err(err)) => log::warn!("cannot start the reaper: {err}"),
            Err(err) => log::warn!("cannot start the reaper: {err}"),
        }
    });
}

fn reap_forever() {
    loop {
        if sys::wait_signal(&[sys::SIGCHLD]).is_err() {
            return;
        }
        reap_adopted();
    }
}

/// Kills every process still descended from this one and waits (bounded) until none is
/// left: what dead supervisors left behind, adopted by us. Called when the server or a
/// one-shot run ends (live supervisors have been told to stop by then).
pub fn kill_descendants() {
    let deadline = Instant::now() + KILL_WAIT;
    let me = std::process::id();
    loop {
        let procs = process_table();
        let mut left = with_descendants(vec![me], &procs);
        left.remove(0);
        left.retain(|pid| procs.iter().any(|p| p.pid == *pid && p.live));
        if left.is_empty() {
            return;
        }
        if Instant::now() >= deadline {
            log::warn!("{} process(es) survived the shutdown kill", left.len());
            return;
        }
        for pid in left {
            let _ = sys::kill_process(pid, sys::SIGKILL);
        }
        // A killed process needs a scheduler tick to die; this runs once, at exit.
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// How long `kill_descendants` waits at most.
const KILL_WAIT: Duration = Duration::from_secs(2);

/// Reaps every ended child that no owner waits for.
fn reap_adopted() {
    let owned = lock(owned());
    for pid in children() {
        if !owned.contains(&pid) {
            match sys::reap(pid) {
                Ok(Some((pid, ended))) => log::debug!("reaped adopted process {pid}: {ended:?}"),
                Ok(None) => {}
                Err(err) => log::debug!("cannot reap {pid}: {err}"),
            }
        }
    }
}

/// Our children, from `/proc/self/task/*/children`, or from the whole process table on
/// kernels built without those files.
fn children() -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return Vec::new() };
    let mut pids = Vec::new();
    let mut listed = false;
    for task in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            listed = true;
            pids.extend(text.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
        }
    }
    if !listed {
        let me = std::process::id();
        pids = process_table().iter().filter(|p| p.ppid == me).map(|p| p.pid).collect();
    }
    pids
}

/// What /proc says about one process.
#[derive(Debug, Clone, Copy)]
pub struct Proc {
    pub pid: u32,
    /// Its parent's pid.
    pub ppid: u32,
    /// Its process group.
    pub pgid: u32,
    /// Whether it runs (not a zombie).
    pub live: bool,
}

/// `roots` and every descendant of theirs in `procs`, roots first.
pub fn with_descendants(mut roots: Vec<u32>, procs: &[Proc]) -> Vec<u32> {
    let mut i = 0;
    while i < roots.len() {
        let parent = roots[i];
        for p in procs {
            if p.ppid == parent && !roots.contains(&p.pid) {
                roots.push(p.pid);
            }
        }
        i += 1;
    }
    roots
}

/// Every process but this one, zombies included (marked).
pub fn process_table() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    let me = std::process::id();
    dir.flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let (state, ppid, pgid) = stat_of(&entry.path())?;
            let live = state != 'Z' && state != 'X';
            (pid != me).then_some(Proc { pid, ppid, pgid, live })
        })
        .collect()
}

/// State, parent and process group of `/proc/<pid>`.
pub(crate) fn stat_of(dir: &std::path::Path) -> Option<(char, u32, u32)> {
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    // The command name is in parentheses and may itself contain spaces or ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    Some((state, ppid, pgid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_named() {
        for secret in [
            "IAC_CODE_API_KEY",
            "IACCODE_API_KEY",
            "IACCODE_ACP_HTTP_TOKEN",
            "IAC_CODE_BASE_URL",
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
        ] {
            assert!(is_secret(secret), "{secret}");
        }
        for kept in ["IAC_CODE_TOOL_RUN", "PATH", "HOME", "AWS_PROFILE", "TF_VAR_region"] {
            assert!(!is_secret(kept), "{kept}");
        }
    }

    #[test]
    fn reads_our_parent_from_proc() {
        let me = std::path::Path::new("/proc/self");
        let (state, ppid, pgid) = stat_of(me).expect("stat");
        assert!(state == 'R' || state == 'S', "{state}");
        assert!(pgid > 0 && ppid > 0);
    }
}
