//! Running one command for a tool call: `bash -c` under the supervisor in its own
//! process group, stdin closed, output piped and capped (head and tail kept) and streamed
//! to the client while it runs. A cancel or a timeout kills the whole process tree. One
//! thread per pipe and one for `wait`; the calling thread selects over them, the cancel
//! token, the deadline and a progress tick. `bash` and the gate's plans run through it.

use std::collections::VecDeque;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use crossbeam_channel::{Receiver, after, never, select, tick};

use super::limits::{Capture, push_tail};
use super::process::{Tree, command_env};
use super::{ToolContext, ToolError};
use crate::child::Supervised;
use crate::child::supervisor::LeftRunning;
use crate::sandbox;
use crate::sys::Ended;

/// After the shell exits, how long to wait for background processes to close the pipes.
pub(crate) const IO_DRAIN: Duration = Duration::from_secs(2);
/// How often live output is sent to the client at most.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
/// Bytes of recent output shown live.
const LIVE_TAIL: usize = 4 * 1024;

pub(crate) enum End {
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
}

pub(crate) struct Run {
    pub(crate) end: End,
    pub(crate) stdout: Capture,
    pub(crate) stderr: Capture,
    /// Background processes that kept the pipes open after the shell exited, and were
    /// stopped.
    pub(crate) pipe_holders: usize,
    /// Processes the command left running (killed when the session ends).
    pub(crate) left_running: Vec<LeftRunning>,
    /// Protected names the sandboxed command created, removed after it (`Spec::undo_created`).
    pub(crate) undone: Vec<PathBuf>,
}

#[derive(Clone, Copy)]
enum Stream {
    Out,
    Err,
}

/// Runs `command` in the sandbox the gate chose for the call (`ctx.sandbox`).
pub(crate) fn execute(
    command: &str,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<Run, ToolError> {
    let spec = match ctx.sandbox {
        sandbox::Run::Confined(profile) => Some(sandbox_spec(profile, ctx)?),
        sandbox::Run::Approved | sandbox::Run::Unavailable => None,
    };
    let run = execute_in(command, timeout, ctx, spec.as_ref());
    if let Some(spec) = &spec {
        spec.clean();
    }
    run
}

/// Lays out the sandbox `profile` for a command of the call.
pub(crate) fn sandbox_spec(
    profile: sandbox::Profile,
    ctx: &ToolContext,
) -> Result<sandbox::Spec, ToolError> {
    let roots = sandbox::Roots {
        cwd: ctx.cwd,
        extra: ctx.extra,
        config_dir: ctx.config_dir,
        approved: ctx.approved,
        reveal: ctx.plan_file,
    };
    let env = |name: &str| std::env::var(name).ok();
    sandbox::Spec::build(profile, &roots, &env).map_err(|err| {
        ToolError::Model(format!("The sandbox could not be laid out ({err}): nothing ran."))
    })
}

/// Runs `command` inside `spec` (none: as the user); a sandbox that cannot be entered is
/// an error and nothing runs. After a sandboxed run, the protected names it created are
/// removed (`Run::undone`).
pub(crate) fn execute_in(
    command: &str,
    timeout: Duration,
    ctx: &ToolContext,
    spec: Option<&sandbox::Spec>,
) -> Result<Run, ToolError> {
    let marker = uuid::Uuid::new_v4().simple().to_string();
    let env = command_env(&marker);
    let shell = super::process::shell();
    let args = super::process::shell_args(command);
    let started = match spec {
        Some(spec) => Supervised::spawn_sandboxed(shell, &args, ctx.cwd, &env, spec),
        None => Supervised::spawn(shell, &args, ctx.cwd, &env),
    };
    let (mut supervised, pipes) = started.map_err(|err| match spec {
        Some(_) => ToolError::Model(format!(
            "The sandbox could not be set up ({err}): nothing ran. Ask the user to run the \
             command, or to check `iac-code sandbox status`."
        )),
        None => ToolError::Model(format!("cannot start {shell}: {err}")),
    })?;
    let names =
        [super::process::pipe_name(&pipes.stdout), super::process::pipe_name(&pipes.stderr)];
    let tree = Tree { pgid: supervised.pid, marker, pipes: names.into_iter().flatten().collect() };
    let (chunk_tx, chunks) = crossbeam_channel::bounded::<(Stream, Vec<u8>)>(64);
    let pipes: [(Stream, Box<dyn Read + Send>); 2] =
        [(Stream::Out, Box::new(pipes.stdout)), (Stream::Err, Box::new(pipes.stderr))];
    for (stream, mut pipe) in pipes {
        let tx = chunk_tx.clone();
        let name = if matches!(stream, Stream::Out) { "bash-out" } else { "bash-err" };
        let spawned = std::thread::Builder::new().name(name.into()).spawn(move || {
            let mut buf = vec![0u8; 8192];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        if tx.send((stream, buf[..n].to_vec())).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        if let Err(err) = spawned {
            let _ = supervised.kill();
            return Err(ToolError::Fatal(format!("cannot start a pipe reader: {err}")));
        }
    }
    drop(chunk_tx);
    let exit_rx = supervised.exit();
    let mut run = supervise(&tree, &mut supervised, chunks, exit_rx, timeout, ctx);
    if matches!(run.end, End::Exited(_)) {
        run.left_running = supervised.left_running();
        if run.left_running.is_empty() {
            let _ = supervised.kill();
        } else {
            // Killed when the session ends (or the server exits).
            ctx.jobs.keep(supervised);
        }
    }
    if let Some(spec) = spec {
        run.undone = spec.undo_created();
    }
    Ok(run)
}

/// The select loop: collect output, stream progress, enforce the deadline and the cancel.
fn supervise(
    tree: &Tree,
    supervised: &mut Supervised,
    chunks: Receiver<(Stream, Vec<u8>)>,
    exit_rx: Receiver<Ended>,
    timeout: Duration,
    ctx: &ToolContext,
) -> Run {
    let mut run = Run {
        end: End::Cancelled,
        stdout: Capture::default(),
        stderr: Capture::default(),
        pipe_holders: 0,
        left_running: Vec::new(),
        undone: Vec::new(),
    };
    let mut live = VecDeque::new();
    let mut shown_from_start = true;
    let mut dirty = false;
    let deadline = after(timeout);
    let ticker = tick(PROGRESS_EVERY);
    let mut chunk_rx = chunks.clone();
    let mut exit_wait = exit_rx;
    let mut drain = never();
    let mut status: Option<ExitStatus> = None;
    let mut pipes_closed = false;
    loop {
        if pipes_closed && status.is_some() {
            break;
        }
        select! {
            recv(chunk_rx) -> msg => match msg {
                Ok((stream, bytes)) => {
                    match stream {
                        Stream::Out => run.stdout.push(&bytes),
                        Stream::Err => run.stderr.push(&bytes),
                    }
                    shown_from_start &= live.len() + bytes.len() <= LIVE_TAIL;
                    push_tail(&mut live, &bytes, LIVE_TAIL);
                    dirty = true;
                }
                Err(_) => {
                    pipes_closed = true;
                    chunk_rx = never();
                }
            },
            recv(exit_wait) -> msg => {
                exit_wait = never();
                status = Some(match msg {
                    Ok(Ended::Code(code)) => ExitStatus::from_raw((code & 0xff) << 8),
                    Ok(Ended::Signal(signal)) => ExitStatus::from_raw(signal & 0x7f),
                    // The supervisor went away: nothing more can be learnt.
                    Err(_) => ExitStatus::from_raw(255 << 8),
                });
                drain = after(IO_DRAIN);
            },
            recv(drain) -> _ => {
                // Background children hold the output open: stop them, take what is left.
                run.pipe_holders = tree.kill_pipe_holders().max(1);
                collect_rest(&mut run, &chunks);
                break;
            },
            recv(ctx.cancel.channel()) -> _ => {
                // The old tree walk only when the supervisor could not do it (pids may have
                // been reused once it reaped them).
                if !supervised.kill() {
                    tree.kill();
                }
                run.end = End::Cancelled;
                return run;
            },
            recv(deadline) -> _ => {
                if !supervised.kill() {
                    tree.kill();
                }
                collect_rest(&mut run, &chunks);
                run.end = End::TimedOut;
                return run;
            },
            recv(ticker) -> _ => {
                if dirty {
                    dirty = false;
                    let bytes: Vec<u8> = live.iter().copied().collect();
                    let text = String::from_utf8_lossy(&bytes);
                    (ctx.progress)(super::limits::whole_lines(&text, !shown_from_start));
                }
            },
        }
    }
    run.end = End::Exited(status.unwrap_or_else(|| ExitStatus::from_raw(255 << 8)));
    run
}

/// After a kill: take what the pipes still hold (they close once the tree is dead).
fn collect_rest(run: &mut Run, chunks: &Receiver<(Stream, Vec<u8>)>) {
    let stop = after(IO_DRAIN);
    loop {
        select! {
            recv(chunks) -> msg => match msg {
                Ok((Stream::Out, bytes)) => run.stdout.push(&bytes),
                Ok((Stream::Err, bytes)) => run.stderr.push(&bytes),
                Err(_) => break,
            },
            recv(stop) -> _ => break,
        }
    }
}
