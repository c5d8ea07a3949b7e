//! `bash`: runs `/bin/sh -c` in its own process group with stdin closed and its output
//! piped, capped (head and tail kept) and streamed to the client while it runs. A cancel
//! or a timeout kills the whole process tree. One thread per pipe and one for `wait`; the
//! calling thread selects over them, the cancel token, the deadline and a progress tick.

use std::collections::VecDeque;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use crossbeam_channel::{Receiver, after, never, select, tick};
use serde::Deserialize;
use serde_json::{Value, json};

use super::process::{MARKER_VAR, Tree};
use super::{Access, Invocation, Tool, ToolContext, ToolError, ToolKind, ToolOutput, parse_args};

/// Timeout when the call gives none.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest timeout a call may ask for.
const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// After the shell exits, how long to wait for background processes to close the pipes.
const IO_DRAIN: Duration = Duration::from_secs(2);
/// How often live output is sent to the client at most.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
/// Bytes kept from the start and from the end of each stream.
const KEEP_HEAD: usize = 12 * 1024;
const KEEP_TAIL: usize = 12 * 1024;
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
    fn describe(&self, args: &Value, _ctx: &ToolContext) -> Invocation {
        let command = args.get("command").and_then(Value::as_str).unwrap_or("");
        let first = command.lines().next().unwrap_or("");
        let mut title: String = first.chars().take(120).collect();
        if title.len() < command.trim_end().len() {
            title.push('…');
        }
        Invocation::plain(if title.is_empty() { "bash".to_string() } else { title })
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        if args.command.trim().is_empty() {
            return Err(ToolError::Model("command is empty".to_string()));
        }
        let (timeout, note) = timeout_of(args.timeout)?;
        let run = execute(&args.command, timeout, ctx)?;
        report(run, timeout, note)
    }
}

fn timeout_of(requested: Option<f64>) -> Result<(Duration, Option<String>), ToolError> {
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

/// What one stream produced: the head and the tail, and how much was dropped between.
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Capture {
    fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = KEEP_HEAD - self.head.len();
        let take = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..take]);
        bytes = &bytes[take..];
        push_tail(&mut self.tail, bytes, KEEP_TAIL);
    }

    fn text(&self) -> String {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.total > kept {
            out.push_str(&format!("\n[... {} bytes omitted ...]\n", self.total - kept));
        }
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        out.push_str(&String::from_utf8_lossy(&tail));
        out
    }
}

fn push_tail(tail: &mut VecDeque<u8>, bytes: &[u8], cap: usize) {
    let bytes = &bytes[bytes.len().saturating_sub(cap)..];
    let overflow = (tail.len() + bytes.len()).saturating_sub(cap);
    tail.drain(..overflow);
    tail.extend(bytes);
}

enum End {
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
}

struct Run {
    end: End,
    stdout: Capture,
    stderr: Capture,
    /// Background processes kept the pipes open after the shell exited.
    pipes_left_open: bool,
}

#[derive(Clone, Copy)]
enum Stream {
    Out,
    Err,
}

fn execute(command: &str, timeout: Duration, ctx: &ToolContext) -> Result<Run, ToolError> {
    let marker = uuid::Uuid::new_v4().simple().to_string();
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .current_dir(ctx.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .env(MARKER_VAR, &marker)
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("TF_INPUT", "0")
        .spawn()
        .map_err(|err| ToolError::Model(format!("cannot start /bin/sh: {err}")))?;
    let tree = Tree { pgid: child.id(), marker };
    let (chunk_tx, chunks) = crossbeam_channel::bounded::<(Stream, Vec<u8>)>(64);
    let pipes: [(Stream, Option<Box<dyn Read + Send>>); 2] = [
        (Stream::Out, child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>)),
        (Stream::Err, child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>)),
    ];
    for (stream, pipe) in pipes {
        let (Some(mut pipe), tx) = (pipe, chunk_tx.clone()) else { continue };
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
            tree.kill();
            return Err(ToolError::Fatal(format!("cannot start a pipe reader: {err}")));
        }
    }
    drop(chunk_tx);
    let (exit_tx, exit_rx) = crossbeam_channel::bounded(1);
    let waiter = std::thread::Builder::new().name("bash-wait".into()).spawn(move || {
        let _ = exit_tx.send(child.wait());
    });
    if let Err(err) = waiter {
        tree.kill();
        return Err(ToolError::Fatal(format!("cannot start the process waiter: {err}")));
    }
    Ok(supervise(&tree, chunks, exit_rx, timeout, ctx))
}

/// The select loop: collect output, stream progress, enforce the deadline and the cancel.
fn supervise(
    tree: &Tree,
    chunks: Receiver<(Stream, Vec<u8>)>,
    exit_rx: Receiver<std::io::Result<ExitStatus>>,
    timeout: Duration,
    ctx: &ToolContext,
) -> Run {
    let mut run = Run {
        end: End::Cancelled,
        stdout: Capture::default(),
        stderr: Capture::default(),
        pipes_left_open: false,
    };
    let mut live = VecDeque::new();
    let mut dirty = false;
    let deadline = after(timeout);
    let ticker = tick(PROGRESS_EVERY);
    let mut chunk_rx = chunks.clone();
    let mut exit_wait = exit_rx.clone();
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
                match msg {
                    Ok(Ok(exit)) => status = Some(exit),
                    // wait() failed: nothing more can be learnt about the child.
                    _ => status = Some(ExitStatus::from_raw(255 << 8)),
                }
                drain = after(IO_DRAIN);
            },
            recv(drain) -> _ => {
                run.pipes_left_open = true;
                break;
            },
            recv(ctx.cancel.channel()) -> _ => {
                tree.kill();
                run.end = End::Cancelled;
                return run;
            },
            recv(deadline) -> _ => {
                tree.kill();
                collect_rest(&mut run, &chunks, &exit_rx);
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
fn collect_rest(
    run: &mut Run,
    chunks: &Receiver<(Stream, Vec<u8>)>,
    exit_rx: &Receiver<std::io::Result<ExitStatus>>,
) {
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
    let _ = exit_rx.recv_timeout(IO_DRAIN);
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
    if run.pipes_left_open {
        text.push_str(
            "(background processes still hold the output open; later output is not shown)\n",
        );
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
    });
    Ok(ToolOutput { text, raw, diff: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut c = Capture::default();
        c.push(&vec![b'a'; KEEP_HEAD]);
        c.push(&vec![b'b'; 100_000]);
        c.push(b"END");
        let text = c.text();
        assert!(text.starts_with(&"a".repeat(KEEP_HEAD)));
        assert!(text.ends_with("bbbEND"));
        let omitted = 100_003 - KEEP_TAIL as u64;
        assert!(text.contains(&format!("[... {omitted} bytes omitted ...]")), "{}", &text[..100]);
    }

    #[test]
    fn timeouts_are_bounded() {
        assert_eq!(timeout_of(None).unwrap().0, DEFAULT_TIMEOUT);
        assert_eq!(timeout_of(Some(120000.0)).unwrap().0, MAX_TIMEOUT);
        assert!(timeout_of(Some(0.0)).is_err());
        assert_eq!(timeout_of(Some(1.5)).unwrap().0, Duration::from_millis(1500));
    }
}
