//! Scripted fake of an OpenAI-compatible `/v1/chat/completions` (and Anthropic
//! `/v1/messages`) endpoint on loopback, answering with real SSE streams (HTTP/1.1,
//! chunked, keep-alive). This module owns the public [`FakeLlm`] handle and re-exports
//! the script builders; the script types live in `script`, the record of requests in
//! `recorded`, the HTTP/1.1 wire in `http`, the serving loop in `server`, and the two
//! stream encoders in `openai` and `anthropic`.

mod anthropic;
pub(crate) mod http;
mod openai;
mod pacer;
mod recorded;
mod script;
mod server;

pub use recorded::Recorded;
#[allow(unused_imports)]
pub use script::open_gate;
pub use script::{Event, Reply, text_reply, tool_replies, tool_reply, tool_reply_after};

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use recorded::{Shared, State};

/// The fake server; lives as long as this handle (connection threads may outlive it briefly).
pub struct FakeLlm {
    shared: Arc<Shared>,
    addr: SocketAddr,
}

impl FakeLlm {
    /// Binds 127.0.0.1:0 and starts serving `script`, one reply per chat request.
    pub fn start(script: Vec<Reply>) -> FakeLlm {
        let listener = TcpListener::bind("127.0.0.1:0").expect("fake llm: cannot bind 127.0.0.1:0");
        listener.set_nonblocking(false).expect("fake llm: cannot make listener blocking");
        let addr = listener.local_addr().expect("fake llm: no local address");
        let shared = Arc::new(Shared {
            state: Mutex::new(State { script: script.into(), ..State::default() }),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let accept_shared = Arc::clone(&shared);
        thread::Builder::new()
            .name("fake-llm-accept".to_owned())
            .spawn(move || server::accept_loop(&listener, &accept_shared))
            .expect("fake llm: cannot spawn accept thread");
        FakeLlm { shared, addr }
    }

    /// `http://127.0.0.1:<port>/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Appends a reply to the script.
    pub fn push(&self, reply: Reply) {
        self.shared.lock().script.push_back(reply);
    }

    /// Chat-completions requests received so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.lock().chat.clone()
    }

    /// Every non-chat request received so far (e.g. `GET /v1/models`).
    pub fn other_requests(&self) -> Vec<Recorded> {
        self.shared.lock().other.clone()
    }

    /// Bodies of the chat-completions requests received so far.
    pub fn bodies(&self) -> Vec<Value> {
        self.shared.lock().chat.iter().map(|r| r.body.clone()).collect()
    }

    /// Blocks until at least `n` chat requests arrived; panics on timeout.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<Recorded> {
        match self.wait_until(timeout, |state| state.chat.len() >= n) {
            Ok(state) => state.chat.clone(),
            Err(state) => {
                let (got, remaining) = (state.chat.len(), state.script.len());
                drop(state);
                panic!(
                    "fake llm: timed out after {timeout:?} waiting for {n} chat request(s); \
                     got {got}, {remaining} scripted repl(ies) left"
                );
            }
        }
    }

    /// Blocks until a `Reply::Hang` connection was closed by the client; false on timeout.
    pub fn wait_hang_dropped(&self, timeout: Duration) -> bool {
        self.wait_until(timeout, |state| state.hangs_dropped > 0).is_ok()
    }

    /// Waits (woken by every change) until `done` holds: the state, or on timeout `Err`
    /// with the state as it was.
    fn wait_until(
        &self,
        timeout: Duration,
        done: impl Fn(&State) -> bool,
    ) -> Result<MutexGuard<'_, State>, MutexGuard<'_, State>> {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        loop {
            if done(&state) {
                return Ok(state);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(state);
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Chat requests that arrived when the script was already empty.
    pub fn unexpected_requests(&self) -> usize {
        self.shared.lock().unexpected
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        // Wake the accept loop so it sees the flag; never join (must not hang).
        self.shared.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}
