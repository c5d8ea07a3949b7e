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

/// Sends `signal` to every process in the group `pgid`. A group that no longer exists is
/// not an error.
pub fn kill_group(pgid: u32, signal: i32) -> io::Result<()> {
    let Ok(pgid) = i32::try_from(pgid) else { return Ok(()) };
    if pgid <= 1 {
        // kill(0 or -1, …) would reach our own group or every process we may signal.
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "refusing to signal group <= 1"));
    }
    // SAFETY: kill(2) takes plain integers and touches no memory of ours; a negative pid
    // names a process group, and pgid > 1 was checked above.
    let rc = unsafe { libc::kill(-pgid, signal) };
    checked(rc)
}

/// Sends `signal` to one process. A process that no longer exists is not an error.
pub fn kill_process(pid: u32, signal: i32) -> io::Result<()> {
    let Ok(pid) = i32::try_from(pid) else { return Ok(()) };
    if pid <= 1 || pid == std::process::id() as i32 {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "refusing to signal that pid"));
    }
    // SAFETY: as above; pid > 1 and not ourselves.
    let rc = unsafe { libc::kill(pid, signal) };
    checked(rc)
}

fn checked(rc: i32) -> io::Result<()> {
    if rc == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::ESRCH) => Ok(()),
        _ => Err(err),
    }
}

/// SIGKILL, for callers that do not import libc.
pub const SIGKILL: i32 = libc::SIGKILL;

/// Re-arms `listen(2)` on an already listening socket with a larger backlog (std uses 128),
/// so that a burst of connections is queued instead of retried.
pub fn set_backlog(listener: &std::net::TcpListener, backlog: i32) -> io::Result<()> {
    // SAFETY: listen(2) on a descriptor the listener owns and keeps open during the call.
    let rc = unsafe { libc::listen(listener.as_raw_fd(), backlog) };
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

/// Raises the soft limit on open files to the hard limit (a server holds one descriptor per
/// connection). Returns the new soft limit.
pub fn raise_open_files_limit() -> io::Result<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } < 0 {
        return Err(io::Error::last_os_error());
    }
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max;
        // SAFETY: setrlimit reads the struct we own.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(limit.rlim_cur)
}

fn termination_set() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it before use.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: the set is a valid, owned sigset_t.
    unsafe {
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
    }
    set
}

/// Blocks SIGTERM and SIGINT in the calling thread and every thread it starts later, so
/// that `wait_for_termination` receives them. Call before starting any thread.
pub fn block_termination_signals() -> io::Result<()> {
    let set = termination_set();
    // SAFETY: pthread_sigmask with a valid set and no old-set output.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if rc != 0 { Err(io::Error::from_raw_os_error(rc)) } else { Ok(()) }
}

/// Waits for SIGTERM or SIGINT (blocked beforehand); returns the signal number.
pub fn wait_for_termination() -> io::Result<i32> {
    let set = termination_set();
    let mut signal = 0;
    // SAFETY: sigwait reads the set and writes the signal number into our i32.
    let rc = unsafe { libc::sigwait(&set, &mut signal) };
    if rc != 0 { Err(io::Error::from_raw_os_error(rc)) } else { Ok(signal) }
}

/// The process's standard output, for the commands that print to it (one-shot mode,
/// `doctor`, `sessions`). The ACP stdio transport never uses it: it owns a private copy
/// of fd 1 (`take_stdout`).
pub fn stdout() -> io::Stdout {
    io::stdout()
}
