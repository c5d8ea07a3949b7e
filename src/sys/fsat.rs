//! Race-free file access relative to directory descriptors: `openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` where the kernel has it
//! (Linux ≥ 5.6), else a walk one component at a time with `O_NOFOLLOW`.

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
            // An old kernel, or a seccomp filter that refuses the call: walk instead.
            Err(err) if matches!(err.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {
                NO_OPENAT2.store(true, Ordering::Relaxed);
            }
            // Retried too often (renames elsewhere, a lease): the walk decides.
            Err(err) if err.raw_os_error() == Some(libc::EAGAIN) => {}
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
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    for _ in 0..32 {
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
    Err(io::Error::from_raw_os_error(libc::EAGAIN))
}

/// The fallback: every directory on the way opened `O_DIRECTORY | O_NOFOLLOW`.
pub(super) fn walk(dir: BorrowedFd, parts: &[&[u8]], flags: i32, mode: u32) -> io::Result<OwnedFd> {
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

/// What `stat_at` tells of one directory entry.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// A regular file (not a symlink, directory, FIFO or device).
    pub regular: bool,
    /// Last modification.
    pub modified: std::time::SystemTime,
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)` for one plain name.
pub fn stat_at(dir: BorrowedFd, name: &[u8]) -> io::Result<Entry> {
    let name = c_name(name)?;
    // SAFETY: stat is plain data that fstatat fills in.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid directory descriptor, a NUL-terminated name and a stat we own.
    let rc = unsafe {
        libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW)
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    let since_epoch = std::time::Duration::new(
        u64::try_from(st.st_mtime).unwrap_or(0),
        u32::try_from(st.st_mtime_nsec).unwrap_or(0),
    );
    Ok(Entry {
        regular: st.st_mode & libc::S_IFMT == libc::S_IFREG,
        modified: std::time::UNIX_EPOCH + since_epoch,
    })
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
