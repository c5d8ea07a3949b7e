//! The namespaces and the mount table of a sandbox, made by the supervisor for itself
//! before it starts the program (which inherits them): everything read-only, the writable
//! roots and the private temporary directory writable again, the protected paths in them
//! read-only again, copies of state in place of the state, the credential stores hidden.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use super::Spec;
use crate::sys::sandbox as raw;

/// Enters the namespaces and lays out the mounts `spec` describes.
pub(super) fn enter(spec: &Spec) -> io::Result<()> {
    let (uid, gid) = (crate::sys::effective_uid(), raw::effective_gid());
    // The process namespace is the program's own (`confine.rs`): the supervisor must
    // still start threads.
    let mut flags = raw::NEW_USER | raw::NEW_MOUNTS | raw::NEW_IPC;
    if !spec.network {
        flags |= raw::NEW_NETWORK;
    }
    raw::unshare(flags).map_err(|e| context("cannot make the namespaces", e))?;
    raw::map_identity(uid, gid).map_err(|e| context("cannot map our user", e))?;
    raw::make_private().map_err(|e| context("cannot make the mounts private", e))?;
    if !spec.network {
        empty_tmp(spec).map_err(|e| context("cannot empty /tmp", e))?;
    }
    let mut writable: Vec<&Path> = vec![spec.tmp.as_path()];
    if !spec.whole_read_only {
        writable.extend(spec.writable.iter().map(|p| p.as_path()));
    }
    // Binds first: made read-only below with everything else, then writable again.
    for root in &writable {
        raw::bind(root, root).map_err(|e| at("cannot bind", root, e))?;
    }
    raw::set_read_only(Path::new("/"), true, true)
        .map_err(|e| context("cannot make the file system read-only", e))?;
    for root in &writable {
        // A mount below the root that the host made read-only stays so (it is locked).
        raw::set_read_only(root, false, true)
            .or_else(|_| raw::set_read_only(root, false, false))
            .map_err(|e| at("cannot make writable", root, e))?;
    }
    // A mount point cannot be renamed or removed, but the directory holding it could be
    // (`mv env env.old && mkdir -p env/prod` puts a new state where the protected one was,
    // and the host sees it there after the run): every directory between a writable root
    // and a protected path becomes a mount point of its own, still writable.
    for dir in holders(spec, &writable) {
        raw::bind(&dir, &dir).map_err(|e| at("cannot pin", &dir, e))?;
    }
    for (state, copy) in &spec.scratch {
        raw::bind(copy, state).map_err(|e| at("cannot put a copy over", state, e))?;
    }
    for path in &spec.read_only {
        if std::fs::symlink_metadata(path).is_err() {
            continue;
        }
        raw::bind(path, path).map_err(|e| at("cannot bind", path, e))?;
        raw::set_read_only(path, true, true).map_err(|e| at("cannot protect", path, e))?;
    }
    for path in &spec.hidden {
        let Ok(meta) = std::fs::metadata(path) else { continue };
        let hidden = if meta.is_dir() {
            hide_dir(path, &spec.reveal)
        } else {
            raw::bind(Path::new("/dev/null"), path)
        };
        hidden.map_err(|e| at("cannot hide", path, e))?;
    }
    // The working directory, found again through the new mounts (the old one is the
    // directory under them).
    let cwd = std::env::current_dir()?;
    std::env::set_current_dir(&cwd).map_err(|e| at("cannot enter", &cwd, e))?;
    if !spec.network
        && let Err(err) = raw::loopback_up()
    {
        log::debug!("sandbox: no loopback: {err}");
    }
    Ok(())
}

/// Puts an empty `/tmp` in place of the host's, holding only what lies below it of the
/// writable roots, the private temporary directory and the revealed files, each bound
/// back at its place: the socket files other programs keep there (a terminal
/// multiplexer's, an agent's) are out of a sealed command's reach. Nothing to do when a
/// writable root is `/tmp` itself.
fn empty_tmp(spec: &Spec) -> io::Result<()> {
    let Ok(tmp) = std::fs::canonicalize("/tmp") else { return Ok(()) };
    let roots = spec.writable.iter().filter(|_| !spec.whole_read_only);
    if roots.clone().any(|root| tmp.starts_with(root)) {
        return Ok(());
    }
    let keep: Vec<&PathBuf> = roots
        .chain(std::iter::once(&spec.tmp))
        .chain(&spec.reveal)
        .filter(|path| path.starts_with(&tmp))
        .collect();
    // Opened before they are out of sight.
    let held: Vec<std::fs::File> =
        keep.iter().map(std::fs::File::open).collect::<io::Result<_>>()?;
    raw::mount_empty(&tmp, true)?;
    for (file, path) in held.iter().zip(&keep) {
        if file.metadata()?.is_dir() {
            std::fs::create_dir_all(path)?;
        } else {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::File::create(path)?;
        }
        let source = PathBuf::from(format!("/proc/self/fd/{}", fd_of(file)));
        raw::bind(&source, path)?;
    }
    Ok(())
}

/// The directories strictly between a writable root and each path `spec` protects there
/// (read-only, hidden, or replaced by a copy), parents before children.
fn holders(spec: &Spec, writable: &[&Path]) -> BTreeSet<PathBuf> {
    let protected =
        spec.read_only.iter().chain(&spec.hidden).chain(spec.scratch.iter().map(|(s, _)| s));
    let mut dirs = BTreeSet::new();
    for path in protected {
        let Some(root) = writable.iter().find(|root| path.starts_with(root) && path != *root)
        else {
            continue;
        };
        let between = path.ancestors().skip(1).take_while(|dir| dir != root);
        dirs.extend(between.filter(|dir| dir.is_dir()).map(Path::to_path_buf));
    }
    dirs
}

/// Puts an empty directory over `dir`, with the files of `reveal` below it (read-only, each
/// at its place) and nothing else.
fn hide_dir(dir: &Path, reveal: &[PathBuf]) -> io::Result<()> {
    let shown: Vec<&PathBuf> = reveal.iter().filter(|r| r.starts_with(dir)).collect();
    if shown.is_empty() {
        return raw::mount_empty(dir, false);
    }
    // The real files, opened before they are out of sight.
    let held: Vec<std::fs::File> =
        shown.iter().map(std::fs::File::open).collect::<io::Result<_>>()?;
    raw::mount_empty(dir, true)?;
    for (file, real) in held.iter().zip(&shown) {
        if let Some(parent) = real.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::File::create(real)?;
        let source = PathBuf::from(format!("/proc/self/fd/{}", fd_of(file)));
        raw::bind(&source, real)?;
        raw::set_read_only(real, true, false)?;
    }
    raw::set_read_only(dir, true, false)
}

fn fd_of(file: &std::fs::File) -> i32 {
    use std::os::fd::AsRawFd;
    file.as_raw_fd()
}

fn context(what: &str, err: io::Error) -> io::Error {
    io::Error::new(err.kind(), format!("{what}: {err}"))
}

fn at(what: &str, path: &Path, err: io::Error) -> io::Error {
    io::Error::new(err.kind(), format!("{what} {}: {err}", path.display()))
}
