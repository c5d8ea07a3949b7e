//! The idle watchdog of streaming replies: one thread for the whole process (started with
//! the first stream) that fires a stream's action when it has read nothing for its limit.
//! A stream is read on its prompt's own thread; feeding the watchdog is one clock read and
//! one atomic store per socket read, and the watchdog wakes only when a limit could be
//! reached, not per event.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// What runs when a stream has been idle too long.
type Action = Box<dyn FnOnce() + Send>;

struct Entry {
    /// Microseconds from `epoch()` to the start of the read under way, or `PAUSED`.
    armed: AtomicU64,
    limit: Duration,
    fired: AtomicBool,
    action: Mutex<Option<Action>>,
}

/// No read under way: the time the caller spends with what it read is not idleness.
const PAUSED: u64 = u64::MAX;

impl Entry {
    /// When the limit runs out if nothing is read; for a paused entry, the soonest that
    /// could be (were a read to start now), so that the watchdog looks again by then.
    fn deadline(&self, now: Instant) -> Instant {
        match self.armed.load(Ordering::SeqCst) {
            PAUSED => now + self.limit,
            since => epoch() + Duration::from_micros(since) + self.limit,
        }
    }
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn micros_now() -> u64 {
    Instant::now().saturating_duration_since(epoch()).as_micros() as u64
}

/// One watched stream: only the time spent waiting in a read counts. Dropping it stops
/// the watch.
pub(super) struct Watch {
    entry: Arc<Entry>,
}

impl Watch {
    /// Watches, paused: `action` runs (on the watchdog's thread) once a read through
    /// `reader` waited `limit`. `None` when the watchdog's thread cannot start.
    pub(super) fn start(limit: Duration, action: impl FnOnce() + Send + 'static) -> Option<Watch> {
        let entry = Arc::new(Entry {
            armed: AtomicU64::new(PAUSED),
            limit,
            fired: AtomicBool::new(false),
            action: Mutex::new(Some(Box::new(action))),
        });
        let watchdog = watchdog()?;
        crate::sync::lock(&watchdog.entries).push(Arc::downgrade(&entry));
        watchdog.added.notify_one();
        Some(Watch { entry })
    }

    /// Whether the limit was reached (and the action ran).
    pub(super) fn fired(&self) -> bool {
        self.entry.fired.load(Ordering::SeqCst)
    }

    /// A reader whose reads are watched.
    pub(super) fn reader<R: Read>(&self, inner: R) -> Fed<'_, R> {
        Fed { inner, watch: self }
    }
}

/// A reader watched by a `Watch`.
pub(super) struct Fed<'a, R> {
    inner: R,
    watch: &'a Watch,
}

impl<R: Read> Read for Fed<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let armed = &self.watch.entry.armed;
        armed.store(micros_now(), Ordering::SeqCst);
        let read = self.inner.read(buf);
        armed.store(PAUSED, Ordering::SeqCst);
        read
    }
}

/// The watched streams (weakly: a dropped `Watch` is forgotten at the next look), and
/// whether the thread that watches them runs.
struct Watchdog {
    entries: Mutex<Vec<Weak<Entry>>>,
    added: Condvar,
    running: Mutex<bool>,
}

/// The watchdog, its thread started if it does not run (with the first watch; again if a
/// spawn failed before, so a passing shortage of threads is not remembered forever).
fn watchdog() -> Option<&'static Watchdog> {
    static WATCHDOG: OnceLock<Watchdog> = OnceLock::new();
    let watchdog = WATCHDOG.get_or_init(|| Watchdog {
        entries: Mutex::new(Vec::new()),
        added: Condvar::new(),
        running: Mutex::new(false),
    });
    let mut running = crate::sync::lock(&watchdog.running);
    if !*running {
        let spawned =
            std::thread::Builder::new().name("llm-idle".into()).spawn(|| watch_forever(watchdog));
        match spawned {
            Ok(_) => *running = true,
            Err(err) => {
                log::error!("cannot start the LLM idle watchdog: {err}");
                return None;
            }
        }
    }
    Some(watchdog)
}

/// The watchdog's thread: sleeps until the soonest deadline (or a new watch), fires what
/// ran out, forgets what was dropped or fired.
fn watch_forever(watchdog: &Watchdog) {
    let mut entries = crate::sync::lock(&watchdog.entries);
    loop {
        let now = Instant::now();
        let mut due = Vec::new();
        entries.retain(|weak| {
            let Some(entry) = weak.upgrade() else { return false };
            if entry.deadline(now) > now {
                return true;
            }
            due.push(entry);
            false
        });
        if !due.is_empty() {
            drop(entries);
            for entry in due {
                entry.fired.store(true, Ordering::SeqCst);
                let action = crate::sync::lock(&entry.action).take();
                // A panicking action must not take the watch of every other stream with it.
                if let Some(action) = action
                    && std::panic::catch_unwind(std::panic::AssertUnwindSafe(action)).is_err()
                {
                    log::error!("an LLM idle action panicked; the watchdog goes on");
                }
            }
            entries = crate::sync::lock(&watchdog.entries);
            continue;
        }
        let next = entries.iter().filter_map(Weak::upgrade).map(|e| e.deadline(now)).min();
        entries = match next {
            Some(at) => {
                let wait = at.saturating_duration_since(now);
                match watchdog.added.wait_timeout(entries, wait) {
                    Ok((entries, _)) => entries,
                    Err(poisoned) => poisoned.into_inner().0,
                }
            }
            None => watchdog.added.wait(entries).unwrap_or_else(|p| p.into_inner()),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossbeam_channel::Receiver;

    /// A reader that waits for each byte on a channel; the end when the sender is gone, an
    /// error after 10 s (a watchdog that never fires fails the test instead of hanging it).
    struct Gate(Receiver<u8>);

    impl Read for Gate {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.0.recv_timeout(Duration::from_secs(10)) {
                Ok(byte) => {
                    buf[0] = byte;
                    Ok(1)
                }
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => Ok(0),
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                    Err(io::Error::new(io::ErrorKind::TimedOut, "the watchdog never fired"))
                }
            }
        }
    }

    #[test]
    fn only_time_spent_waiting_in_a_read_counts_and_the_action_runs_once() {
        let limit = Duration::from_millis(100);
        let (fired_tx, fired_rx) = crossbeam_channel::unbounded();
        let (bytes_tx, bytes_rx) = crossbeam_channel::unbounded::<u8>();
        let gate = Arc::new(Mutex::new(Some(bytes_tx)));
        let closer = Arc::clone(&gate);
        // It says so before it closes the gate: the read then ends after the word is out.
        let watch = Watch::start(limit, move || {
            let _ = fired_tx.send(());
            closer.lock().unwrap().take();
        })
        .unwrap();
        // No read under way: three limits pass and nothing fires.
        assert!(fired_rx.recv_timeout(3 * limit).is_err());
        assert!(!watch.fired());
        // A read whose byte is there does not fire either.
        let mut reader = watch.reader(Gate(bytes_rx));
        gate.lock().unwrap().as_ref().unwrap().send(7).unwrap();
        let mut byte = [0u8; 1];
        assert_eq!(reader.read(&mut byte).unwrap(), 1);
        assert!(!watch.fired());
        // A read that waits past the limit: the action closes the gate and the read ends.
        let started = Instant::now();
        assert_eq!(reader.read(&mut byte).unwrap(), 0);
        assert!(started.elapsed() >= limit, "{:?}", started.elapsed());
        assert!(watch.fired());
        assert!(fired_rx.try_recv().is_ok());
        assert!(fired_rx.try_recv().is_err(), "the action ran once");
        // An action that panics leaves the watchdog watching the others.
        let (gate_tx, gate_rx) = crossbeam_channel::unbounded::<u8>();
        let gate_tx = Mutex::new(Some(gate_tx));
        let panicky = Watch::start(limit, move || {
            gate_tx.lock().unwrap().take();
            panic!("an idle action panics (on purpose, in a test)");
        })
        .unwrap();
        assert_eq!(panicky.reader(Gate(gate_rx)).read(&mut byte).unwrap(), 0);
        let (gate_tx, gate_rx) = crossbeam_channel::unbounded::<u8>();
        let gate_tx = Mutex::new(Some(gate_tx));
        let next = Watch::start(limit, move || drop(gate_tx.lock().unwrap().take())).unwrap();
        assert_eq!(next.reader(Gate(gate_rx)).read(&mut byte).unwrap(), 0);
        assert!(next.fired(), "the watchdog outlived the panic");
        // Dropping a watch lets its action go (the watchdog keeps no strong reference).
        let (tx, rx) = crossbeam_channel::unbounded::<()>();
        drop(Watch::start(limit, move || drop(tx)).unwrap());
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(10)),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected)
        );
    }
}
