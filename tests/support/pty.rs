//! A real pseudo-terminal for driving an interactive command (`iac-code login`): the child
//! gets the terminal's side as stdin, stdout and stderr, the test reads what it shows
//! (`expect`) and types (`send`). Echo, line editing and no-echo input behave as in a
//! terminal, because the kernel's line discipline is between the two sides.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Everything the child wrote (and the terminal echoed), and whether the reader ended,
/// with the condvar that tells of each change.
type Seen = Arc<(Mutex<(Vec<u8>, bool)>, Condvar)>;

/// A child running on a pseudo-terminal.
pub struct Pty {
    master: File,
    child: Child,
    seen: Seen,
}

/// Opens a pseudo-terminal: (master, the terminal's path).
pub(crate) fn open() -> (OwnedFd, String) {
    // SAFETY: posix_openpt returns a new descriptor or -1; grantpt, unlockpt and
    // ptsname_r act on that descriptor, and ptsname_r writes at most `buf.len()` bytes.
    unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(fd >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        let master = OwnedFd::from_raw_fd(fd);
        assert_eq!(libc::grantpt(fd), 0, "grantpt");
        assert_eq!(libc::unlockpt(fd), 0, "unlockpt");
        let mut buf = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(fd, buf.as_mut_ptr(), buf.len()), 0, "ptsname_r");
        let path = CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
        (master, path)
    }
}

impl Pty {
    /// Starts `command` with the terminal as its stdin, stdout and stderr.
    pub fn spawn(mut command: Command) -> Pty {
        let (master, path) = open();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("cannot open {path}: {e}"));
        let child = command
            .stdin(Stdio::from(slave.try_clone().expect("dup")))
            .stdout(Stdio::from(slave.try_clone().expect("dup")))
            .stderr(Stdio::from(slave))
            .spawn()
            .expect("cannot spawn the command on the pty");
        // The parent's copies of the terminal's side are gone (moved into the Command,
        // which the spawn consumed): the master reads EIO once the child exits.
        drop(command);
        let master = File::from(master);
        let seen: Seen = Arc::new((Mutex::new((Vec::new(), false)), Condvar::new()));
        let (mut reader, for_reader) = (master.try_clone().expect("dup"), Arc::clone(&seen));
        thread::Builder::new()
            .name("pty-reader".into())
            .spawn(move || {
                let mut buf = [0u8; 4096];
                loop {
                    let n = reader.read(&mut buf).unwrap_or(0);
                    let (lock, changed) = &*for_reader;
                    let mut seen = lock.lock().unwrap();
                    if n == 0 {
                        seen.1 = true;
                        changed.notify_all();
                        return;
                    }
                    seen.0.extend_from_slice(&buf[..n]);
                    changed.notify_all();
                }
            })
            .expect("cannot spawn the pty reader");
        Pty { master, child, seen }
    }

    /// Everything shown so far, as text.
    pub fn shown(&self) -> String {
        String::from_utf8_lossy(&self.seen.0.lock().unwrap().0).into_owned()
    }

    /// Waits until the screen shows `text`; panics with what it shows after 20 s.
    pub fn expect(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        let (lock, changed) = &*self.seen;
        let mut seen = lock.lock().unwrap();
        loop {
            if String::from_utf8_lossy(&seen.0).contains(text) {
                return;
            }
            let now = Instant::now();
            assert!(
                now < deadline && !seen.1,
                "the terminal never showed {text:?}; it shows:\n{}",
                String::from_utf8_lossy(&seen.0)
            );
            seen = changed.wait_timeout(seen, deadline - now).unwrap().0;
        }
    }

    /// Types `text`.
    pub fn send(&mut self, text: &str) {
        self.master.write_all(text.as_bytes()).expect("cannot write to the pty");
        self.master.flush().expect("cannot flush the pty");
    }

    /// Waits (20 s at most) for the child to exit (the terminal's last side closes, so its
    /// reader ends); returns its status and everything it showed.
    pub fn wait(mut self) -> (ExitStatus, String) {
        let deadline = Instant::now() + Duration::from_secs(20);
        {
            let (lock, changed) = &*self.seen;
            let mut seen = lock.lock().unwrap();
            while !seen.1 {
                let now = Instant::now();
                if now >= deadline {
                    drop(seen);
                    let _ = self.child.kill();
                    panic!("the command did not exit; it shows:\n{}", self.shown());
                }
                seen = changed.wait_timeout(seen, deadline - now).unwrap().0;
            }
        }
        let status = self.child.wait().expect("wait");
        (status, self.shown())
    }
}

impl Pty {
    /// As [`Pty::wait`], and whether the terminal echoes input once the child is gone
    /// (a program that turned echo off must turn it back on).
    pub fn wait_with_echo(self) -> (ExitStatus, String, bool) {
        let master = self.master.try_clone().expect("dup");
        let (status, shown) = self.wait();
        // SAFETY: termios is plain old data; tcgetattr on the master reads the terminal's
        // settings into it.
        let echo = unsafe {
            let mut termios: libc::termios = std::mem::zeroed();
            assert_eq!(libc::tcgetattr(master.as_raw_fd(), &mut termios), 0, "tcgetattr");
            termios.c_lflag & libc::ECHO != 0
        };
        (status, shown, echo)
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
