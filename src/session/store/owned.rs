//! What the file store checks before it uses a session's directory: that it and its
//! files are our own, real and not writable by others.

use std::fs;
use std::path::Path;

use crate::error::{Error, IoContext, Result};
use crate::session::files::{JOURNAL, LOCK, META};

/// A session directory, and each of its files that exists, must be a real directory or
/// file (not a symlink) owned by the user we run as: another user must not be able to plant
/// a journal or point us at files elsewhere.
pub(super) fn check_owned(dir: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let uid = crate::sys::effective_uid();
    for (path, want_dir) in [
        (dir.to_path_buf(), true),
        (dir.join(JOURNAL), false),
        (dir.join(META), false),
        (dir.join(LOCK), false),
    ] {
        let meta = match fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound && !want_dir => continue,
            Err(err) => return Err(err).at(&path),
        };
        let kind_ok = if want_dir { meta.is_dir() } else { meta.is_file() };
        if meta.file_type().is_symlink() || !kind_ok {
            return Err(Error::Internal(format!(
                "{} is {}; refusing to use it (a session's files must be its own)",
                path.display(),
                if meta.file_type().is_symlink() {
                    "a symlink"
                } else {
                    "not a plain file or directory"
                }
            )));
        }
        if want_dir && meta.mode() & 0o022 != 0 {
            return Err(Error::Internal(format!(
                "{} can be written by other users (mode {:o}); refusing to use it",
                path.display(),
                meta.mode() & 0o777
            )));
        }
        if meta.uid() != uid {
            return Err(Error::Internal(format!(
                "{} belongs to uid {}, not to uid {uid} (this server's user); refusing to use it",
                path.display(),
                meta.uid()
            )));
        }
    }
    Ok(())
}
