//! A terminal for the terminal client: a pseudo-terminal whose output feeds a `vt100`
//! screen (what a person would see, escape codes applied), that answers the cursor
//! position report (`ESC [ 6 n`) as a terminal does, can be resized (the child gets
//! SIGWINCH: the terminal is its controlling one) and waits on what the screen shows with
//! a bounded deadline.
#![allow(unsafe_code)]

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What the screen shows, everything written, and whether the child's side closed.
struct State {
    parser: vt100::Parser,
    raw: Vec<u8>,
    closed: bool,
}

type Shared = Arc<(Mutex<State>, Condvar)>;

/// The child on a terminal of `rows` × `cols`.
pub struct Screen {
    master: File,
    child: Child,
    shared: Shared,
}

const QUERY: &[u8] = b"\x1b[6n";

fn set_size(fd: i32, rows: u16, cols: u16) {
    let size = libc::winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCSWINSZ reads a winsize we own.
    let rc = unsafe { libc::ioctl(fd, libc::TIOCSWINSZ, &size) };
    assert_eq!(rc, 0, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
}

impl Screen {
    /// Starts `command` on a new terminal of `rows` × `cols` (its controlling terminal).
    pub fn spawn(mut command: Command, rows: u16, cols: u16) -> Screen {
        let (master, path) = super::pty::open();
        set_size(master.as_raw_fd(), rows, cols);
        let slave =
            std::fs::OpenOptions::new().read(true).write(true).open(&path).expect("open the pty");
        command
            .stdin(Stdio::from(slave.try_clone().expect("dup")))
            .stdout(Stdio::from(slave.try_clone().expect("dup")))
            .stderr(Stdio::from(slave));
        // SAFETY: setsid and ioctl are async-signal-safe; fd 0 is the terminal.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("spawn on the pty");
        drop(command);
        let master = File::from(master);
        let shared: Shared = Arc::new((
            Mutex::new(State {
                parser: vt100::Parser::new(rows, cols, 10_000),
                raw: Vec::new(),
                closed: false,
            }),
            Condvar::new(),
        ));
        let (mut reader, mut answer, for_reader) = (
            master.try_clone().expect("dup"),
            master.try_clone().expect("dup"),
            Arc::clone(&shared),
        );
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                let n = reader.read(&mut buf).unwrap_or(0);
                let (lock, changed) = &*for_reader;
                let mut state = lock.lock().unwrap();
                if n == 0 {
                    state.closed = true;
                    changed.notify_all();
                    return;
                }
                let bytes = &buf[..n];
                // Answer each position query where it stands in the output.
                let mut rest = bytes;
                while let Some(at) = rest.windows(QUERY.len()).position(|w| w == QUERY) {
                    state.parser.process(&rest[..at]);
                    let (row, col) = state.parser.screen().cursor_position();
                    let _ = write!(answer, "\x1b[{};{}R", row + 1, col + 1);
                    rest = &rest[at + QUERY.len()..];
                }
                state.parser.process(rest);
                state.raw.extend_from_slice(bytes);
                changed.notify_all();
            }
        });
        Screen { master, child, shared }
    }

    /// Everything the child wrote, escape codes and all.
    pub fn raw(&self) -> Vec<u8> {
        self.shared.0.lock().unwrap().raw.clone()
    }

    /// The screen's text with the scrollback above it.
    pub fn all_text(&self) -> String {
        let mut state = self.shared.0.lock().unwrap();
        let parser = &mut state.parser;
        parser.set_scrollback(usize::MAX);
        let back = parser.screen().scrollback();
        let cols = parser.screen().size().1;
        let mut rows = Vec::new();
        for offset in (1..=back).rev() {
            parser.set_scrollback(offset);
            rows.push(parser.screen().rows(0, cols).next().unwrap_or_default());
        }
        parser.set_scrollback(0);
        rows.push(parser.screen().contents());
        rows.join("\n")
    }

    /// Waits (20 s at most) until `check` holds for the screen's text (with scrollback).
    pub fn wait_until(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = self.all_text();
            if check(&text) {
                return text;
            }
            let (lock, changed) = &*self.shared;
            let state = lock.lock().unwrap();
            let now = Instant::now();
            let tail = &state.raw[state.raw.len().saturating_sub(800)..];
            assert!(
                now < deadline && !state.closed || check(&text),
                "never {what}; the screen shows:\n{text}\nthe last bytes written: {:?}",
                String::from_utf8_lossy(tail)
            );
            let _ = changed
                .wait_timeout(state, (deadline - now).min(Duration::from_millis(200)))
                .unwrap();
        }
    }

    /// As [`Screen::wait_until`] on the visible screen only (cheap with a long scrollback).
    #[allow(dead_code, reason = "benches/tui.rs, which includes this file, waits with it")]
    pub fn wait_screen(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        let (lock, changed) = &*self.shared;
        let mut state = lock.lock().unwrap();
        loop {
            let text = state.parser.screen().contents();
            if check(&text) {
                return text;
            }
            let now = Instant::now();
            assert!(now < deadline && !state.closed, "never {what}; the screen shows:\n{text}");
            state = changed.wait_timeout(state, deadline - now).unwrap().0;
        }
    }

    /// Waits until the screen (or its scrollback) shows `text`.
    pub fn expect(&self, text: &str) -> String {
        self.wait_until(&format!("showed {text:?}"), |t| t.contains(text))
    }

    /// Types `text` (escape sequences as a terminal sends them).
    pub fn send(&mut self, text: &str) {
        self.master.write_all(text.as_bytes()).expect("write to the pty");
        self.master.flush().expect("flush the pty");
    }

    /// Resizes the terminal (the child gets SIGWINCH) and the screen.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let mut state = self.shared.0.lock().unwrap();
        state.parser.set_size(rows, cols);
        set_size(self.master.as_raw_fd(), rows, cols);
    }

    /// Whether the terminal is in raw mode (no canonical input, no echo).
    pub fn raw_mode(&self) -> bool {
        // SAFETY: termios is plain data that tcgetattr fills in.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            assert_eq!(libc::tcgetattr(self.master.as_raw_fd(), &mut t), 0, "tcgetattr");
            t.c_lflag & (libc::ICANON | libc::ECHO) == 0
        }
    }

    /// As [`Screen::wait`], and whether the terminal was left in raw mode.
    pub fn wait_with_mode(self) -> (ExitStatus, String, bool) {
        let master = self.master.try_clone().expect("dup");
        let (status, text) = self.wait();
        // SAFETY: termios is plain data that tcgetattr fills in.
        let raw = unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            assert_eq!(libc::tcgetattr(master.as_raw_fd(), &mut t), 0, "tcgetattr");
            t.c_lflag & (libc::ICANON | libc::ECHO) == 0
        };
        (status, text, raw)
    }

    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits (20 s at most) for the child to exit; its status and the screen's text.
    pub fn wait(mut self) -> (ExitStatus, String) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                // The last output is read once the terminal's other side has closed.
                let (lock, changed) = &*self.shared;
                let mut state = lock.lock().unwrap();
                let end = Instant::now() + Duration::from_secs(5);
                while !state.closed && Instant::now() < end {
                    state = changed.wait_timeout(state, Duration::from_millis(100)).unwrap().0;
                }
                drop(state);
                return (status, self.all_text());
            }
            assert!(
                Instant::now() < deadline,
                "the client did not exit; it shows:\n{}",
                self.all_text()
            );
            let (lock, changed) = &*self.shared;
            let state = lock.lock().unwrap();
            let _ = changed.wait_timeout(state, Duration::from_millis(50)).unwrap();
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
