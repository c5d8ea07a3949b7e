//! Running one hook: its command through `bash -c` (`sh -c` where there is no bash) under
//! the child supervisor, in the session cwd, with the secret-free environment and
//! `CLAUDE_PROJECT_DIR` (the project's root, which Claude Code's hook scripts read) and
//! `PYTHONDONTWRITEBYTECODE=1` (no bytecode caches beside what was approved), the JSON
//! document on stdin. It ends at its exit, its timeout or a cancel, and then the
//! supervisor kills every process it started: none outlives it. Its stdout and stderr are
//! read by one thread each and kept up to `CAPTURE` bytes.

use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, after, select};

use super::verdict::End;
use crate::cancel::CancelToken;
use crate::child::Supervised;
use crate::sys::Ended;

/// Bytes of a hook's stdout, and of its stderr, kept at most (the rest is read and
/// dropped, so the hook never blocks on a full pipe).
pub const CAPTURE: usize = 64 * 1024;
/// After the hook is killed, how long its output may take to drain.
const IO_DRAIN: Duration = Duration::from_secs(2);

/// One hook's run.
#[derive(Debug)]
pub struct Finished {
    pub end: End,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// From start to end.
    pub elapsed: Duration,
}

/// Runs `command` in `cwd` with `input` on its stdin, for at most `timeout`.
pub fn run(
    command: &str,
    cwd: &Path,
    input: &[u8],
    timeout: Duration,
    cancel: &CancelToken,
) -> Finished {
    let started = Instant::now();
    let failed = |why: String| Finished {
        end: End::Failed(why),
        stdout: Vec::new(),
        stderr: Vec::new(),
        elapsed: started.elapsed(),
    };
    let (shell, args) = shell(command);
    // Claude Code's scripts find the project by it: the repository's root.
    let root = crate::config::project::Project::of(cwd).root;
    let root_text = root.to_string_lossy();
    // No `__pycache__` written next to a hook's modules: everything under its scripts'
    // directories is what was approved (`config/hook_runs.rs`), and a new file there
    // would stop the hooks.
    let env = [("CLAUDE_PROJECT_DIR", root_text.as_ref()), ("PYTHONDONTWRITEBYTECODE", "1")];
    let (mut supervised, pipes) = match Supervised::spawn_with_input(shell, &args, cwd, &env, input)
    {
        Ok(started) => started,
        Err(err) => return failed(format!("{shell}: {err}")),
    };
    let (stdout, stderr) =
        match (reader(pipes.stdout, "hook-out"), reader(pipes.stderr, "hook-err")) {
            (Ok(out), Ok(err)) => (out, err),
            (Err(err), _) | (_, Err(err)) => {
                supervised.kill();
                return failed(format!("cannot start a pipe reader: {err}"));
            }
        };
    let exit = supervised.exit();
    let end = select! {
        recv(exit) -> ended => match ended {
            Ok(Ended::Code(code)) => End::Code(code),
            Ok(Ended::Signal(signal)) => End::Signal(signal),
            Err(_) => End::Failed("its supervisor went away".to_string()),
        },
        recv(cancel.channel()) -> _ => End::Cancelled,
        recv(after(timeout)) -> _ => End::TimedOut(timeout),
    };
    // Whatever the end: what the hook left running goes with it, and the pipes close.
    if !supervised.kill() {
        log::warn!("hook `{command}`: its processes could not all be confirmed killed");
    }
    let drain = Instant::now() + IO_DRAIN;
    let take = |rx: Receiver<Vec<u8>>| {
        rx.recv_timeout(drain.saturating_duration_since(Instant::now())).unwrap_or_default()
    };
    let (stdout, stderr) = (take(stdout), take(stderr));
    Finished { end, stdout, stderr, elapsed: started.elapsed() }
}

/// The shell and its arguments that run `command`, reading no start-up file.
fn shell(command: &str) -> (&'static str, Vec<&str>) {
    if Path::new("/bin/bash").is_file() {
        ("/bin/bash", vec!["--noprofile", "--norc", "-c", command])
    } else {
        ("/bin/sh", vec!["-c", command])
    }
}

/// A thread that reads `pipe` to its end, keeping the first `CAPTURE` bytes, and hands
/// them over once.
fn reader(mut pipe: impl Read + Send + 'static, name: &str) -> std::io::Result<Receiver<Vec<u8>>> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    std::thread::Builder::new().name(name.into()).spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = CAPTURE - kept.len();
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
        let _ = tx.send(kept);
    })?;
    Ok(rx)
}
