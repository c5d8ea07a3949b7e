//! stdio transport: a reader thread turns stdin lines into frames, a writer thread is the
//! sole owner of the protocol stdout. Knows nothing about ACP.

use std::fs::File;
use std::io::{self, BufRead, BufWriter, Write};
use std::thread;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};

use crate::jsonrpc::{
    self, Inbound, LineRead, Outbox, Outgoing, RpcError, Spare, read_capped_line,
};

/// Longest accepted line (one JSON-RPC message).
pub const MAX_LINE: usize = 50 << 20;

/// A running stdio transport.
pub struct Stdio {
    /// Frames read from stdin; disconnects at EOF.
    pub inbox: Receiver<Inbound>,
    /// Where frames for stdout go.
    pub outbox: Outbox,
    writer_done: Receiver<()>,
}

/// Takes over stdin and stdout and starts the reader and writer threads.
pub fn start() -> io::Result<Stdio> {
    let out = crate::sys::take_stdout()?;
    let (in_tx, inbox) = crossbeam_channel::bounded(64);
    let (out_tx, out_rx) = crossbeam_channel::unbounded();
    let outbox = Outbox::new(out_tx);
    let spare = outbox.spare();
    let (done_tx, writer_done) = crossbeam_channel::bounded(1);
    thread::Builder::new().name("stdin".into()).spawn(move || {
        read_loop(io::stdin().lock(), &in_tx);
        log::debug!("stdin closed");
    })?;
    thread::Builder::new().name("stdout".into()).spawn(move || {
        write_loop(out, &out_rx, &spare);
        let _ = done_tx.send(());
    })?;
    Ok(Stdio { inbox, outbox, writer_done })
}

impl Stdio {
    /// Drops our outbox and waits (bounded) until the writer has flushed everything that
    /// the remaining senders produced.
    pub fn finish(self, deadline: Duration) {
        drop(self.outbox);
        if self.writer_done.recv_timeout(deadline).is_err() {
            log::warn!("stdout writer still busy at exit");
        }
    }
}

/// Reads newline-delimited frames until EOF or a read error.
pub fn read_loop(mut input: impl BufRead, tx: &Sender<Inbound>) {
    let mut line = Vec::new();
    loop {
        line.clear();
        let inbound = match read_capped_line(&mut input, &mut line, MAX_LINE) {
            Ok(LineRead::Eof) => return,
            Ok(LineRead::TooLong) => {
                let detail = format!("message longer than {MAX_LINE} bytes was discarded");
                Err((None, RpcError::parse_error(detail)))
            }
            Ok(LineRead::Line) => {
                let text = line.trim_ascii();
                if text.is_empty() {
                    continue;
                }
                if log::log_enabled!(log::Level::Trace) {
                    let shown = String::from_utf8_lossy(&text[..text.len().min(2048)]);
                    log::trace!("< {shown}");
                }
                jsonrpc::parse(text)
            }
            Err(err) => {
                log::error!("reading stdin: {err}");
                return;
            }
        };
        if tx.send(inbound).is_err() {
            return;
        }
    }
}

/// Writes frames, one per line, flushing whenever the queue runs dry.
fn write_loop(out: File, rx: &Receiver<Outgoing>, spare: &Spare) {
    let mut writer = BufWriter::with_capacity(64 << 10, out);
    for frame in rx.iter() {
        // The bytes are whole lines already (one frame, or a burst of them).
        let written = writer.write_all(&frame.bytes);
        spare.give(frame.bytes);
        let flushed = match written {
            Ok(()) if rx.is_empty() => writer.flush(),
            other => other,
        };
        if let Err(err) = flushed {
            // EPIPE and friends: the client is gone. Stop quietly; senders see SendError.
            log::info!("stdout closed: {err}");
            return;
        }
    }
    let _ = writer.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8], cap: usize) -> Vec<String> {
        let mut reader = io::BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match read_capped_line(&mut reader, &mut buf, cap).unwrap() {
                LineRead::Eof => return out,
                LineRead::TooLong => out.push("<too long>".to_string()),
                LineRead::Line => out.push(String::from_utf8(buf.clone()).unwrap()),
            }
        }
    }

    #[test]
    fn lines_are_capped_without_losing_the_next_one() {
        let got = frames(b"abc\n0123456789abcdef\nxyz", 8);
        assert_eq!(got, ["abc", "<too long>", "xyz"]);
    }

    #[test]
    fn garbage_lines_become_errors_and_reading_goes_on() {
        let (tx, rx) = crossbeam_channel::unbounded();
        read_loop(&b"{oops\n\n  \n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\r\n"[..], &tx);
        drop(tx);
        let got: Vec<_> = rx.iter().collect();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].as_ref().unwrap_err().1.code, -32700);
        assert!(got[1].is_ok());
    }
}
