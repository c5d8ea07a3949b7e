//! A supervisor process per tool command. The server runs `iac-code __supervise PROGRAM
//! ARGS…` (its own executable); the supervisor makes itself a child subreaper, starts the
//! program, and stays until told to go. Every process the command starts remains its
//! descendant, however it daemonises (`setsid`, double forks, `nohup`, a cleared
//! environment): orphans are re-parented to the supervisor, never to init. So the call's
//! processes are exactly the supervisor's descendants, to list or to kill.
//!
//! The control channel is a socket on the supervisor's stdin, one line per message:
//! supervisor → server `pid N` (the program started), `exit code N` / `exit signal N`,
//! `proc PID COMMAND` lines closed by `end` (answering `list`); server → supervisor `list`,
//! `kill`. `kill`, or the socket closing (the server exited, however it died), makes the
//! supervisor kill every descendant, reap them, and exit. Started with `--stdin` before
//! the program, it first reads `stdin N` and N bytes, which it feeds to the program's
//! stdin (a hook's JSON document); otherwise the program's stdin is closed.

mod process;

use std::io::{BufRead, BufReader, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdout, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};

pub use process::run;

use crate::sync::lock;
use crate::sys::Ended;

/// The hidden first argument that runs the supervisor.
pub const ARG: &str = "__supervise";

/// How long killing a call's processes may take before we give up waiting.
const KILL_WAIT: Duration = Duration::from_secs(3);

/// The supervisor's argument (before the program) that says the program's stdin comes
/// over the control socket: a line `stdin N`, then N bytes.
const STDIN_FLAG: &str = "--stdin";
/// The supervisor's first argument when the program runs in a sandbox: a line `sandbox N`
/// and N bytes of its JSON description (`sandbox::Spec`) come first on the control socket.
const SANDBOX_FLAG: &str = "--sandbox";
/// The largest input a program can be given on its stdin.
pub const MAX_INPUT: usize = 64 << 20;

/// What the supervisor reports.
#[derive(Debug)]
enum Report {
    Started(u32),
    Procs(Vec<LeftRunning>),
    Failed(String),
}

/// A process a call left running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftRunning {
    pub pid: u32,
    /// Its command line (shortened).
    pub command: String,
}

/// A running command under its supervisor.
pub struct Supervised {
    child: Option<Child>,
    control: UnixStream,
    reports: Receiver<Report>,
    exit: Receiver<Ended>,
    /// The pid of the program (the shell), which leads its own process group.
    pub pid: u32,
}

/// The pipes of the supervised program.
pub struct Pipes {
    /// Its standard output.
    pub stdout: ChildStdout,
    /// Its standard error.
    pub stderr: ChildStderr,
}

impl Supervised {
    /// Starts `program args…` in `cwd` with `env` added to the secret-free environment,
    /// stdin closed, in its own process group, under a supervisor.
    pub fn spawn(
        program: &str,
        args: &[&str],
        cwd: &Path,
        env: &[(&str, &str)],
    ) -> std::io::Result<(Supervised, Pipes)> {
        Supervised::start(program, args, cwd, env, None, None)
    }

    /// Like [`Supervised::spawn`], inside the sandbox `sandbox` (entered by the supervisor
    /// before the program starts; a sandbox that cannot be set up is an error, and nothing
    /// runs).
    pub fn spawn_sandboxed(
        program: &str,
        args: &[&str],
        cwd: &Path,
        env: &[(&str, &str)],
        sandbox: &crate::sandbox::Spec,
    ) -> std::io::Result<(Supervised, Pipes)> {
        Supervised::start(program, args, cwd, env, None, Some(sandbox))
    }

    /// Like [`Supervised::spawn`], with `input` (at most `MAX_INPUT` bytes) on the
    /// program's stdin, which then ends: sent over the control socket before the program
    /// starts, and fed to it by the supervisor.
    pub fn spawn_with_input(
        program: &str,
        args: &[&str],
        cwd: &Path,
        env: &[(&str, &str)],
        input: &[u8],
    ) -> std::io::Result<(Supervised, Pipes)> {
        Supervised::start(program, args, cwd, env, Some(input), None)
    }

    fn start(
        program: &str,
        args: &[&str],
        cwd: &Path,
        env: &[(&str, &str)],
        input: Option<&[u8]>,
        sandbox: Option<&crate::sandbox::Spec>,
    ) -> std::io::Result<(Supervised, Pipes)> {
        if input.is_some_and(|bytes| bytes.len() > MAX_INPUT) {
            return Err(std::io::Error::other(format!("an input over {MAX_INPUT} bytes")));
        }
        let (ours, theirs) = UnixStream::pair()?;
        let mut command = super::command("/proc/self/exe");
        command.arg0("iac-code").arg(ARG);
        if sandbox.is_some() {
            command.arg(SANDBOX_FLAG);
        }
        if input.is_some() {
            command.arg(STDIN_FLAG);
        }
        command
            .arg(program)
            .args(args)
            .current_dir(cwd)
            .envs(env.iter().copied())
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = super::spawn(&mut command)?;
        let pipes = match (child.stdout.take(), child.stderr.take()) {
            (Some(stdout), Some(stderr)) => Pipes { stdout, stderr },
            _ => return Err(std::io::Error::other("the supervisor has no output pipes")),
        };
        let (tx, reports) = crossbeam_channel::unbounded();
        let (exit_tx, exit) = crossbeam_channel::bounded(1);
        let reader = BufReader::new(ours.try_clone()?);
        std::thread::Builder::new().name("supervised".into()).spawn(move || {
            let mut procs = Vec::new();
            for line in reader.lines() {
                let Ok(line) = line else { return };
                if let Some(ended) = parse_exit(&line) {
                    let _ = exit_tx.try_send(ended);
                } else if let Some(report) = parse(&line, &mut procs)
                    && tx.send(report).is_err()
                {
                    return;
                }
            }
        })?;
        let mut supervised =
            Supervised { child: Some(child), control: ours, reports, exit, pid: 0 };
        if let Some(spec) = sandbox {
            let json = serde_json::to_vec(spec).map_err(std::io::Error::other)?;
            supervised.control.set_write_timeout(Some(KILL_WAIT))?;
            (&supervised.control).write_all(format!("sandbox {}\n", json.len()).as_bytes())?;
            (&supervised.control).write_all(&json)?;
            supervised.control.set_write_timeout(None)?;
        }
        if let Some(bytes) = input {
            // Read whole before the program starts; a supervisor gone fails the write.
            supervised.control.set_write_timeout(Some(KILL_WAIT))?;
            (&supervised.control).write_all(format!("stdin {}\n", bytes.len()).as_bytes())?;
            (&supervised.control).write_all(bytes)?;
            supervised.control.set_write_timeout(None)?;
        }
        match supervised.reports.recv_timeout(KILL_WAIT) {
            Ok(Report::Started(pid)) => supervised.pid = pid,
            Ok(Report::Failed(why)) => return Err(std::io::Error::other(why)),
            Ok(other) => return Err(std::io::Error::other(format!("supervisor said {other:?}"))),
            Err(_) => return Err(std::io::Error::other("the supervisor did not start")),
        }
        Ok((supervised, pipes))
    }

    /// Yields the program's end once (then disconnects with the supervisor).
    pub fn exit(&self) -> Receiver<Ended> {
        self.exit.clone()
    }

    /// The processes still running under the supervisor (the program's descendants),
    /// asked after the program ended.
    pub fn left_running(&self) -> Vec<LeftRunning> {
        if (&self.control).write_all(b"list\n").is_err() {
            return Vec::new();
        }
        let deadline = Instant::now() + KILL_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.reports.recv_timeout(left) {
                Ok(Report::Procs(procs)) => return procs,
                Ok(_) => continue,
                Err(_) => return Vec::new(),
            }
        }
    }

    /// Kills every process of the call and waits (bounded) until they are gone. `false`
    /// when the supervisor did not confirm it (it was gone, or stuck). Later calls do
    /// nothing and return `true`.
    pub fn kill(&mut self) -> bool {
        if self.child.is_some() { self.stop() } else { true }
    }

    fn stop(&mut self) -> bool {
        let _ = (&self.control).write_all(b"kill\n");
        let _ = self.control.shutdown(std::net::Shutdown::Write);
        // The supervisor closes its end once everything is dead and it exits.
        let deadline = Instant::now() + KILL_WAIT;
        let finished = loop {
            match self.reports.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(_) => continue,
                Err(RecvTimeoutError::Disconnected) => break true,
                Err(RecvTimeoutError::Timeout) => break false,
            }
        };
        let confirmed = finished && self.exited_cleanly();
        if let Some(mut child) = self.child.take() {
            if !finished {
                // Stuck: end it; what it still held comes to us (a subreaper) and is reaped.
                log::warn!("the supervisor of pid {} did not finish in time; killed", self.pid);
                let _ = child.kill();
            }
            let _ = child.wait();
            super::forget(child.id());
        }
        confirmed
    }

    /// Whether the supervisor is still running or exited by itself (not killed by someone):
    /// then it killed the tree as told.
    fn exited_cleanly(&mut self) -> bool {
        match self.child.as_mut().map(|c| c.try_wait()) {
            Some(Ok(Some(status))) => status.success(),
            Some(Ok(None)) => true,
            _ => false,
        }
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        if self.child.is_some() {
            let _ = self.stop();
        }
    }
}

fn parse_exit(line: &str) -> Option<Ended> {
    let rest = line.strip_prefix("exit ")?;
    let (how, value) = rest.split_once(' ')?;
    let value: i32 = value.trim().parse().ok()?;
    Some(if how == "signal" { Ended::Signal(value) } else { Ended::Code(value) })
}

fn parse(line: &str, procs: &mut Vec<LeftRunning>) -> Option<Report> {
    let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
    match word {
        "pid" => rest.trim().parse().ok().map(Report::Started),
        "proc" => {
            let (pid, command) = rest.split_once(' ').unwrap_or((rest, ""));
            procs.push(LeftRunning { pid: pid.parse().ok()?, command: command.to_string() });
            None
        }
        "end" => Some(Report::Procs(std::mem::take(procs))),
        "error" => Some(Report::Failed(rest.to_string())),
        _ => None,
    }
}

/// Processes a session's calls left running; killed when the session (or the server)
/// ends.
#[derive(Default)]
pub struct Jobs {
    kept: Mutex<Vec<Supervised>>,
}

impl Jobs {
    /// Keeps `supervised` (whose program ended, leaving processes behind) until the end.
    pub fn keep(&self, supervised: Supervised) {
        lock(&self.kept).push(supervised);
    }

    /// Kills every kept process tree and waits (bounded) until they are gone.
    pub fn stop_all(&self) {
        let kept = std::mem::take(&mut *lock(&self.kept));
        // Tell every supervisor first, then wait: the trees die in parallel.
        for supervised in &kept {
            let _ = (&supervised.control).write_all(b"kill\n");
        }
        drop(kept);
    }
}

impl Drop for Jobs {
    fn drop(&mut self) {
        self.stop_all();
    }
}
