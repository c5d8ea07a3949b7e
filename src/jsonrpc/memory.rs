//! An in-process connection over channels, for protocol tests that need no process and no
//! socket (the idea of lsp-server's `Connection::memory`): the client end sends frames and
//! reads the server's, the server end is what `serve` runs on. The terminal client
//! (`tui/`) talks to its in-process agent over one.

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use serde_json::Value;

use super::message::parse;
use super::outbox::{Outbox, Outgoing};
use super::serve::Inbound;

/// The client's end.
pub struct Client {
    to_server: Sender<Inbound>,
    from_server: Receiver<Outgoing>,
}

/// The server's end: its inbox and its outbox.
pub struct Server {
    /// Frames from the client.
    pub inbox: Receiver<Inbound>,
    /// Where the server's frames go.
    pub outbox: Outbox,
}

/// A connected pair.
pub fn memory() -> (Client, Server) {
    let (to_server, inbox) = crossbeam_channel::unbounded();
    let (out_tx, from_server) = crossbeam_channel::unbounded();
    // One channel item per frame, so `recv` reads frames one at a time.
    let outbox = Outbox::direct(move |outgoing: Outgoing| {
        for frame in outgoing.frames() {
            let one = Outgoing { session: outgoing.session.clone(), bytes: frame.to_vec() };
            let _ = out_tx.send(one);
        }
        outgoing.bytes
    });
    (Client { to_server, from_server }, Server { inbox, outbox })
}

impl Client {
    /// Sends one frame, parsed as a transport would (bad JSON becomes the error to answer).
    pub fn send(&self, frame: &Value) {
        let inbound = parse(frame.to_string().as_bytes());
        let _ = self.to_server.send(inbound);
    }

    /// The next frame the server sent, decoded; `None` after `timeout` or when it hung up.
    pub fn recv(&self, timeout: std::time::Duration) -> Option<Value> {
        match self.from_server.recv_timeout(timeout) {
            Ok(outgoing) => serde_json::from_slice(&outgoing.bytes).ok(),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    /// The server's frames as they come, to select on with other events (the terminal
    /// client's loop); each item holds one frame.
    pub fn frames(&self) -> &Receiver<Outgoing> {
        &self.from_server
    }

    /// Hangs up (the server's `serve` returns).
    pub fn close(self) {
        drop(self.to_server);
    }
}
