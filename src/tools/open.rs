//! Opening what was judged. The permission gate decides on a path's real location
//! (`Target`); here the file tools open exactly that location and nothing else: the real
//! path is opened below a descriptor of the session cwd (or of `/` for an outside path the
//! user approved) without following any symlink on the way (`openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, or a component walk with `O_NOFOLLOW` on older
//! kernels). A symlink swapped in after the judgement makes the open fail instead of
//! leading elsewhere; a path that was asked about must still be the very file (device and
//! inode) it was when the user was asked. Writes create their temporary file in the
//! verified parent directory and rename it there.

use std::borrow::Cow;
use std::fs::{File, Metadata, Permissions};
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::{Target, ToolContext, ToolError};
use crate::sys;

/// Flags for reading: a FIFO or device never blocks the open, and never becomes our tty.
pub(super) const READ: i32 = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY;
/// Flags for a handle that only names a file (for `fstat` and as a directory anchor).
pub(super) const PATH: i32 = libc::O_PATH;

/// The target judged for `path`; a path the gate did not see is judged now and must not
/// need a question.
pub(super) fn target<'c>(ctx: &'c ToolContext, path: &Path) -> Result<Cow<'c, Target>, ToolError> {
    if let Some(judged) = ctx.targets.iter().find(|t| t.path == path) {
        return Ok(Cow::Borrowed(judged));
    }
    let fresh = super::judge_within(path, ctx.cwd, ctx.extra, ctx.config_dir);
    if fresh.asked() {
        return Err(ToolError::Model(format!(
            "{} was not judged before the call; not opened",
            path.display()
        )));
    }
    Ok(Cow::Owned(fresh))
}

/// Opens `path` for reading as judged; returns the file and its metadata (from the
/// descriptor, so they describe what was opened).
pub(super) fn read(ctx: &ToolContext, path: &Path) -> Result<(File, Metadata), ToolError> {
    let target = target(ctx, path)?;
    let file = File::from(open(ctx, &target, READ, 0).map_err(|e| fail(path, "open", e))?);
    let meta = file.metadata().map_err(|e| fail(path, "read", e))?;
    Ok((file, meta))
}

/// Opens the judged `path` with `flags` (`O_CLOEXEC` added; no symlink followed).
pub(super) fn open(
    ctx: &ToolContext,
    target: &Target,
    flags: i32,
    mode: u32,
) -> io::Result<OwnedFd> {
    let real = target.real.as_deref().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "the path could not be resolved")
    })?;
    let (base, rel) = anchor(ctx, real, target.inside)?;
    let fd = sys::open_beneath(base.as_fd(), &rel, flags, mode).map_err(explain)?;
    let (fd, meta) = stat(fd)?;
    check_identity(target, &meta)?;
    Ok(fd)
}

/// A descriptor to open `real` beneath, and `real` relative to it: the cwd, or the
/// additional directory, an inside path lies in (opened without symlinks, as both are
/// canonical), else `/`.
fn anchor(ctx: &ToolContext, real: &Path, inside: bool) -> io::Result<(OwnedFd, PathBuf)> {
    let mut roots = std::iter::once(ctx.cwd).chain(ctx.extra.iter().map(PathBuf::as_path));
    let cwd = roots.find(|root| real.starts_with(root)).unwrap_or(ctx.cwd);
    let root = OwnedFd::from(File::open("/")?);
    let below = |base: &Path| {
        real.strip_prefix(base).map(Path::to_path_buf).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, "the path is not where it was judged")
        })
    };
    if inside {
        let rel_cwd = cwd.strip_prefix("/").unwrap_or(cwd);
        let cwd_fd = sys::open_beneath(root.as_fd(), rel_cwd, PATH | libc::O_DIRECTORY, 0)
            .map_err(explain)?;
        Ok((cwd_fd, below(cwd)?))
    } else {
        Ok((root, below(Path::new("/"))?))
    }
}

/// A path that was asked about must still be the file the user was asked about.
fn check_identity(target: &Target, meta: &Metadata) -> io::Result<()> {
    match target.id {
        Some(id) if target.asked() && id != (meta.dev(), meta.ino()) => Err(io::Error::other(
            "it was replaced after it was judged (not the file the permission was for)",
        )),
        _ => Ok(()),
    }
}

fn stat(fd: OwnedFd) -> io::Result<(OwnedFd, Metadata)> {
    let file = File::from(fd);
    let meta = file.metadata()?;
    Ok((OwnedFd::from(file), meta))
}

/// Says what a refused open means for a judged path.
fn explain(err: io::Error) -> io::Error {
    match err.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::EXDEV) => io::Error::other(
            "a symlink appeared on the way after the path was judged; not followed",
        ),
        _ => err,
    }
}

fn fail(path: &Path, what: &str, err: io::Error) -> ToolError {
    ToolError::Model(format!("cannot {what} {}: {err}", path.display()))
}

/// The path of an open descriptor under `/proc/self/fd`, for std APIs that take a path:
/// it names the very file the descriptor holds, wherever that is now.
pub(super) fn fd_path(fd: &impl AsRawFd) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

/// Opens `rel` (a path from a walk, relative to its root) beneath the root's descriptor for
/// reading, without following symlinks; the root itself when `rel` is empty.
pub(super) fn read_below(root: BorrowedFd, rel: &Path) -> io::Result<File> {
    if rel.as_os_str().is_empty() {
        use std::os::unix::fs::OpenOptionsExt;
        return File::options().read(true).custom_flags(READ).open(fd_path(&root));
    }
    sys::open_beneath(root, rel, READ, 0).map(File::from)
}

/// Replaces the judged `path` with `contents` so that a crash leaves either the old or the
/// new file: parents are created beneath the verified anchor, the temporary file is made in
/// the verified parent and renamed within it, and an existing file keeps its mode. Returns
/// the previous content (for a diff), when there was a file.
pub(super) fn write_atomic(
    ctx: &ToolContext,
    path: &Path,
    contents: &[u8],
) -> Result<Option<Vec<u8>>, ToolError> {
    let target = target(ctx, path)?;
    let shown = path.display();
    let fail = |what: &str, err: io::Error| {
        ToolError::Model(format!("cannot write {shown}: {what}: {err}"))
    };
    let real = target.real.as_deref().ok_or_else(|| {
        ToolError::Model(format!("cannot write {shown}: the path could not be resolved"))
    })?;
    let (base, rel) = anchor(ctx, real, target.inside).map_err(|e| fail("opening", e))?;
    let name = rel
        .file_name()
        .ok_or_else(|| ToolError::Model(format!("cannot write {shown}: no file name")))?
        .as_bytes()
        .to_vec();
    let parent = rel.parent().unwrap_or(Path::new(""));
    let dir = make_dirs(base.as_fd(), parent)
        .map_err(|e| fail("creating parent directories", explain(e)))?;
    let previous = match sys::open_at(dir.as_fd(), &name, READ, 0) {
        Ok(fd) => {
            let (fd, meta) = stat(fd).map_err(|e| fail("reading", e))?;
            if meta.is_dir() {
                return Err(ToolError::Model(format!("{shown} is a directory")));
            }
            if !meta.is_file() {
                return Err(ToolError::Model(format!(
                    "{shown} is not a regular file; not written"
                )));
            }
            check_identity(&target, &meta).map_err(|e| fail("checking", e))?;
            let mut old = Vec::new();
            io::Read::read_to_end(&mut File::from(fd), &mut old).map_err(|e| fail("reading", e))?;
            Some((meta.permissions().mode(), old))
        }
        Err(err) if err.raw_os_error() == Some(libc::ENOENT) => None,
        // A symlink in the final place (swapped in, or dangling): never written through.
        Err(err) if err.raw_os_error() == Some(libc::ELOOP) => {
            return Err(fail("checking", explain(err)));
        }
        Err(err) => return Err(fail("opening", err)),
    };
    let tmp = format!(
        ".{}.iac-code-{}.tmp",
        String::from_utf8_lossy(&name),
        uuid::Uuid::new_v4().simple()
    );
    let created = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
    let file = sys::open_at(dir.as_fd(), tmp.as_bytes(), created, 0o666)
        .map_err(|e| fail("creating", e))?;
    let result = (|| {
        let mut file = File::from(file);
        file.write_all(contents)?;
        if let Some((mode, _)) = &previous {
            file.set_permissions(Permissions::from_mode(*mode))?;
        }
        file.sync_all()?;
        sys::rename_at(dir.as_fd(), tmp.as_bytes(), &name)?;
        // Make the rename itself durable.
        File::from(dir.try_clone()?).sync_all()
    })();
    if let Err(err) = result {
        let _ = sys::unlink_at(dir.as_fd(), tmp.as_bytes());
        return Err(fail("writing", err));
    }
    Ok(previous.map(|(_, old)| old))
}

/// Opens (creating what is missing) each directory of `rel` beneath `base`, never through
/// a symlink; returns the last one, readable (for `fsync`).
fn make_dirs(base: BorrowedFd, rel: &Path) -> io::Result<OwnedFd> {
    let mut current = sys::open_at(base, b".", PATH | libc::O_DIRECTORY, 0)?;
    for part in rel.iter() {
        let part = part.as_bytes();
        let next = match sys::open_at(current.as_fd(), part, PATH | libc::O_DIRECTORY, 0) {
            Err(err) if err.raw_os_error() == Some(libc::ENOENT) => {
                match sys::mkdir_at(current.as_fd(), part, 0o777) {
                    Err(err) if err.raw_os_error() != Some(libc::EEXIST) => return Err(err),
                    _ => {}
                }
                sys::open_at(current.as_fd(), part, PATH | libc::O_DIRECTORY, 0)?
            }
            other => other?,
        };
        current = next;
    }
    sys::open_at(current.as_fd(), b".", libc::O_RDONLY | libc::O_DIRECTORY, 0)
}

/// The whole content of the judged `path`: from the client's buffer when it offers its file
/// system (unsaved changes included), else from the disk as judged.
pub(super) fn read_all(ctx: &ToolContext, path: &Path) -> Result<Vec<u8>, ToolError> {
    if ctx.files.reads() {
        let real = judged_real(ctx, path)?;
        return ctx
            .files
            .read(&real, None, None, ctx.cancel)
            .map(String::into_bytes)
            .map_err(|err| ToolError::Model(format!("cannot read {}: {err}", path.display())));
    }
    let (mut file, meta) = read(ctx, path)?;
    if !meta.is_file() {
        return Err(ToolError::Model(format!("{} is not a regular file", path.display())));
    }
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| fail(path, "read", e))?;
    Ok(bytes)
}

/// Writes the judged `path`: through the client when it offers its file system (its error
/// reaches the model; there is no silent local fallback), else atomically on the disk.
/// Returns the previous content, when there was one.
pub(super) fn write_all(
    ctx: &ToolContext,
    path: &Path,
    contents: &str,
) -> Result<Option<Vec<u8>>, ToolError> {
    if !ctx.files.writes() {
        return write_atomic(ctx, path, contents.as_bytes());
    }
    let real = judged_real(ctx, path)?;
    let previous = match read_all(ctx, path) {
        Ok(previous) => Some(previous),
        // Never write after a cancel: the model and the journal would be told otherwise.
        Err(err) if ctx.cancel.is_cancelled() => return Err(err),
        Err(_) => None,
    };
    ctx.files
        .write(&real, contents, ctx.cancel)
        .map_err(|err| ToolError::Model(format!("cannot write {}: {err}", path.display())))?;
    Ok(previous)
}

/// The judged real location of `path`, which is what the client is asked about (a symlink
/// swapped in later cannot redirect it); an unresolvable path is refused.
pub(super) fn judged_real(ctx: &ToolContext, path: &Path) -> Result<PathBuf, ToolError> {
    target(ctx, path)?.real.clone().ok_or_else(|| {
        ToolError::Model(format!("{} cannot be resolved; not opened", path.display()))
    })
}

/// The content an edit starts from: the editor's buffer only when the edit is also written
/// through the editor (else the disk, so that the two never mix).
pub(super) fn read_for_edit(ctx: &ToolContext, path: &Path) -> Result<Vec<u8>, ToolError> {
    if ctx.files.reads() && !ctx.files.writes() {
        let (mut file, meta) = read(ctx, path)?;
        if !meta.is_file() {
            return Err(ToolError::Model(format!("{} is not a regular file", path.display())));
        }
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| fail(path, "read", e))?;
        return Ok(bytes);
    }
    read_all(ctx, path)
}
