//! What an approval keeps of each file it covers (`approval::Runs`): a `Fingerprint`, one
//! of a closed set of kinds (the SHA-256 of its bytes, a large file's size and time, a file
//! absent, not regular or unreadable, a directory kept whole or past the bounds). They are
//! kept in the approvals files as the same strings as before the kinds had names, so that
//! an approval given by an older release still holds.

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::sync::lock;

/// What identifies a file's version without reading it: device, inode, size, and the
/// modification and change times (the change time moves with every write).
pub(super) type Stamp = (u64, u64, u64, i64, i64, i64, i64);

pub(super) fn stamp(m: &std::fs::Metadata) -> Stamp {
    (m.dev(), m.ino(), m.len(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec())
}

/// A file (or a covered directory) as an approval saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fingerprint {
    /// The SHA-256 of its bytes, in lower-case hex (`sha256:<hex>`).
    Sha256(String),
    /// A file too large to hash (a skill's): its size and modification time
    /// (`large:<size>:<seconds>.<nanoseconds>`).
    Large { len: u64, mtime: i64, nsec: i64 },
    /// Nothing there (`absent`).
    Absent,
    /// Not a regular file (`not a regular file`).
    NotRegular,
    /// A regular file that could not be read (`unreadable`).
    Unreadable,
    /// A directory whose every file is kept beside it (`directory`).
    Directory,
    /// A directory past the bounds of what is kept, and why (`over the bounds: <why>`).
    OverBounds(String),
}

const SHA256: &str = "sha256:";
const LARGE: &str = "large:";
const OVER_BOUNDS: &str = "over the bounds: ";

impl Fingerprint {
    /// The fingerprint a kept string names; `None` for one no release wrote.
    pub fn parse(text: &str) -> Option<Fingerprint> {
        if let Some(hex) = text.strip_prefix(SHA256) {
            return Some(Fingerprint::Sha256(hex.to_string()));
        }
        if let Some(why) = text.strip_prefix(OVER_BOUNDS) {
            return Some(Fingerprint::OverBounds(why.to_string()));
        }
        if let Some(rest) = text.strip_prefix(LARGE) {
            let (len, time) = rest.split_once(':')?;
            let (mtime, nsec) = time.split_once('.')?;
            let (len, mtime, nsec) = (len.parse().ok()?, mtime.parse().ok()?, nsec.parse().ok()?);
            return Some(Fingerprint::Large { len, mtime, nsec });
        }
        match text {
            "absent" => Some(Fingerprint::Absent),
            "not a regular file" => Some(Fingerprint::NotRegular),
            "unreadable" => Some(Fingerprint::Unreadable),
            "directory" => Some(Fingerprint::Directory),
            _ => None,
        }
    }
}

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fingerprint::Sha256(hex) => write!(f, "{SHA256}{hex}"),
            Fingerprint::Large { len, mtime, nsec } => write!(f, "{LARGE}{len}:{mtime}.{nsec}"),
            Fingerprint::Absent => f.write_str("absent"),
            Fingerprint::NotRegular => f.write_str("not a regular file"),
            Fingerprint::Unreadable => f.write_str("unreadable"),
            Fingerprint::Directory => f.write_str("directory"),
            Fingerprint::OverBounds(why) => write!(f, "{OVER_BOUNDS}{why}"),
        }
    }
}

impl serde::Serialize for Fingerprint {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

fn hex(digest: &ring::digest::Digest) -> String {
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// The fingerprint of `bytes`, as `fingerprint` gives a file's.
pub fn digest(bytes: &[u8]) -> Fingerprint {
    Fingerprint::Sha256(hex(&ring::digest::digest(&ring::digest::SHA256, bytes)))
}

/// The fingerprint of the file at `path` (followed if it is a link: a program is often
/// one): the SHA-256 of its bytes, or absent, not regular, unreadable. Remembered per path
/// while its device, inode, size and times stay the same, so a big interpreter is read
/// once per process.
pub fn fingerprint(path: &Path) -> Fingerprint {
    let Ok(meta) = std::fs::metadata(path) else { return Fingerprint::Absent };
    if !meta.is_file() {
        return Fingerprint::NotRegular;
    }
    static SEEN: Mutex<Option<HashMap<PathBuf, (Stamp, Fingerprint)>>> = Mutex::new(None);
    let now = stamp(&meta);
    if let Some((seen, digest)) = lock(&SEEN).get_or_insert_default().get(path)
        && *seen == now
    {
        return digest.clone();
    }
    let read = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .and_then(|mut file| {
            let mut context = ring::digest::Context::new(&ring::digest::SHA256);
            let mut buffer = vec![0u8; 64 << 10];
            loop {
                match file.read(&mut buffer)? {
                    0 => break,
                    n => context.update(&buffer[..n]),
                }
            }
            Ok((context.finish(), file.metadata()?))
        });
    let Ok((digest, after)) = read else { return Fingerprint::Unreadable };
    let digest = Fingerprint::Sha256(hex(&digest));
    // Changed while it was read: not remembered, and the next look reads it again.
    if stamp(&after) == now {
        lock(&SEEN).get_or_insert_default().insert(path.to_path_buf(), (now, digest.clone()));
    }
    digest
}

/// A large file's fingerprint, from its metadata alone.
pub fn large(meta: &std::fs::Metadata) -> Fingerprint {
    Fingerprint::Large { len: meta.len(), mtime: meta.mtime(), nsec: meta.mtime_nsec() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_kept_as_the_string_it_always_was_and_read_back() {
        let kinds = [
            (Fingerprint::Sha256("ab".repeat(32)), format!("sha256:{}", "ab".repeat(32))),
            (
                Fingerprint::Large { len: 9, mtime: 1700000000, nsec: 5 },
                "large:9:1700000000.5".into(),
            ),
            (Fingerprint::Absent, "absent".into()),
            (Fingerprint::NotRegular, "not a regular file".into()),
            (Fingerprint::Unreadable, "unreadable".into()),
            (Fingerprint::Directory, "directory".into()),
            (
                Fingerprint::OverBounds("more than 8 MiB".into()),
                "over the bounds: more than 8 MiB".into(),
            ),
        ];
        for (kind, text) in kinds {
            assert_eq!(kind.to_string(), text);
            assert_eq!(serde_json::to_value(&kind).unwrap(), serde_json::json!(text));
            assert_eq!(Fingerprint::parse(&text), Some(kind));
        }
        assert_eq!(Fingerprint::parse("md5:00"), None);
        assert_eq!(Fingerprint::parse("large:x"), None);
        let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(digest(b""), Fingerprint::Sha256(empty.into()));
        assert_eq!(fingerprint(Path::new("/dev/null/none")), Fingerprint::Absent);
    }
}
