//! Opening the program's own files (keys, the log, the vault, project settings, unpacked
//! skills) so that a symbolic link planted in their place is refused, never followed:
//! `O_NOFOLLOW` on the last component, and `O_NONBLOCK | O_NOCTTY` so that a FIFO there
//! cannot stall the open and a terminal there never becomes ours. No `unsafe` here: std's
//! `OpenOptionsExt` carries the flags.

use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::OpenOptionsExt;

/// The flags every open of one of our own files carries.
const FLAGS: i32 = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;

/// `OpenOptions::new()` for one of our own files: set `read`, `write`, `create`, `mode`…
/// as usual. A link at the path makes the open fail (see [`is_link`]).
pub fn options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.custom_flags(FLAGS);
    options
}

/// `OpenOptions::new()` for a file of the project's that is read as it is (a link is
/// followed): a FIFO there cannot stall the open and a terminal never becomes ours.
pub fn project_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    options
}

/// Whether an open by [`options`] failed because a symbolic link stands at the path.
pub fn is_link(err: &io::Error) -> bool {
    err.raw_os_error() == Some(libc::ELOOP)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn a_link_is_refused_and_a_plain_file_opens() {
        let dir = std::env::temp_dir().join(format!("iac-own-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("test I/O");
        let target = dir.join("target");
        std::fs::write(&target, "secret").expect("test I/O");
        let link = dir.join("link");
        std::os::unix::fs::symlink(&target, &link).expect("test I/O");
        let err = options().read(true).open(&link).expect_err("a link is never followed");
        assert!(is_link(&err), "{err}");
        let err = options().append(true).open(&link).expect_err("nor for writing");
        assert!(is_link(&err), "{err}");
        let mut file = options().append(true).open(&target).expect("a plain file");
        file.write_all(b"!").expect("test I/O");
        assert_eq!(std::fs::read_to_string(&target).expect("test I/O"), "secret!");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
