//! The stdio transport: the server is a child process in its own process group, started in
//! the session cwd with the secret-free environment plus its entry's `env`. Messages are
//! lines of JSON on its stdin and stdout; a reader thread hands each line to the peer (a
//! line over `MAX_LINE` breaks the connection rather than our memory). Its stderr is kept in
//! a 64 KiB ring for diagnostics. Closing ends stdin, sends SIGTERM to the group and, if the
//! server is still there after a grace period, SIGKILL: no server outlives its session.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{ChildStdin, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use super::peer::{Link, Peer};
use crate::sync::lock;

/// The longest message line accepted from a server.
pub(super) const MAX_LINE: usize = 16 << 20;
/// How much of a server's stderr is kept.
const STDERR_RING: usize = 64 << 10;
/// How long a closed server has to exit before SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// A running stdio server.
pub(super) struct StdioLink {
    stdin: Mutex<Option<ChildStdin>>,
    pgid: u32,
    closed: AtomicBool,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    exited: crossbeam_channel::Receiver<()>,
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
    let link = Arc::new(StdioLink {
        stdin: Mutex::new(Some(stdin)),
        pgid: pid,
        closed: AtomicBool::new(false),
        stderr: Arc::clone(&ring),
        exited,
    });
    let keep = Arc::clone(&ring);
    let spawned = thread::Builder::new().name("mcp-stderr".into()).spawn(move || {
        let mut stderr = stderr;
        let mut buf = [0u8; 8192];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut ring = lock(&keep);
            ring.extend(&buf[..n]);
            let over = ring.len().saturating_sub(STDERR_RING);
            ring.drain(..over);
        }
    });
    let reader_peer = Arc::clone(peer);
    let reader_link = Arc::clone(&link);
    let reader = spawned.and_then(|_| {
        thread::Builder::new().name("mcp-stdout".into()).spawn(move || {
            let why = read_lines(stdout, &reader_peer);
            // Whatever ended the stream, the group goes: a server that closed its stdout
            // but lingers, or children it left, must not outlive the connection.
            let _ = crate::sys::kill_group(pid, crate::sys::SIGKILL);
            let status = child.wait();
            crate::child::forget(pid);
            let _ = exited_tx.send(());
            let status = match status {
                Ok(status) => status.to_string(),
                Err(err) => format!("unknown status: {err}"),
            };
            let mut reason = match why {
                Some(why) => why,
                None => format!("the server exited ({status})"),
            };
            if let Some(tail) = reader_link.diagnostics() {
                reason.push_str("; its stderr ends: ");
                reason.push_str(&tail);
            }
            reader_peer.fail(reason);
        })
    });
    if let Err(err) = reader {
        let _ = crate::sys::kill_group(pid, crate::sys::SIGKILL);
        return Err(format!("cannot start a reader thread: {err}"));
    }
    Ok(link)
}

/// Reads lines until EOF (`None`) or a line that breaks the rules (`Some(why)`).
fn read_lines(stdout: std::process::ChildStdout, peer: &Peer) -> Option<String> {
    let mut reader = BufReader::with_capacity(64 << 10, stdout);
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        match (&mut reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line) {
            Ok(0) => return None,
            Ok(_) if line.len() > MAX_LINE => {
                return Some(format!("sent a line over {} MiB", MAX_LINE >> 20));
            }
            Ok(_) => peer.deliver(&line),
            Err(err) => return Some(format!("reading its output failed: {err}")),
        }
        if peer.broken().is_some() {
            return None;
        }
    }
}

impl Link for StdioLink {
    fn send(&self, message: &[u8]) -> Result<(), String> {
        let mut stdin = lock(&self.stdin);
        let Some(pipe) = stdin.as_mut() else { return Err("the connection is closed".into()) };
        let mut line = Vec::with_capacity(message.len() + 1);
        line.extend_from_slice(message);
        line.push(b'\n');
        pipe.write_all(&line).and_then(|()| pipe.flush()).map_err(|err| err.to_string())
    }

    fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        // End of input first: a well-behaved server exits on it.
        lock(&self.stdin).take();
        let _ = crate::sys::kill_group(self.pgid, crate::sys::SIGTERM);
        let exited = self.exited.clone();
        let pgid = self.pgid;
        let _ = thread::Builder::new().name("mcp-reap".into()).spawn(move || {
            if exited.recv_timeout(GRACE).is_err() {
                let _ = crate::sys::kill_group(pgid, crate::sys::SIGKILL);
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
