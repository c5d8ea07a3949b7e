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
//! supervisor kill every descendant, reap them, and exit.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdout, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};

use crate::sync::lock;
use crate::sys::{self, Ended};

/// The hidden first argument that runs the supervisor.
pub const ARG: &str = "__supervise";

/// How long killing a call's processes may take before we give up waiting.
const KILL_WAIT: Duration = Duration::from_secs(3);

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
        let (ours, theirs) = UnixStream::pair()?;
        let mut command = super::command("/proc/self/exe");
        command
            .arg0("iac-code")
            .arg(ARG)
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

// ---- the supervisor process itself ----

/// Runs the supervisor: `argv` is the program and its arguments. Returns the exit status.
pub fn run(argv: Vec<OsString>) -> i32 {
    sys::default_sigchld();
    let _ = sys::set_child_subreaper();
    let control = match std::io::stdin().as_fd().try_clone_to_owned() {
        Ok(fd) => UnixStream::from(fd),
        Err(_) => return 2,
    };
    let _ = sys::redirect_to_null(0);
    let writer = Arc::new(Mutex::new(match control.try_clone() {
        Ok(w) => w,
        Err(_) => return 2,
    }));
    let say = |line: String| {
        let _ = lock(&writer).write_all(line.as_bytes());
    };
    let Some((program, args)) = argv.split_first() else {
        say("error no program\n".into());
        return 2;
    };
    let spawned = super::command(program).args(args).stdin(Stdio::null()).process_group(0).spawn();
    // From here on the output pipes belong to the program alone.
    let _ = sys::redirect_to_null(1);
    let _ = sys::redirect_to_null(2);
    let child = match spawned {
        Ok(child) => child,
        Err(err) => {
            say(format!("error cannot start {}: {err}\n", program.to_string_lossy()));
            return 1;
        }
    };
    let program_pid = child.id();
    // Reaped below with waitpid(-1): std must not wait for it.
    drop(child);
    say(format!("pid {program_pid}\n"));
    let reaper_writer = Arc::clone(&writer);
    let _ = std::thread::Builder::new().name("reap".into()).spawn(move || {
        while let Ok(Some((pid, ended))) = sys::wait_any() {
            if pid == program_pid {
                let line = match ended {
                    Ended::Code(code) => format!("exit code {code}\n"),
                    Ended::Signal(signal) => format!("exit signal {signal}\n"),
                };
                let _ = lock(&reaper_writer).write_all(line.as_bytes());
            }
        }
    });
    let me = std::process::id();
    for line in BufReader::new(control).lines() {
        match line.as_deref() {
            Ok("list") => {
                let mut out = String::new();
                for pid in descendants(me) {
                    out.push_str(&format!("proc {pid} {}\n", command_line(pid)));
                }
                out.push_str("end\n");
                say(out);
            }
            Ok("kill") | Err(_) => break,
            Ok(_) => {}
        }
    }
    kill_all(me);
    0
}

/// Kills every descendant of `me` until none is left (bounded); the reap thread reaps
/// them as they die.
fn kill_all(me: u32) {
    let deadline = Instant::now() + KILL_WAIT;
    loop {
        let alive = descendants(me);
        if alive.is_empty() || Instant::now() >= deadline {
            return;
        }
        for pid in alive {
            let _ = sys::kill_process(pid, sys::SIGKILL);
        }
        // A killed process needs a scheduler tick to die.
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Live (non-zombie) descendants of `root`, from /proc.
fn descendants(root: u32) -> Vec<u32> {
    let procs = super::process_table();
    let mut found = super::with_descendants(vec![root], &procs);
    found.remove(0);
    found.retain(|pid| procs.iter().any(|p| p.pid == *pid && p.live));
    found
}

/// `/proc/<pid>/cmdline` with spaces for NULs, shortened.
fn command_line(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    crate::text::clip(String::from_utf8_lossy(&raw).replace('\0', " ").trim(), 200)
}
