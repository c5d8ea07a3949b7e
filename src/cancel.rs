//! `CancelToken`: a flag for cheap checks between steps plus a channel that disconnects on
//! cancel, so a `select!` wakes at once even while a stream or a child is silent.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender};

/// Shared by everyone working on one prompt turn.
#[derive(Clone, Debug)]
pub struct CancelToken {
    inner: Arc<Inner>,
    rx: Receiver<()>,
}

#[derive(Debug)]
struct Inner {
    flag: AtomicBool,
    tx: Mutex<Option<Sender<()>>>,
}

impl Default for CancelToken {
    fn default() -> CancelToken {
        CancelToken::new()
    }
}

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> CancelToken {
        let (tx, rx) = crossbeam_channel::bounded(0);
        CancelToken {
            inner: Arc::new(Inner { flag: AtomicBool::new(false), tx: Mutex::new(Some(tx)) }),
            rx,
        }
    }

    /// Cancels: sets the flag, then disconnects the channel to wake every waiter.
    pub fn cancel(&self) {
        self.inner.flag.store(true, Ordering::SeqCst);
        crate::sync::lock(&self.inner.tx).take();
    }

    /// Whether `cancel` was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.flag.load(Ordering::SeqCst)
    }

    /// A receiver that becomes ready (disconnected) on cancel; use it in `select!`.
    pub fn channel(&self) -> &Receiver<()> {
        &self.rx
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn cancel_wakes_a_waiting_select() {
        let token = CancelToken::new();
        let waiter = token.clone();
        let handle = std::thread::spawn(move || {
            crossbeam_channel::select! {
                recv(waiter.channel()) -> _ => waiter.is_cancelled(),
                default(Duration::from_secs(10)) => false,
            }
        });
        token.cancel();
        assert!(handle.join().unwrap());
    }
}
