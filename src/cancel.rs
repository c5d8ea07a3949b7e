//! `CancelToken`: a flag for cheap checks between steps, a channel that disconnects on
//! cancel (so a `select!` wakes at once even while a stream or a child is silent), and
//! hooks that run on cancel (so a thread blocked in a read can be freed by closing what it
//! reads, without a second thread watching for the cancel).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender};

/// What runs on cancel.
type Hook = Box<dyn FnOnce() + Send>;

/// Shared by everyone working on one prompt turn.
#[derive(Clone)]
pub struct CancelToken {
    inner: Arc<Inner>,
    rx: Receiver<()>,
}

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelToken").field("cancelled", &self.is_cancelled()).finish()
    }
}

struct Inner {
    flag: AtomicBool,
    state: Mutex<State>,
}

struct State {
    /// Dropped on cancel.
    tx: Option<Sender<()>>,
    hooks: Vec<(u64, Hook)>,
    next_hook: u64,
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
        let state = State { tx: Some(tx), hooks: Vec::new(), next_hook: 0 };
        CancelToken {
            inner: Arc::new(Inner { flag: AtomicBool::new(false), state: Mutex::new(state) }),
            rx,
        }
    }

    /// Cancels: sets the flag, disconnects the channel to wake every waiter, then runs the
    /// hooks (on this thread, once each).
    pub fn cancel(&self) {
        self.inner.flag.store(true, Ordering::SeqCst);
        let hooks = {
            let mut state = crate::sync::lock(&self.inner.state);
            state.tx.take();
            std::mem::take(&mut state.hooks)
        };
        for (_, hook) in hooks {
            hook();
        }
    }

    /// Whether `cancel` was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.flag.load(Ordering::SeqCst)
    }

    /// A receiver that becomes ready (disconnected) on cancel; use it in `select!`.
    pub fn channel(&self) -> &Receiver<()> {
        &self.rx
    }

    /// Runs `hook` on cancel (at once if the token is already cancelled), unless the
    /// returned guard was dropped first. The hook runs on the cancelling thread: it must
    /// be quick and must not wait for the thread that registered it.
    pub fn on_cancel(&self, hook: impl FnOnce() + Send + 'static) -> OnCancel {
        let mut state = crate::sync::lock(&self.inner.state);
        if state.tx.is_none() {
            drop(state);
            hook();
            return OnCancel { inner: Arc::clone(&self.inner), id: None };
        }
        let id = state.next_hook;
        state.next_hook += 1;
        state.hooks.push((id, Box::new(hook)));
        OnCancel { inner: Arc::clone(&self.inner), id: Some(id) }
    }
}

/// Keeps a hook registered with `CancelToken::on_cancel`; dropping it forgets the hook.
#[must_use = "the hook is forgotten when this guard is dropped"]
pub struct OnCancel {
    inner: Arc<Inner>,
    id: Option<u64>,
}

impl Drop for OnCancel {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            crate::sync::lock(&self.inner.state).hooks.retain(|(hook, _)| *hook != id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
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

    #[test]
    fn hooks_run_once_on_cancel_unless_forgotten_and_at_once_when_late() {
        let token = CancelToken::new();
        let runs = Arc::new(AtomicUsize::new(0));
        let counter = |n: usize| {
            let runs = Arc::clone(&runs);
            move || {
                runs.fetch_add(n, Ordering::SeqCst);
            }
        };
        let kept = token.on_cancel(counter(1));
        drop(token.on_cancel(counter(100)));
        assert_eq!(runs.load(Ordering::SeqCst), 0);
        token.cancel();
        token.cancel();
        assert_eq!(runs.load(Ordering::SeqCst), 1, "the kept hook ran once, the dropped never");
        let _late = token.on_cancel(counter(10));
        assert_eq!(runs.load(Ordering::SeqCst), 11, "registered after the cancel: ran at once");
        drop(kept);
    }
}
