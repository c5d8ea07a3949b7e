//! `bash`: runs `/bin/sh -c` in its own process group with stdin closed and its output
//! piped, capped (head and tail kept) and streamed to the client while it runs. A cancel
//! or a timeout kills the whole process tree. One thread per pipe and one for `wait`; the
//! calling thread selects over them, the cancel token, the deadline and a progress tick.

use std::collections::VecDeque;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use crossbeam_channel::{Receiver, after, never, select, tick};
use serde::Deserialize;
use serde_json::{Value, json};

use super::limits::{Capture, KEEP_HEAD, KEEP_TAIL, push_tail};
use super::process::{Tree, command_env};
use super::{Access, Invocation, Tool, ToolContext, ToolError, ToolKind, ToolOutput, parse_args};
use crate::child::Supervised;
use crate::child::supervisor::LeftRunning;
use crate::sys::Ended;

/// Timeout when the call gives none.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest timeout a call may ask for.
const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// After the shell exits, how long to wait for background processes to close the pipes.
const IO_DRAIN: Duration = Duration::from_secs(2);
/// How often live output is sent to the client at most.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
/// Characters of the command shown in the title.
const MAX_TITLE_CHARS: usize = 500;
/// Bytes of recent output shown live.
const LIVE_TAIL: usize = 4 * 1024;

pub struct Bash;

#[derive(Deserialize)]
struct Args {
    command: String,
    timeout: Option<f64>,
}

impl Tool for Bash {
    fn name(&self) -> &'static str {
        "bash"
    }
    fn description(&self) -> &'static str {
        "Execute a shell command with /bin/sh in the working directory. Use this for running \
         programs, terraform/kubectl/ansible commands, tests and git operations. stdin is \
         closed (commands must not wait for input). Commands time out after 120 seconds by \
         default (timeout parameter, at most 600). Output is returned with the exit code; very \
         long output keeps its beginning and end. Processes still running at a timeout or \
         cancel are killed."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The shell command to execute."},
                "timeout": {"type": "integer", "description": "Timeout in seconds. Defaults to 120, at most 600."}
            },
            "required": ["command"]
        })
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }
    fn access(&self) -> Access {
        Access::Execute
    }
    fn offers_always(&self) -> bool {
        // "Always" remembers a command's prefix (`terraform fmt`), never bash as a whole:
        // the gate offers it only when the command has prefixes (`Gate::prefixes`).
        true
    }
    fn describe(&self, args: &Value, ctx: &ToolContext) -> Invocation {
        let command = args.get("command").and_then(Value::as_str).unwrap_or("").trim();
        // The whole command, so that a client showing only the title shows all of it.
        let title = crate::text::one_line(command, " ⏎ ", MAX_TITLE_CHARS);
        let title = if title.is_empty() { "bash".to_string() } else { title };
        super::command_gate::describe(title, command, ctx)
    }
    fn prepare(
        &self,
        args: &Value,
        invocation: &mut Invocation,
        ctx: &ToolContext,
    ) -> Result<(), ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        let (timeout, _) = timeout_of(args.timeout)?;
        super::command_gate::prepare(&args.command, invocation, timeout, ctx)
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        if args.command.trim().is_empty() {
            return Err(ToolError::Model("command is empty".to_string()));
        }
        let (timeout, note) = timeout_of(args.timeout)?;
        // Exactly what the gate approved (`apply <the plan shown>`), when it prepared one.
        let command = ctx.prepared.unwrap_or(&args.command);
        if ctx.files.terminals() {
            return super::terminal::run(command, timeout, note, ctx);
        }
        let run = execute(command, timeout, ctx)?;
        report(run, timeout, note)
    }
}

pub(super) fn timeout_of(requested: Option<f64>) -> Result<(Duration, Option<String>), ToolError> {
    let Some(secs) = requested else { return Ok((DEFAULT_TIMEOUT, None)) };
    if !secs.is_finite() || secs <= 0.0 {
        return Err(ToolError::Model(format!(
            "timeout must be a positive number of seconds, got {secs}"
        )));
    }
    if secs > MAX_TIMEOUT.as_secs_f64() {
        let note = format!("(timeout {secs} s was lowered to the maximum, 600 s)");
        return Ok((MAX_TIMEOUT, Some(note)));
    }
    Ok((Duration::from_secs_f64(secs), None))
}

pub(super) enum End {
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
}

pub(super) struct Run {
    pub(super) end: End,
    pub(super) stdout: Capture,
    pub(super) stderr: Capture,
    /// Background processes that kept the pipes open after the shell exited, and were
    /// stopped.
    pipe_holders: usize,
    /// Processes the command left running (killed when the session ends).
    left_running: Vec<LeftRunning>,
}

#[derive(Clone, Copy)]
enum Stream {
    Out,
    Err,
}

pub(super) fn execute(
    command: &str,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<Run, ToolError> {
    let marker = uuid::Uuid::new_v4().simple().to_string();
    let env = command_env(&marker);
    let (mut supervised, pipes) = Supervised::spawn("/bin/sh", &["-c", command], ctx.cwd, &env)
        .map_err(|err| ToolError::Model(format!("cannot start /bin/sh: {err}")))?;
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
    };
    let mut live = VecDeque::new();
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
                    (ctx.progress)(String::from_utf8_lossy(&bytes).into_owned());
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

fn report(run: Run, timeout: Duration, note: Option<String>) -> Result<ToolOutput, ToolError> {
    let stdout = run.stdout.text();
    let stderr = run.stderr.text();
    let mut text = String::new();
    if !stdout.is_empty() {
        text.push_str(&format!("STDOUT:\n{}\n", stdout.trim_end_matches('\n')));
    }
    if !stderr.is_empty() {
        text.push_str(&format!("STDERR:\n{}\n", stderr.trim_end_matches('\n')));
    }
    if stdout.is_empty() && stderr.is_empty() {
        text.push_str("(no output)\n");
    }
    if let Some(note) = note {
        text.push_str(&note);
        text.push('\n');
    }
    let code = match run.end {
        End::Cancelled => {
            return Err(ToolError::Model(format!(
                "Command cancelled by the user; it and every process it started were killed.\n{text}"
            )));
        }
        End::TimedOut => {
            return Err(ToolError::Model(format!(
                "Command timed out after {} s; it and every process it started were killed.\n{text}",
                timeout.as_secs_f64()
            )));
        }
        End::Exited(status) => match (status.code(), status.signal()) {
            (Some(code), _) => code,
            (None, Some(signal)) => 128 + signal,
            (None, None) => 255,
        },
    };
    if run.pipe_holders > 0 {
        text.push_str(&format!(
            "(stopped {} background process(es) that kept the output open {} s after the \
             command exited; redirect the output of processes meant to keep running)\n",
            run.pipe_holders,
            IO_DRAIN.as_secs()
        ));
    }
    if !run.left_running.is_empty() {
        let named: Vec<String> =
            run.left_running.iter().map(|p| format!("pid {} `{}`", p.pid, p.command)).collect();
        text.push_str(&format!(
            "left running: {} (they are stopped when the session ends)\n",
            named.join(", ")
        ));
    }
    text.push_str(&format!("Exit code: {code}"));
    let truncated = run.stdout.total > (KEEP_HEAD + KEEP_TAIL) as u64
        || run.stderr.total > (KEEP_HEAD + KEEP_TAIL) as u64;
    if code != 0 {
        return Err(ToolError::Model(text));
    }
    let raw = json!({
        "exitCode": code,
        "stdoutBytes": run.stdout.total,
        "stderrBytes": run.stderr.total,
        "truncated": truncated,
        "leftRunning": run.left_running.iter().map(|p| p.pid).collect::<Vec<_>>(),
    });
    Ok(ToolOutput { text, raw, diff: None, ..ToolOutput::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_bounded() {
        assert_eq!(timeout_of(None).unwrap().0, DEFAULT_TIMEOUT);
        assert_eq!(timeout_of(Some(120000.0)).unwrap().0, MAX_TIMEOUT);
        assert!(timeout_of(Some(0.0)).is_err());
        assert_eq!(timeout_of(Some(1.5)).unwrap().0, Duration::from_millis(1500));
    }
}
