//! The supervisor process itself (`iac-code __supervise [--sandbox] [--stdin] PROGRAM
//! ARGS…`): a child
//! subreaper that starts the program, tells the server its pid and its end, lists its
//! descendants when asked, and kills them all on `kill` or when the control socket closes.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{KILL_WAIT, MAX_INPUT, SANDBOX_FLAG, STDIN_FLAG};
use crate::sync::lock;
use crate::sys::{self, Ended};

/// Runs the supervisor: `argv` is the program and its arguments. Returns the exit status.
#[expect(
    clippy::too_many_lines,
    reason = "the supervisor's life in order: control channel, sandbox, spawn, the wait loop, the kill; splitting it scatters one sequence"
)]
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
    let mut control = BufReader::new(control);
    let mut argv = &argv[..];
    let mut sandbox = None;
    if argv.first().is_some_and(|flag| flag == SANDBOX_FLAG) {
        argv = &argv[1..];
        match read_sandbox(&mut control) {
            Ok(spec) => sandbox = Some(spec),
            Err(err) => {
                say(format!("error no sandbox: {err}\n"));
                return 2;
            }
        }
    }
    let (input, argv) = match argv.split_first() {
        Some((flag, rest)) if flag == STDIN_FLAG => match read_input(&mut control) {
            Ok(input) => (Some(input), rest),
            Err(err) => {
                say(format!("error no input: {err}\n"));
                return 2;
            }
        },
        _ => (None, argv),
    };
    let Some((program, args)) = argv.split_first() else {
        say("error no program\n".into());
        return 2;
    };
    let mut command = crate::child::command(program);
    command.args(args).process_group(0);
    // Still one thread here: the namespaces need it, and the program's process may
    // allocate between fork and exec.
    if let Some(spec) = &sandbox
        && let Err(err) = crate::sandbox::enter(spec, &mut command)
    {
        say(format!("error sandbox: {err}\n"));
        return 1;
    }
    let feed = match input {
        None => {
            command.stdin(Stdio::null());
            None
        }
        Some(input) => match std::io::pipe() {
            Ok((reader, writer)) => {
                command.stdin(reader);
                Some((writer, input))
            }
            Err(err) => {
                say(format!("error cannot make a pipe: {err}\n"));
                return 1;
            }
        },
    };
    let spawned = command.spawn();
    // Our copy of the pipe's read end goes, so the program sees the input end.
    drop(command);
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
    if let Some((mut writer, input)) = feed {
        // A program that never reads its input leaves this thread blocked until it ends.
        let _ = std::thread::Builder::new().name("stdin".into()).spawn(move || {
            let _ = writer.write_all(&input);
        });
    }
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
    for line in control.lines() {
        match line.as_deref() {
            Ok("list") => {
                let mut out = String::new();
                for pid in descendants(me) {
                    if let Some(command) = still_running(pid) {
                        out.push_str(&format!("proc {pid} {command}\n"));
                    }
                }
                out.push_str("end\n");
                say(out);
            }
            Ok("kill") | Err(_) => break,
            Ok(_) => {}
        }
    }
    // The sandbox's directory is the server's: what the program left there (a plan) may
    // still be read after the program ended; the server removes it.
    kill_all(me);
    0
}

/// The input announced on the control socket: a line `stdin N`, then N bytes.
fn read_input(control: &mut BufReader<UnixStream>) -> std::io::Result<Vec<u8>> {
    let mut line = String::new();
    control.by_ref().take(64).read_line(&mut line)?;
    let len = line
        .strip_prefix("stdin ")
        .and_then(|n| n.trim().parse::<usize>().ok())
        .filter(|n| *n <= MAX_INPUT)
        .ok_or_else(|| std::io::Error::other(format!("expected 'stdin N', got {line:?}")))?;
    let mut input = vec![0; len];
    control.read_exact(&mut input)?;
    Ok(input)
}

/// The sandbox announced on the control socket: a line `sandbox N`, then N bytes of JSON.
fn read_sandbox(control: &mut BufReader<UnixStream>) -> std::io::Result<crate::sandbox::Spec> {
    let mut line = String::new();
    control.by_ref().take(64).read_line(&mut line)?;
    let len = line
        .strip_prefix("sandbox ")
        .and_then(|n| n.trim().parse::<usize>().ok())
        .filter(|n| *n <= MAX_SANDBOX)
        .ok_or_else(|| std::io::Error::other(format!("expected 'sandbox N', got {line:?}")))?;
    let mut bytes = vec![0; len];
    control.read_exact(&mut bytes)?;
    serde_json::from_slice(&bytes).map_err(std::io::Error::other)
}

/// The largest sandbox description a supervisor reads.
const MAX_SANDBOX: usize = 4 << 20;

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
    let procs = crate::child::process_table();
    let mut found = crate::child::with_descendants(vec![root], &procs);
    found.remove(0);
    found.retain(|pid| procs.iter().any(|p| p.pid == *pid && p.live));
    found
}

/// The command line of a process that is still running, or `None` for one on its way out.
///
/// An empty command line means one of two passing states: a process between the new
/// program's memory and its arguments in `execve` (a daemon caught mid-exec, as
/// `env -i setsid sleep` execs twice), or one whose memory is gone before it is a zombie (a
/// pipe holder just killed). The first gets its arguments within microseconds, the second
/// becomes a zombie: look again until one of them shows (bounded; past that it is named by
/// its `comm`, as running).
fn still_running(pid: u32) -> Option<String> {
    let deadline = Instant::now() + Duration::from_millis(200);
    loop {
        let command = command_line(pid);
        if !command.is_empty() {
            return Some(command);
        }
        let dir = std::path::Path::new("/proc").join(pid.to_string());
        match crate::child::stat_of(&dir) {
            None | Some(('Z' | 'X', _, _)) => return None,
            Some(_) if Instant::now() >= deadline => {
                let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
                return Some(format!("[{}]", comm.trim()));
            }
            Some(_) => std::thread::yield_now(),
        }
    }
}

/// `/proc/<pid>/cmdline` with spaces for NULs, shortened.
fn command_line(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    crate::text::clip(String::from_utf8_lossy(&raw).replace('\0', " ").trim(), 200)
}
