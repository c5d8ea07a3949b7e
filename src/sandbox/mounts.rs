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
            raw::mount_empty(path)
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

fn context(what: &str, err: io::Error) -> io::Error {
    io::Error::new(err.kind(), format!("{what}: {err}"))
}

fn at(what: &str, path: &Path, err: io::Error) -> io::Error {
    io::Error::new(err.kind(), format!("{what} {}: {err}", path.display()))
}
