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
/// SIGTERM, for callers that do not import libc.
pub const SIGTERM: i32 = libc::SIGTERM;

/// SIGHUP (the terminal went away), for callers that do not import libc.
pub const SIGHUP: i32 = libc::SIGHUP;
/// SIGWINCH (the terminal's size changed), for callers that do not import libc.
pub const SIGWINCH: i32 = libc::SIGWINCH;
/// SIGINT, for callers that do not import libc.
pub const SIGINT: i32 = libc::SIGINT;
/// SIGQUIT, for callers that do not import libc.
pub const SIGQUIT: i32 = libc::SIGQUIT;

/// Re-arms `listen(2)` on an already listening socket with a larger backlog (std uses 128),
/// so that a burst of connections is queued instead of retried.
pub fn set_backlog(listener: &std::net::TcpListener, backlog: i32) -> io::Result<()> {
    // SAFETY: listen(2) on a descriptor the listener owns and keeps open during the call.
    let rc = unsafe { libc::listen(listener.as_raw_fd(), backlog) };
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

/// Sends what the socket takes now without waiting (`MSG_DONTWAIT`, whatever the socket's
/// mode, so other threads blocked on it are unaffected): the count sent, `WouldBlock` when
/// its send buffer is full. Never raises SIGPIPE.
pub fn send_now(socket: &std::net::TcpStream, bytes: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: send(2) reads `bytes.len()` bytes from a live slice, on a descriptor the
        // stream owns and keeps open during the call.
        let rc = unsafe {
            libc::send(
                socket.as_raw_fd(),
                bytes.as_ptr().cast(),
                bytes.len(),
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        };
        if rc >= 0 {
            return Ok(rc as usize);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Whether the peer closed its end or the socket failed, looked at without waiting and
/// without consuming anything (`MSG_PEEK | MSG_DONTWAIT`).
pub fn peer_closed(socket: &std::net::TcpStream) -> bool {
    let mut byte = 0u8;
    // SAFETY: recv(2) writes at most one byte into a live local, on a descriptor the
    // stream owns and keeps open during the call.
    let rc = unsafe {
        libc::recv(
            socket.as_raw_fd(),
            (&raw mut byte).cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    match rc {
        0 => true,
        1.. => false,
        _ => !matches!(
            io::Error::last_os_error().kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
        ),
    }
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

fn signal_set(signals: &[i32]) -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it before use.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: the set is a valid, owned sigset_t.
    unsafe {
        libc::sigemptyset(&mut set);
        for signal in signals {
            libc::sigaddset(&mut set, *signal);
        }
    }
    set
}

const TERMINATION: [i32; 2] = [libc::SIGTERM, libc::SIGINT];

/// SIGCHLD, for callers that do not import libc.
pub const SIGCHLD: i32 = libc::SIGCHLD;

fn mask(how: i32, signals: &[i32]) -> io::Result<()> {
    let set = signal_set(signals);
    // SAFETY: pthread_sigmask with a valid set and no old-set output.
    let rc = unsafe { libc::pthread_sigmask(how, &set, std::ptr::null_mut()) };
    if rc != 0 { Err(io::Error::from_raw_os_error(rc)) } else { Ok(()) }
}

/// Blocks `signals` in the calling thread (and the threads it starts later).
pub fn block_signals(signals: &[i32]) -> io::Result<()> {
    mask(libc::SIG_BLOCK, signals)
}

/// Runs `f` with `signals` blocked in the calling thread (so that a thread `f` starts
/// begins with them blocked), then gives the calling thread back its mask as it was.
pub fn with_signals_blocked<T>(signals: &[i32], f: impl FnOnce() -> T) -> io::Result<T> {
    let set = signal_set(signals);
    // SAFETY: sigset_t is plain data; pthread_sigmask fills it in.
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: a valid set, and our own sigset_t for the old mask.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    let result = f();
    // SAFETY: restores the mask read above.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    if rc != 0 { Err(io::Error::from_raw_os_error(rc)) } else { Ok(result) }
}

/// Waits for one of `signals` (blocked beforehand); returns its number.
pub fn wait_signal(signals: &[i32]) -> io::Result<i32> {
    let set = signal_set(signals);
    let mut signal = 0;
    // SAFETY: sigwait reads the set and writes the signal number into our i32.
    let rc = unsafe { libc::sigwait(&set, &mut signal) };
    if rc != 0 { Err(io::Error::from_raw_os_error(rc)) } else { Ok(signal) }
}

/// Blocks SIGTERM and SIGINT in the calling thread and every thread it starts later, so
/// that `wait_for_termination` receives them. Call before starting any thread.
pub fn block_termination_signals() -> io::Result<()> {
    block_signals(&TERMINATION)
}

/// The termination signals, for masks that must include them.
pub const TERMINATION_SIGNALS: [i32; 2] = TERMINATION;

/// Waits for SIGTERM or SIGINT (blocked beforehand); returns the signal number.
pub fn wait_for_termination() -> io::Result<i32> {
    wait_signal(&TERMINATION)
}

/// The process's standard output, for the commands that print to it (one-shot mode,
/// `doctor`, `sessions`). The ACP stdio transport never uses it: it owns a private copy
/// of fd 1 (`take_stdout`).
pub fn stdout() -> io::Stdout {
    io::stdout()
}

/// Makes this process a child subreaper (`PR_SET_CHILD_SUBREAPER`): descendants whose
/// parent dies are re-parented to it instead of to init, so a daemonising process stays
/// within reach.
pub fn set_child_subreaper() -> io::Result<()> {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes plain integers.
    let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

/// Puts SIGCHLD back to its default action: inherited as ignored, the kernel would reap our
/// children by itself and no exit status could ever be read.
pub fn default_sigchld() {
    // SAFETY: signal(2) with a constant signal and the default disposition.
    unsafe {
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
    }
}

/// How a reaped child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
}

/// Waits for any child to end and reaps it (`waitpid(-1)`). `Ok(None)`: no child is left.
pub fn wait_any() -> io::Result<Option<(u32, Ended)>> {
    wait_pid(-1, 0)
}

/// Reaps `pid` if it has ended, without waiting.
pub fn reap(pid: u32) -> io::Result<Option<(u32, Ended)>> {
    let Ok(pid) = i32::try_from(pid) else { return Ok(None) };
    wait_pid(pid, libc::WNOHANG)
}

fn wait_pid(pid: i32, flags: i32) -> io::Result<Option<(u32, Ended)>> {
    let mut status = 0;
    loop {
        // SAFETY: waitpid writes the status into our i32.
        let rc = unsafe { libc::waitpid(pid, &mut status, flags) };
        if rc > 0 {
            let ended = if libc::WIFSIGNALED(status) {
                Ended::Signal(libc::WTERMSIG(status))
            } else {
                Ended::Code(libc::WEXITSTATUS(status))
            };
            return Ok(Some((rc as u32, ended)));
        }
        if rc == 0 {
            return Ok(None);
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::ECHILD) => return Ok(None),
            _ => return Err(err),
        }
    }
}

/// Points `fd` (0, 1 or 2) at `/dev/null`.
pub fn redirect_to_null(fd: i32) -> io::Result<()> {
    let null = File::options().read(true).write(true).open("/dev/null")?;
    // SAFETY: dup2 of a descriptor we own onto one of the standard descriptors.
    let rc = unsafe { libc::dup2(null.as_raw_fd(), fd) };
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

/// The effective user id of this process.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

pub use diag::tcp_owner;
pub use fsat::{Entry, mkdir_at, open_at, open_beneath, rename_at, stat_at, unlink_at};

mod diag;
mod fsat;
pub mod own_file;
pub mod sandbox;
pub mod tty;
