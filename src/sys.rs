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

/// Unblocks `signals` in the calling thread.
pub fn unblock_signals(signals: &[i32]) -> io::Result<()> {
    mask(libc::SIG_UNBLOCK, signals)
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

pub use fsat::{mkdir_at, open_at, open_beneath, rename_at, unlink_at};

/// Race-free file access relative to directory descriptors: `openat2` with
/// `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` where the kernel has it
/// (Linux ≥ 5.6), else a walk one component at a time with `O_NOFOLLOW`.
mod fsat {
    use std::ffi::CString;
    use std::io;
    use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Component, Path};
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Set once `openat2` answered ENOSYS (an old kernel): the walk is used from then on.
    static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

    fn c_name(name: &[u8]) -> io::Result<CString> {
        CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"))
    }

    fn owned(rc: i32) -> io::Result<OwnedFd> {
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor the kernel just returned to us, owned by nobody else.
        Ok(unsafe { OwnedFd::from_raw_fd(rc) })
    }

    /// `openat(dir, name, flags | O_CLOEXEC | O_NOFOLLOW, mode)` for one plain name.
    pub fn open_at(dir: BorrowedFd, name: &[u8], flags: i32, mode: u32) -> io::Result<OwnedFd> {
        let name = c_name(name)?;
        let flags = flags | libc::O_CLOEXEC | libc::O_NOFOLLOW;
        // SAFETY: a valid directory descriptor and a NUL-terminated name we own.
        owned(unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, mode) })
    }

    /// Opens `rel` (relative, plain components only: no `..`, no root) beneath `dir`
    /// without following any symlink on the way, the last component included. `flags`
    /// are `open(2)` flags; `O_CLOEXEC` is always added.
    pub fn open_beneath(dir: BorrowedFd, rel: &Path, flags: i32, mode: u32) -> io::Result<OwnedFd> {
        let mut parts = Vec::new();
        for component in rel.components() {
            match component {
                Component::Normal(name) => parts.push(name.as_bytes()),
                Component::CurDir => {}
                _ => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "only plain path components may be opened beneath a directory",
                    ));
                }
            }
        }
        if parts.is_empty() {
            parts.push(b".");
        }
        if !NO_OPENAT2.load(Ordering::Relaxed) {
            match openat2(dir, &parts.join(&b'/'), flags, mode) {
                Err(err) if err.raw_os_error() == Some(libc::ENOSYS) => {
                    NO_OPENAT2.store(true, Ordering::Relaxed);
                }
                other => return other,
            }
        }
        walk(dir, &parts, flags, mode)
    }

    fn openat2(dir: BorrowedFd, rel: &[u8], flags: i32, mode: u32) -> io::Result<OwnedFd> {
        let rel = c_name(rel)?;
        // SAFETY: open_how is plain data; every field is set below.
        let mut how: libc::open_how = unsafe { std::mem::zeroed() };
        how.flags = (flags | libc::O_CLOEXEC) as u64;
        how.mode = if flags & (libc::O_CREAT | libc::O_TMPFILE) != 0 { mode as u64 } else { 0 };
        how.resolve =
            libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
        loop {
            // SAFETY: openat2 reads the NUL-terminated path and the open_how we own, of
            // the size we pass.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_openat2,
                    dir.as_raw_fd(),
                    rel.as_ptr(),
                    &how as *const libc::open_how,
                    std::mem::size_of::<libc::open_how>(),
                )
            };
            // EAGAIN: a concurrent rename elsewhere on the system; the kernel asks to retry.
            if rc < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EAGAIN) {
                continue;
            }
            return owned(rc as i32);
        }
    }

    /// The fallback: every directory on the way opened `O_DIRECTORY | O_NOFOLLOW`.
    pub(super) fn walk(
        dir: BorrowedFd,
        parts: &[&[u8]],
        flags: i32,
        mode: u32,
    ) -> io::Result<OwnedFd> {
        let mut current: Option<OwnedFd> = None;
        let last = parts.len() - 1;
        for (i, part) in parts.iter().enumerate() {
            let at = current.as_ref().map_or(dir, |fd| {
                // SAFETY-free: borrowing a descriptor we own for the next call.
                std::os::fd::AsFd::as_fd(fd)
            });
            let step_flags = if i == last { flags } else { libc::O_PATH | libc::O_DIRECTORY };
            current = Some(open_at(at, part, step_flags, mode)?);
        }
        current.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty path"))
    }

    /// `mkdirat(dir, name, mode)`.
    pub fn mkdir_at(dir: BorrowedFd, name: &[u8], mode: u32) -> io::Result<()> {
        let name = c_name(name)?;
        // SAFETY: a valid directory descriptor and a NUL-terminated name we own.
        let rc = unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), mode as libc::mode_t) };
        if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }

    /// `renameat(dir, from, dir, to)`: replaces `to` atomically within one directory.
    pub fn rename_at(dir: BorrowedFd, from: &[u8], to: &[u8]) -> io::Result<()> {
        let (from, to) = (c_name(from)?, c_name(to)?);
        let fd = dir.as_raw_fd();
        // SAFETY: one valid directory descriptor and two NUL-terminated names we own.
        let rc = unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) };
        if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }

    /// `unlinkat(dir, name, 0)`.
    pub fn unlink_at(dir: BorrowedFd, name: &[u8]) -> io::Result<()> {
        let name = c_name(name)?;
        // SAFETY: a valid directory descriptor and a NUL-terminated name we own.
        let rc = unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) };
        if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use std::os::fd::AsFd;

        #[test]
        fn symlinks_and_escapes_are_refused_by_both_ways() {
            let dir = std::env::temp_dir().join(format!("iac-fsat-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("a/b")).unwrap();
            std::fs::write(dir.join("a/b/f"), "x").unwrap();
            std::os::unix::fs::symlink("/etc", dir.join("a/link")).unwrap();
            std::os::unix::fs::symlink("b/f", dir.join("a/flink")).unwrap();
            let root = std::fs::File::open(&dir).unwrap();
            let fd = root.as_fd();
            let ro = libc::O_RDONLY;
            assert!(open_beneath(fd, Path::new("a/b/f"), ro, 0).is_ok());
            assert!(open_beneath(fd, Path::new("a/link/hostname"), ro, 0).is_err());
            assert!(open_beneath(fd, Path::new("a/flink"), ro, 0).is_err());
            assert!(open_beneath(fd, Path::new("../x"), ro, 0).is_err());
            let parts = |p: &'static str| p.split('/').map(str::as_bytes).collect::<Vec<_>>();
            assert!(walk(fd, &parts("a/b/f"), ro, 0).is_ok());
            assert!(walk(fd, &parts("a/link/hostname"), ro, 0).is_err());
            assert!(walk(fd, &parts("a/flink"), ro, 0).is_err());
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}
