//! The process tree of one bash call. The shell starts in a new process group with a
//! marker in its environment; killing the tree signals the group and then every process
//! that still carries the marker (which catches children that left the group with
//! `setsid`, double forks and `nohup`), and waits until they are gone.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::sys;

/// The environment variable that marks every process a bash call starts.
pub(super) const MARKER_VAR: &str = "IAC_CODE_TOOL_RUN";

/// How long `kill` waits for the tree to disappear.
const KILL_WAIT: Duration = Duration::from_secs(2);

/// One call's processes.
pub(super) struct Tree {
    /// The shell's pid, which is also the group id.
    pub pgid: u32,
    /// The marker value (unique per call).
    pub marker: String,
}

impl Tree {
    /// Kills every process of the tree with SIGKILL and waits (bounded) until none is
    /// left running. Returns how many processes were signalled.
    pub fn kill(&self) -> usize {
        let _ = sys::kill_group(self.pgid, sys::SIGKILL);
        let deadline = Instant::now() + KILL_WAIT;
        let mut signalled = std::collections::HashSet::new();
        loop {
            let alive = self.members();
            if alive.is_empty() {
                return signalled.len().max(1);
            }
            for pid in alive {
                if signalled.insert(pid) || Instant::now() + KILL_WAIT / 2 > deadline {
                    let _ = sys::kill_process(pid, sys::SIGKILL);
                }
            }
            if Instant::now() >= deadline {
                log::warn!("bash: processes of group {} survived SIGKILL", self.pgid);
                return signalled.len();
            }
            // A killed process needs a scheduler tick to die; this loop runs only on
            // cancel or timeout.
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Live (non-zombie) processes in the group or carrying the marker.
    pub fn members(&self) -> Vec<u32> {
        let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
        let needle = format!("{MARKER_VAR}={}", self.marker);
        let me = std::process::id();
        let mut found = Vec::new();
        for entry in dir.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if pid == me {
                continue;
            }
            let Some((state, pgid)) = stat_of(&entry.path()) else { continue };
            if state == 'Z' || state == 'X' {
                continue;
            }
            if pgid == self.pgid || environ_has(&entry.path(), &needle) {
                found.push(pid);
            }
        }
        found
    }
}

/// State and process group of `/proc/<pid>`.
fn stat_of(dir: &Path) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    // The command name is in parentheses and may itself contain spaces or ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgid = fields.next()?.parse().ok()?;
    Some((state, pgid))
}

fn environ_has(dir: &Path, needle: &str) -> bool {
    match std::fs::read(dir.join("environ")) {
        Ok(bytes) => bytes.split(|b| *b == 0).any(|var| var == needle.as_bytes()),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_our_own_stat() {
        let me = Path::new("/proc/self");
        let (state, pgid) = stat_of(me).expect("stat");
        assert!(state == 'R' || state == 'S', "{state}");
        assert!(pgid > 0);
        assert!(!environ_has(me, "IAC_CODE_TOOL_RUN=nothing-has-this"));
    }
}
