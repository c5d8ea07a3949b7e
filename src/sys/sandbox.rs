//! The raw calls of the sandbox (`crate::sandbox`): namespaces, the identity map, mounts,
//! the loopback interface, and what a sandboxed program's process does between `fork` and
//! `exec` (its own `/proc`, no capabilities, Landlock, seccomp). The policy (which paths,
//! which namespaces) is the sandbox room's; these only do what they are told.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// A new user namespace: the rest are owned by it, so no privilege is needed.
pub const NEW_USER: i32 = libc::CLONE_NEWUSER;
/// A private mount table.
pub const NEW_MOUNTS: i32 = libc::CLONE_NEWNS;
/// A network of its own: only a loopback interface, no route out.
pub const NEW_NETWORK: i32 = libc::CLONE_NEWNET;
/// Children start in a process namespace of their own (made by the program's process, in
/// `before_exec`: after it, a process can no longer start threads).
pub const NEW_PIDS: i32 = libc::CLONE_NEWPID;
/// System V IPC and POSIX message queues of its own.
pub const NEW_IPC: i32 = libc::CLONE_NEWIPC;

/// A flag `clone(2)` refuses in a probe (`CLONE_SIGHAND` without `CLONE_VM`): the test
/// switch's way to make the probe fail as a host without namespaces would.
pub const REFUSED: i32 = libc::CLONE_SIGHAND;

/// `mount_setattr(2)`'s attribute for a read-only mount (not in libc yet).
const MOUNT_ATTR_RDONLY: u64 = 0x1;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

fn cstr(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path with a NUL byte"))
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

/// Moves this process into new namespaces (`NEW_*` flags). For a user namespace the
/// process must have one thread.
pub fn unshare(flags: i32) -> io::Result<()> {
    // SAFETY: unshare(2) takes plain flags.
    check(unsafe { libc::unshare(flags) })
}

/// In a new user namespace: maps `uid` and `gid` (this process's ids outside) to the
/// same ids inside, one each; supplementary groups can no longer be changed.
pub fn map_identity(uid: u32, gid: u32) -> io::Result<()> {
    std::fs::write("/proc/self/setgroups", b"deny")?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    Ok(())
}

/// Stops mount events propagating between our new mount table and the host's, below `/`.
pub fn make_private() -> io::Result<()> {
    let root = cstr(Path::new("/"))?;
    // SAFETY: mount(2) with valid C strings and null pointers where the call allows them.
    check(unsafe {
        libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    })
}

/// Mounts `source` (and every mount below it) at `target`, as `mount --rbind`.
pub fn bind(source: &Path, target: &Path) -> io::Result<()> {
    let (source, target) = (cstr(source)?, cstr(target)?);
    // SAFETY: as above.
    check(unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    })
}

/// Makes the mount at `path` (with every mount below it when `recursive`) read-only, or
/// writable again.
pub fn set_read_only(path: &Path, read_only: bool, recursive: bool) -> io::Result<()> {
    let path = cstr(path)?;
    let (set, clear) = if read_only { (MOUNT_ATTR_RDONLY, 0) } else { (0, MOUNT_ATTR_RDONLY) };
    let attr = MountAttr { attr_set: set, attr_clr: clear, propagation: 0, userns_fd: 0 };
    let flags = if recursive { libc::AT_RECURSIVE } else { 0 };
    // SAFETY: mount_setattr(2) reads `size_of::<MountAttr>()` bytes of a live struct laid
    // out as the kernel's `struct mount_attr`, and a valid C string.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags as libc::c_uint,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

/// Mounts an empty file system at the directory `path` (read-only unless `writable`, to
/// lay out a few mount points in it first): what was there is out of sight.
pub fn mount_empty(path: &Path, writable: bool) -> io::Result<()> {
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    let flags = if writable { flags } else { flags | libc::MS_RDONLY };
    let (fs, target, opts) = (cstr(Path::new("tmpfs"))?, cstr(path)?, cstr(Path::new("size=4k"))?);
    // SAFETY: mount(2) with valid C strings.
    check(unsafe {
        libc::mount(fs.as_ptr(), target.as_ptr(), fs.as_ptr(), flags, opts.as_ptr().cast())
    })
}

/// Brings up the loopback interface of a new network namespace, so that a program may
/// still talk to itself (a test suite's own server).
pub fn loopback_up() -> io::Result<()> {
    // SAFETY: socket(2) with constants; the descriptor is closed below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: ifreq is plain data; zeroed is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    req.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_LOOPBACK | libc::IFF_RUNNING) as i16;
    // SAFETY: ioctl(2) SIOCSIFFLAGS reads a live ifreq; fd is ours.
    let rc = unsafe { libc::ioctl(fd, libc::SIOCSIFFLAGS as _, &raw const req) };
    let result = check(rc);
    // SAFETY: fd is ours and closed once.
    unsafe { libc::close(fd) };
    result
}

/// The Landlock ABI version the kernel offers; 0 when it has none (or it is disabled).
pub fn landlock_abi() -> i32 {
    const VERSION: libc::c_uint = 1;
    // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns a number.
    let rc = unsafe {
        libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, VERSION)
    };
    i32::try_from(rc).unwrap_or(0).max(0)
}

/// Starts a child in new namespaces (`flags`, the `NEW_*` constants) that exits at once:
/// its pid, or why the kernel would not make them. The kernel's answer about a sandbox's
/// namespaces without changing this process and without the machinery of `Command` (no
/// exec, no pipe, no environment copied), so that a probe at start-up stays cheap.
pub fn clone_and_exit(flags: i32) -> io::Result<u32> {
    let flags = (flags as libc::c_ulong) | libc::SIGCHLD as libc::c_ulong;
    // SAFETY: clone(2) without CLONE_VM is fork(2) with namespaces: the child runs on a copy
    // of this process's memory (no stack given: a copy of ours) and only calls _exit(2),
    // which is async-signal-safe; no lock or allocation is touched there.
    let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: see above.
        unsafe { libc::_exit(0) }
    }
    u32::try_from(pid).map_err(|_| io::Error::other("clone returned a pid out of range"))
}

/// Waits for the child `pid` to end: `Ok` when it exited with 0.
pub fn wait_ok(pid: u32) -> io::Result<()> {
    let pid = libc::pid_t::try_from(pid).map_err(io::Error::other)?;
    let mut status = 0;
    loop {
        // SAFETY: waitpid(2) on our own child, with a status to fill.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            break;
        }
        let err = io::Error::last_os_error();
        if rc < 0 && err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
    match (libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
        (true, 0) => Ok(()),
        _ => Err(io::Error::other(format!("the probe ended with status {status}"))),
    }
}

/// What a sandboxed program's process does between `fork` and `exec`: it makes a process
/// namespace and forks again, the first process of it going on to the exec (its init: when
/// it ends, the kernel kills every process left in the namespace), while the process that
/// forked it stays outside, waits and ends as it ended (killed with it, the init is killed
/// too). The init gets a mount table of its own with a `/proc` of its namespace, no
/// capabilities now or after the exec even as root, then `confine` (Landlock and seccomp,
/// which set no-new-privileges).
pub fn before_exec(
    command: &mut Command,
    mut confine: impl FnMut() -> io::Result<()> + Send + Sync + 'static,
) {
    // SAFETY: the supervisor that runs this has a single thread when it forks, so the
    // allocation `confine` may do cannot meet a lock held by another thread; everything
    // else is plain system calls. The waiting process only calls async-signal-safe ones.
    unsafe {
        command.pre_exec(move || {
            check(libc::unshare(libc::CLONE_NEWPID))?;
            let init = libc::fork();
            if init < 0 {
                return Err(io::Error::last_os_error());
            }
            if init > 0 {
                wait_and_end_as(init);
            }
            // The init: killed when the process waiting for it goes, however it goes. (Gone
            // already, it left this one to the supervisor, a subreaper that kills it.)
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0))?;
            check(libc::unshare(libc::CLONE_NEWNS))?;
            mount_proc()?;
            drop_capabilities()?;
            confine()
        });
    }
}

/// The waiting half of `before_exec`: closes every descriptor but the standard ones (the
/// spawner's error pipe among them, so that the spawn returns now), waits for `init`, and
/// ends with its status (its signal raised again, or its exit code).
///
/// # Safety
/// Called only in a forked child; never returns.
unsafe fn wait_and_end_as(init: libc::pid_t) -> ! {
    // SAFETY: plain system calls on our own process.
    unsafe {
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
        let mut status = 0;
        loop {
            let rc = libc::waitpid(init, &mut status, 0);
            if rc == init {
                break;
            }
            if rc < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                libc::_exit(255);
            }
        }
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            libc::signal(signal, libc::SIG_DFL);
            libc::kill(libc::getpid(), signal);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}

/// Mounts the process namespace's own `/proc` over the host's.
fn mount_proc() -> io::Result<()> {
    let name = c"proc";
    let target = c"/proc";
    // SAFETY: mount(2) with static C strings.
    check(unsafe {
        libc::mount(
            name.as_ptr(),
            target.as_ptr(),
            name.as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    })
}

/// Empties the capability bounding set, locks "root has no special powers" in, and clears
/// every capability set: after the exec the program has none, whatever its uid.
fn drop_capabilities() -> io::Result<()> {
    for cap in 0..64 {
        // SAFETY: prctl(2) with plain integers; an unknown capability is EINVAL, ignored.
        let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if rc < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
            return Err(io::Error::last_os_error());
        }
    }
    let bits = libc::SECURE_ALL_BITS | libc::SECURE_ALL_LOCKS;
    // SAFETY: prctl(2) with plain integers.
    check(unsafe { libc::prctl(libc::PR_SET_SECUREBITS, bits as libc::c_ulong, 0, 0, 0) })?;
    // SAFETY: as above.
    check(unsafe {
        libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong, 0, 0, 0)
    })?;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let header = Header { version: VERSION_3, pid: 0 };
    let data = [Data { effective: 0, permitted: 0, inheritable: 0 }; 2];
    // SAFETY: capset(2) reads a live header and two data structs (version 3's layout).
    let rc = unsafe { libc::syscall(libc::SYS_capset, &raw const header, data.as_ptr()) };
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

/// This process's effective group id.
pub fn effective_gid() -> u32 {
    // SAFETY: getegid cannot fail and touches no memory.
    unsafe { libc::getegid() }
}
