//! The one module allowed to use `unsafe`: thin wrappers over libc calls that std does not
//! offer. Each wrapper is small, checked, and documented.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd};

/// Takes a private duplicate of stdout for the protocol writer and points fd 1 at stderr,
/// so that a stray write to stdout (ours or a dependency's) lands on stderr instead of
/// corrupting the JSON-RPC stream.
pub fn take_stdout() -> io::Result<File> {
    let proto = io::stdout().as_fd().try_clone_to_owned()?;
    // SAFETY: dup2 on two descriptors that are open for the life of the process; it only
    // replaces fd 1, which from now on nothing in this process uses for protocol output.
    let rc = unsafe { libc::dup2(io::stderr().as_raw_fd(), 1) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(File::from(proto))
}
