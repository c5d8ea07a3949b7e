//! A terminal's input without echo, for a secret typed at a prompt (`iac-code login`'s
//! API key): echo, line editing and signal keys off while it is read, the terminal's own
//! settings restored however the read ends.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};

/// The terminal on `fd` with echo, canonical mode and signal keys off, one byte per read;
/// its settings are restored when this is dropped.
pub struct Hidden {
    fd: RawFd,
    saved: libc::termios,
}

impl Hidden {
    /// Turns echo off on the terminal `fd` (an error if `fd` is not a terminal).
    pub fn new(fd: BorrowedFd<'_>) -> io::Result<Hidden> {
        let fd = fd.as_raw_fd();
        // SAFETY: termios is plain old data; an all-zero value is valid and tcgetattr fills
        // it in; `fd` is borrowed, so open for the call.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: as above; `saved` is a valid, writable termios.
        if unsafe { libc::tcgetattr(fd, &mut saved) } < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut hidden = saved;
        hidden.c_lflag &= !(libc::ECHO | libc::ECHONL | libc::ICANON | libc::ISIG);
        hidden.c_cc[libc::VMIN] = 1;
        hidden.c_cc[libc::VTIME] = 0;
        // SAFETY: `hidden` is a valid termios read from this terminal and changed in flags.
        if unsafe { libc::tcsetattr(fd, libc::TCSAFLUSH, &hidden) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Hidden { fd, saved })
    }
}

impl Drop for Hidden {
    fn drop(&mut self) {
        // SAFETY: restores the settings read from the same descriptor in `new`; a failure
        // (the terminal gone) leaves nothing to restore.
        unsafe { libc::tcsetattr(self.fd, libc::TCSANOW, &self.saved) };
    }
}
