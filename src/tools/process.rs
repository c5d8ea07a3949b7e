//! The process tree of one bash call. The shell starts in a new process group with a
//! marker in its environment; killing the tree signals the group, every descendant of the
//! shell, and every process that still carries the marker (which catches children that
//! left the group with `setsid`, double forks and `nohup`), and waits until they are gone.
//! Only a process that leaves the group, loses its parent and clears its environment
//! escapes; catching that needs a cgroup.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::{child, sys};

/// The environment variable that marks every process a bash call starts.
pub(super) const MARKER_VAR: &str = "IAC_CODE_TOOL_RUN";

/// What a bash call's command sees added to its environment, run here or in the client's
/// terminal: the marker, and no pager or prompt waiting for a user who is not there.
pub(super) fn command_env(marker: &str) -> [(&'static str, &str); 5] {
    [
        (MARKER_VAR, marker),
        ("PAGER", "cat"),
        ("GIT_PAGER", "cat"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("TF_INPUT", "0"),
    ]
}

/// The shell a command runs in: bash, whose syntax the gate's parser reads (`shell/`), so
/// what is judged is what runs; `/bin/sh` only on a host without bash, where the gate then
/// trusts no bash-only syntax (`gate::judge`). Found once.
pub fn shell() -> &'static str {
    static SHELL: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    SHELL.get_or_init(|| {
        ["/bin/bash", "/usr/bin/bash"]
            .into_iter()
            .find(|p| std::path::Path::new(p).is_file())
            .unwrap_or("/bin/sh")
    })
}

/// Whether commands run in bash.
pub fn is_bash() -> bool {
    shell().ends_with("/bash")
}

/// The arguments that make [`shell`] run `command`: no start-up file is read.
pub fn shell_args(command: &str) -> Vec<&str> {
    if is_bash() { vec!["--noprofile", "--norc", "-c", command] } else { vec!["-c", command] }
}

/// How long `kill` waits for the tree to disappear.
const KILL_WAIT: Duration = Duration::from_secs(2);

/// One call's processes.
pub(super) struct Tree {
    /// The shell's pid, which is also the group id.
    pub pgid: u32,
    /// The marker value (unique per call).
    pub marker: String,
    /// `pipe:[inode]` of the call's stdout and stderr pipes.
    pub pipes: Vec<String>,
}

impl Tree {
    /// Kills every process of the tree with SIGKILL and waits (bounded) until none is
    /// left running. The tree is read before anything is signalled, so children do not
    /// get lost when their parents die first. Returns how many processes were signalled.
    pub fn kill(&self) -> usize {
        let mut known: HashSet<u32> = self.members().into_iter().collect();
        let _ = sys::kill_group(self.pgid, sys::SIGKILL);
        for pid in &known {
            let _ = sys::kill_process(*pid, sys::SIGKILL);
        }
        let deadline = Instant::now() + KILL_WAIT;
        loop {
            let live: HashSet<u32> = live_processes().iter().map(|p| p.pid).collect();
            let mut pending: Vec<u32> =
                known.iter().filter(|p| live.contains(p)).copied().collect();
            // Anything forked while the kill was under way.
            for pid in self.members() {
                if known.insert(pid) {
                    pending.push(pid);
                }
            }
            if pending.is_empty() {
                return known.len();
            }
            for pid in &pending {
                let _ = sys::kill_process(*pid, sys::SIGKILL);
            }
            if Instant::now() >= deadline {
                log::warn!(
                    "bash: {} process(es) of group {} survived SIGKILL",
                    pending.len(),
                    self.pgid
                );
                return known.len();
            }
            // A killed process needs a scheduler tick to die; this loop runs only on
            // cancel or timeout.
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Live (non-zombie) processes of the tree: in the group, descended from the shell,
    /// or carrying the marker.
    pub fn members(&self) -> Vec<u32> {
        let needle = format!("{MARKER_VAR}={}", self.marker);
        let procs = live_processes();
        let found: Vec<u32> = procs
            .iter()
            .filter(|p| p.pgid == self.pgid || p.pid == self.pgid || environ_has(p.pid, &needle))
            .map(|p| p.pid)
            .collect();
        // Descendants of anything found so far (children that moved to their own session).
        child::with_descendants(found, &procs)
    }

    /// Kills the processes that still hold the call's output pipes open (background
    /// processes after the shell exited). Returns how many there were.
    pub fn kill_pipe_holders(&self) -> usize {
        let me = std::process::id();
        let mut holders = Vec::new();
        for p in live_processes() {
            if p.pid == me {
                continue;
            }
            let Ok(fds) = std::fs::read_dir(format!("/proc/{}/fd", p.pid)) else { continue };
            let holds = fds.flatten().any(|fd| {
                std::fs::read_link(fd.path()).is_ok_and(|link| {
                    self.pipes.iter().any(|pipe| link.as_os_str() == pipe.as_str())
                })
            });
            if holds {
                holders.push(p.pid);
            }
        }
        for pid in &holders {
            let _ = sys::kill_process(*pid, sys::SIGKILL);
        }
        holders.len()
    }
}

/// The `pipe:[inode]` name of one of our descriptors.
pub(super) fn pipe_name(fd: &impl std::os::fd::AsRawFd) -> Option<String> {
    let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
    let name = link.to_string_lossy().into_owned();
    name.starts_with("pipe:").then_some(name)
}

/// Every live (non-zombie) process but this one.
fn live_processes() -> Vec<child::Proc> {
    child::process_table().into_iter().filter(|p| p.live).collect()
}

fn environ_has(pid: u32, needle: &str) -> bool {
    match std::fs::read(format!("/proc/{pid}/environ")) {
        Ok(bytes) => bytes.split(|b| *b == 0).any(|var| var == needle.as_bytes()),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_marker_is_not_found() {
        assert!(!environ_has(std::process::id(), "IAC_CODE_TOOL_RUN=nothing-has-this"));
    }
}
