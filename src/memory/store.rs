//! Where a project's memory lives and how it is read and written:
//! `<config dir>/memory/<slug>-<16 hex of SHA-256 of the root>/`, holding `MEMORY.md` and one
//! `<name>.md` per topic. Directories are 0700 and files 0600; every write goes to a temp
//! file that is renamed over the old one; nothing under the config dir is reached through a
//! symlink (each step is opened with `O_NOFOLLOW` from its parent's descriptor). A lock
//! file keeps two writers from losing each other's index lines.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::index::{self, Kind};
use crate::error::{Error, Result};
use crate::sys as fsat;

/// The index file's name.
pub const INDEX: &str = "MEMORY.md";

/// Bytes of a topic's content kept at most.
pub const MAX_CONTENT: usize = 64 << 10;

/// Bytes of a memory file read at most (a topic with its front matter, or the index).
const MAX_READ: usize = 1 << 20;

/// The lock file that serialises writers.
const LOCK: &str = ".lock";

/// Distinguishes temp files of one process.
static TEMP: AtomicU64 = AtomicU64::new(0);

/// One topic to write.
#[derive(Debug, Clone)]
pub struct Topic {
    pub name: String,
    pub kind: Kind,
    pub description: String,
    pub content: String,
}

/// What a write changed.
#[derive(Debug, Clone)]
pub struct Written {
    /// The topic's file.
    pub path: PathBuf,
    /// Its text before (`None`: a new topic).
    pub old: Option<String>,
    /// Its text now.
    pub new: String,
    /// Its line in the index.
    pub line: String,
}

/// The memory of one project.
#[derive(Debug, Clone)]
pub struct Store {
    config_dir: PathBuf,
    key: String,
}

impl Store {
    /// The memory of the project `cwd` belongs to (its git root, else `cwd` itself).
    pub fn of(config_dir: &Path, cwd: &Path) -> Store {
        Store { config_dir: config_dir.to_path_buf(), key: key_of(&project_root(cwd)) }
    }

    /// The directory the memory lives in (it may not exist yet).
    pub fn dir(&self) -> PathBuf {
        self.config_dir.join("memory").join(&self.key)
    }

    /// The index, or `None` when nothing was remembered yet.
    pub fn index(&self) -> Result<Option<String>> {
        let Some(dir) = self.open_dir(false)? else { return Ok(None) };
        self.read(&dir, INDEX)
    }

    /// The text of the topic `name` (its front matter, then its content), if it exists.
    pub fn topic(&self, name: &str) -> Result<Option<String>> {
        check_name(name)?;
        let Some(dir) = self.open_dir(false)? else { return Ok(None) };
        self.read(&dir, &format!("{name}.md"))
    }

    /// Writes a topic and its line in the index, each atomically. Refused, with nothing
    /// written, when the name is not allowed, the content is too long, or the text looks
    /// like it holds a secret.
    pub fn write(&self, topic: &Topic) -> Result<Written> {
        check(topic)?;
        let dir = self.open_dir(true)?.ok_or_else(|| self.io(io::ErrorKind::NotFound.into()))?;
        let lock = self.open(&dir, LOCK, libc::O_RDWR | libc::O_CREAT)?;
        lock.lock().map_err(|err| self.io_at(LOCK, err))?;
        let file = format!("{}.md", topic.name);
        // Everything is read before anything is written: a file that cannot be read (a
        // link, too large) stops the write with nothing changed.
        let old = self.read(&dir, &file)?;
        let index = self.read(&dir, INDEX)?.unwrap_or_default();
        let new = render(topic);
        let line = index::line(&topic.name, topic.kind, &topic.description);
        self.replace(&dir, &file, &new)?;
        self.replace(&dir, INDEX, &index::upsert(&index, &topic.name, &line))?;
        let _ = File::from(dir).sync_all();
        Ok(Written { path: self.dir().join(file), old, new, line })
    }

    /// The memory directory's descriptor, made (0700) when `create` and absent.
    fn open_dir(&self, create: bool) -> Result<Option<OwnedFd>> {
        if create {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&self.config_dir)
                .map_err(|err| Error::Io { path: self.config_dir.clone(), source: err })?;
        }
        let top = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(&self.config_dir)
        {
            Ok(file) => OwnedFd::from(file),
            Err(err) if err.kind() == io::ErrorKind::NotFound && !create => return Ok(None),
            Err(err) => return Err(Error::Io { path: self.config_dir.clone(), source: err }),
        };
        let Some(memory) = self.step(&top, "memory", create)? else { return Ok(None) };
        self.step(&memory, &self.key, create)
    }

    /// Opens the directory `name` below `parent` without following a link, made if asked.
    fn step(&self, parent: &OwnedFd, name: &str, create: bool) -> Result<Option<OwnedFd>> {
        let flags = libc::O_RDONLY | libc::O_DIRECTORY;
        match fsat::open_at(parent.as_fd(), name.as_bytes(), flags, 0) {
            Ok(fd) => Ok(Some(fd)),
            Err(err) if err.kind() == io::ErrorKind::NotFound && create => {
                match fsat::mkdir_at(parent.as_fd(), name.as_bytes(), 0o700) {
                    Ok(()) => {}
                    Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(err) => return Err(self.io(err)),
                }
                fsat::open_at(parent.as_fd(), name.as_bytes(), flags, 0)
                    .map(Some)
                    .map_err(|err| self.io(err))
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(self.io(err)),
        }
    }

    /// A file of the memory directory, opened without following a link (a new one 0600).
    fn open(&self, dir: &OwnedFd, name: &str, flags: i32) -> Result<File> {
        let fd = fsat::open_at(dir.as_fd(), name.as_bytes(), flags | libc::O_NONBLOCK, 0o600)
            .map_err(|err| self.io_at(name, err))?;
        let file = File::from(fd);
        let meta = file.metadata().map_err(|err| self.io_at(name, err))?;
        if !meta.is_file() {
            return Err(self.io_at(name, io::Error::other("not a regular file")));
        }
        Ok(file)
    }

    /// The text of a file of the memory directory, if it exists.
    fn read(&self, dir: &OwnedFd, name: &str) -> Result<Option<String>> {
        let file = match self.open(dir, name, libc::O_RDONLY) {
            Ok(file) => file,
            Err(Error::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                return Ok(None);
            }
            Err(err) => return Err(err),
        };
        let mut bytes = Vec::new();
        file.take(MAX_READ as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|err| self.io_at(name, err))?;
        if bytes.len() > MAX_READ {
            return Err(self.io_at(name, io::Error::other("larger than 1 MiB")));
        }
        Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
    }

    /// Replaces `name` with `text`: a new 0600 temp file, written and synced, renamed over it.
    fn replace(&self, dir: &OwnedFd, name: &str, text: &str) -> Result<()> {
        let n = TEMP.fetch_add(1, Ordering::Relaxed);
        let temp = format!(".tmp-{}-{n}-{name}", std::process::id());
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
        let written = self.open(dir, &temp, flags).and_then(|mut file| {
            file.write_all(text.as_bytes())
                .and_then(|()| file.sync_data())
                .map_err(|err| self.io_at(&temp, err))
        });
        let renamed = written.and_then(|()| {
            fsat::rename_at(dir.as_fd(), temp.as_bytes(), name.as_bytes())
                .map_err(|err| self.io_at(name, err))
        });
        if renamed.is_err() {
            let _ = fsat::unlink_at(dir.as_fd(), temp.as_bytes());
        }
        renamed
    }

    fn io(&self, err: io::Error) -> Error {
        Error::Io { path: self.dir(), source: explain(err) }
    }

    fn io_at(&self, name: &str, err: io::Error) -> Error {
        Error::Io { path: self.dir().join(name), source: explain(err) }
    }
}

/// A link where a directory or file should be says so.
fn explain(err: io::Error) -> io::Error {
    match err.raw_os_error() {
        Some(libc::ELOOP | libc::ENOTDIR) => {
            io::Error::other("a symbolic link or not a directory: memory never follows links")
        }
        _ => err,
    }
}

/// The directory a cwd's memory is keyed by: its git root, else the cwd.
pub fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors().find(|dir| dir.join(".git").exists()).unwrap_or(cwd).to_path_buf()
}

/// `<slug of the root's last component>-<16 hex of SHA-256 of the root path>`.
pub fn key_of(root: &Path) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, root.as_os_str().as_bytes());
    let hex: String = digest.as_ref()[..8].iter().map(|b| format!("{b:02x}")).collect();
    let last = root.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    let mut slug = String::new();
    for c in last.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.len() >= 40 {
            break;
        }
    }
    let slug = slug.trim_end_matches('-');
    format!("{}-{hex}", if slug.is_empty() { "root" } else { slug })
}

/// A topic's name must be `[a-z0-9][a-z0-9_-]{0,63}`.
pub fn check_name(name: &str) -> Result<()> {
    let bytes = name.as_bytes();
    let ok = (1..=64).contains(&bytes.len())
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-".contains(b));
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidParams(format!(
            "invalid memory name {:?}: use 1 to 64 of a-z, 0-9, '_' and '-', starting with a \
             letter or digit (no paths, no extension)",
            crate::text::clip(name, 80)
        )))
    }
}

/// Everything that refuses a topic before anything is written.
pub fn check(topic: &Topic) -> Result<()> {
    check_name(&topic.name)?;
    if topic.content.trim().is_empty() {
        return Err(Error::InvalidParams("the memory's content is empty".to_string()));
    }
    if topic.content.len() > MAX_CONTENT {
        return Err(Error::InvalidParams(format!(
            "the memory's content is {} bytes; a topic holds at most {} KiB: keep it short, or \
             split it into topics",
            topic.content.len(),
            MAX_CONTENT >> 10
        )));
    }
    if index::one_line(&topic.description).is_empty() {
        return Err(Error::InvalidParams("the memory's description is empty".to_string()));
    }
    let text = format!("{}\n{}", topic.description, topic.content);
    if let Some(why) = crate::secret::find(&text) {
        return Err(Error::InvalidParams(format!(
            "Refused: nothing was written to memory, because {why}. Memory never holds secrets: \
             remember where a secret lives (a vault path, an environment variable's name), \
             never its value."
        )));
    }
    Ok(())
}

/// A topic's file: a small front matter, then the content.
fn render(topic: &Topic) -> String {
    let content = topic.content.trim_end();
    format!(
        "---\nname: {}\ndescription: {}\ntype: {}\n---\n\n{content}\n",
        topic.name,
        index::one_line(&topic.description),
        topic.kind.as_str()
    )
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
