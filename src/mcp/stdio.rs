//! The stdio transport: the server is a child process in its own process group, started in
//! the session cwd with the secret-free environment plus its entry's `env`. Messages are
//! lines of JSON (our framing, `jsonrpc::read_capped_line`): a reader thread hands each
//! line to the peer (a line over `MAX_LINE` breaks the connection rather than our memory),
//! and a writer thread feeds its stdin from a bounded queue, so a server that stops reading
//! makes our sends fail after `WRITE_WAIT` instead of blocking anyone. Its stderr is kept in
//! a 64 KiB ring for diagnostics. Closing ends stdin once what is queued is written; a
//! server still there 2 s later gets SIGTERM (its group), 1 s after that SIGKILL: no server
//! outlives its session.

use std::collections::VecDeque;
use std::io::{BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};

use super::peer::{Link, Peer};
use crate::jsonrpc::{LineRead, read_capped_line};
use crate::sync::lock;

/// The longest message line accepted from a server.
pub(super) const MAX_LINE: usize = 16 << 20;
/// How much of a server's stderr is kept.
const STDERR_RING: usize = 64 << 10;
/// How long a closed server has to exit at the end of its input before SIGTERM.
const GRACE: Duration = Duration::from_secs(2);
/// How long it then has before SIGKILL.
const KILL_WAIT: Duration = Duration::from_secs(1);
/// Messages waiting for the server to read them, at most.
const QUEUE: usize = 256;
/// How long a send waits for room in that queue: a server that reads nothing for this
/// long is failed.
const WRITE_WAIT: Duration = Duration::from_secs(10);

/// A running stdio server.
pub(super) struct StdioLink {
    /// Lines for the writer thread; taken (closing its stdin) on close.
    input: Mutex<Option<Sender<Vec<u8>>>>,
    pgid: u32,
    /// Closed by us, or reaped: from then on the group id must not be signalled.
    closed: AtomicBool,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    exited: Receiver<()>,
}

/// Starts `command` for `peer`.
pub(super) fn start(
    command: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
    peer: &Arc<Peer>,
) -> Result<Arc<StdioLink>, String> {
    let mut cmd = crate::child::command(command);
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child =
        crate::child::spawn(&mut cmd).map_err(|err| format!("cannot start '{command}': {err}"))?;
    let pid = child.id();
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = crate::sys::kill_group(pid, crate::sys::SIGKILL);
        return Err(format!("cannot start '{command}': no pipes"));
    };
    let ring = Arc::new(Mutex::new(VecDeque::with_capacity(1024)));
    let (exited_tx, exited) = crossbeam_channel::bounded(1);
    let (input, lines) = crossbeam_channel::bounded::<Vec<u8>>(QUEUE);
    let link = Arc::new(StdioLink {
        input: Mutex::new(Some(input)),
        pgid: pid,
        closed: AtomicBool::new(false),
        stderr: Arc::clone(&ring),
        exited,
    });
    let started = spawn("mcp-stdin", move || {
        let mut stdin = stdin;
        // Ends when the queue closes (our close) or the server stops taking input.
        for line in lines.iter() {
            if stdin.write_all(&line).and_then(|()| stdin.flush()).is_err() {
                return;
            }
        }
    })
    .and_then(|()| spawn("mcp-stderr", move || keep_stderr(stderr, &ring)))
    .and_then(|()| {
        let peer = Arc::clone(peer);
        let link = Arc::clone(&link);
        spawn("mcp-stdout", move || {
            let why = read_lines(stdout, &peer);
            // Whatever ended the stream, the group goes: a server that closed its stdout
            // but lingers, or children it left, must not outlive the connection.
            let _ = crate::sys::kill_group(pid, crate::sys::SIGKILL);
            // Reaped below: the group id may be reused, so nobody signals it again.
            link.closed.store(true, Ordering::SeqCst);
            lock(&link.input).take();
            let status = child.wait();
            crate::child::forget(pid);
            let _ = exited_tx.send(());
            let mut reason = why.unwrap_or_else(|| match status {
                Ok(status) => format!("the server exited ({status})"),
                Err(err) => format!("the server ended (unknown status: {err})"),
            });
            if let Some(tail) = link.diagnostics() {
                reason.push_str("; its stderr ends: ");
                reason.push_str(&tail);
            }
            peer.fail(reason);
        })
    });
    if let Err(err) = started {
        let _ = crate::sys::kill_group(pid, crate::sys::SIGKILL);
        return Err(format!("cannot start a thread for it: {err}"));
    }
    Ok(link)
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    thread::Builder::new().name(name.into()).spawn(f).map(|_| ())
}

/// Keeps the last `STDERR_RING` bytes the server writes to its stderr.
fn keep_stderr(mut stderr: std::process::ChildStderr, ring: &Mutex<VecDeque<u8>>) {
    let mut buf = [0u8; 8192];
    while let Ok(n) = stderr.read(&mut buf) {
        if n == 0 {
            break;
        }
        let mut ring = lock(ring);
        ring.extend(&buf[..n]);
        let over = ring.len().saturating_sub(STDERR_RING);
        ring.drain(..over);
    }
}

/// Reads lines until EOF (`None`) or a line that breaks the rules (`Some(why)`).
fn read_lines(stdout: std::process::ChildStdout, peer: &Peer) -> Option<String> {
    let mut reader = BufReader::with_capacity(64 << 10, stdout);
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        match read_capped_line(&mut reader, &mut line, MAX_LINE) {
            Ok(LineRead::Eof) => return None,
            Ok(LineRead::TooLong) => {
                return Some(format!("sent a line over {} MiB", MAX_LINE >> 20));
            }
            Ok(LineRead::Line) => peer.deliver(&line),
            Err(err) => return Some(format!("reading its output failed: {err}")),
        }
        if peer.broken().is_some() {
            return None;
        }
        // One huge message must not keep its memory for the connection's life.
        if line.capacity() > 1 << 20 {
            line = Vec::with_capacity(4096);
        }
    }
}

impl Link for StdioLink {
    fn send(&self, message: &[u8]) -> Result<(), String> {
        let Some(input) = lock(&self.input).clone() else {
            return Err("the connection is closed".into());
        };
        let mut line = Vec::with_capacity(message.len() + 1);
        line.extend_from_slice(message);
        line.push(b'\n');
        input.send_timeout(line, WRITE_WAIT).map_err(|err| match err {
            crossbeam_channel::SendTimeoutError::Timeout(_) => {
                format!("the server has read none of its input for {} s", WRITE_WAIT.as_secs())
            }
            crossbeam_channel::SendTimeoutError::Disconnected(_) => {
                "the server no longer reads its input".to_string()
            }
        })
    }

    fn close(&self) {
        // End of input first, once what is queued (a last `notifications/cancelled`) is
        // written: a well-behaved server exits on it. Nobody waits on a stuck writer.
        lock(&self.input).take();
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        let exited = self.exited.clone();
        let pgid = self.pgid;
        let _ = spawn("mcp-reap", move || {
            // `exited` comes once the reader has reaped it: only before that may the group
            // id be signalled.
            for (wait, signal) in [(GRACE, crate::sys::SIGTERM), (KILL_WAIT, crate::sys::SIGKILL)] {
                if exited.recv_timeout(wait).is_ok() {
                    return;
                }
                let _ = crate::sys::kill_group(pgid, signal);
            }
        });
    }

    fn diagnostics(&self) -> Option<String> {
        let ring = lock(&self.stderr);
        if ring.is_empty() {
            return None;
        }
        let start = ring.len().saturating_sub(1024);
        let tail: Vec<u8> = ring.range(start..).copied().collect();
        let text = String::from_utf8_lossy(&tail);
        let text = text.trim();
        (!text.is_empty()).then(|| crate::text::one_line(text, " | ", 300))
    }
}
