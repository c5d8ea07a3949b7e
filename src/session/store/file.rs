//! The file store: `<config>/sessions/<uuid>/` holds `journal.jsonl` (append-only, one
//! record per line), `meta.json` (replaced atomically: temp file, rename; fsynced with its
//! directory when the session is created) and `lock` (an advisory lock held while a
//! process drives the session). When `meta.json` is lost or damaged it is rebuilt from the
//! journal's `Start` record, so the journal alone is the truth. A session's directory and
//! files are used only when they are our own, real and not writable by others.
//!
//! Durability: every record is written with one `write_all` on an `O_APPEND` file as soon as
//! it exists, so a killed process loses nothing that was reported; the journal is
//! `fdatasync`ed at the end of every turn and when the session is closed, so a power loss
//! loses at most the turn in progress. A torn last line is cut off when the session opens.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{Journal, Meta, SessionStore};
use crate::error::{Error, IoContext, Result};
use crate::session::id::SessionId;
use crate::session::record::{Line, Rebuilt, Record};
use crate::session::seal::Seal;

/// The journal: one record per line, append-only.
pub(in crate::session) const JOURNAL: &str = "journal.jsonl";
/// The metadata, replaced atomically.
pub(in crate::session) const META: &str = "meta.json";
/// The advisory lock held by the process that drives the session.
pub(in crate::session) const LOCK: &str = "lock";

/// The sessions directory.
#[derive(Debug, Clone)]
pub struct FileStore {
    dir: PathBuf,
    /// Seals the mode records written here, and verifies those read.
    seal: Arc<Seal>,
}

/// A session opened for writing: its journal, its metadata and its lock.
#[derive(Debug)]
pub struct FileJournal {
    dir: PathBuf,
    id: SessionId,
    seal: Arc<Seal>,
    /// The journal and how many lines it holds (the position of the next).
    file: Mutex<(File, u64)>,
    meta: Mutex<Meta>,
    _lock: File,
}

impl FileStore {
    /// The store under `config_dir`.
    pub fn new(config_dir: &Path) -> FileStore {
        FileStore { dir: config_dir.join("sessions"), seal: Arc::new(Seal::new(config_dir)) }
    }

    fn journal(
        &self,
        dir: PathBuf,
        id: &SessionId,
        file: (File, u64),
        meta: Meta,
        lock: File,
    ) -> FileJournal {
        FileJournal {
            dir,
            id: id.clone(),
            seal: Arc::clone(&self.seal),
            file: Mutex::new(file),
            meta: Mutex::new(meta),
            _lock: lock,
        }
    }

    /// An empty history whose mode records count when sealed here for `id`.
    fn trusting(&self, id: &SessionId) -> Rebuilt {
        Rebuilt::trusting(&self.seal, id)
    }

    fn session_dir(&self, id: &SessionId) -> PathBuf {
        self.dir.join(id.as_str())
    }
}

impl SessionStore for FileStore {
    /// Creates a new session's files and takes its lock. The journal starts with a
    /// `Start` record, so the metadata can always be rebuilt from it.
    fn create(&self, meta: Meta) -> Result<Box<dyn Journal>> {
        let id = SessionId::parse(&meta.session_id)?;
        let dir = self.session_dir(&id);
        fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).at(&dir)?;
        let lock = take_lock(&dir, id.as_str())?;
        let file = open_journal(&dir)?;
        let start = Record::Start {
            cwd: meta.cwd.clone(),
            created_at: meta.created_at.clone(),
            forked_from: meta.forked_from.clone(),
        };
        let journal = self.journal(dir, &id, (file, 0), meta, lock);
        journal.append(&start)?;
        journal.write_meta(true)?;
        Ok(Box::new(journal))
    }

    /// Opens an existing session: takes its lock first, then reads; cuts a torn last line,
    /// skips garbage lines with a warning, mends the context, and brings the metadata in
    /// line with the journal. `None` if there is no such session.
    fn open(&self, id: &SessionId) -> Result<Option<(Box<dyn Journal>, Rebuilt)>> {
        let dir = self.session_dir(id);
        if !dir.join(META).exists() && !dir.join(JOURNAL).exists() {
            return Ok(None);
        }
        check_owned(&dir)?;
        let lock = take_lock(&dir, id.as_str())?;
        let rebuilt = read_journal(&dir, true, self.trusting(id))?;
        let Some(mut meta) = meta_or_rebuilt(&dir, id.as_str(), &rebuilt) else { return Ok(None) };
        meta.title = rebuilt.title.clone().or(meta.title);
        meta.messages = rebuilt.all.len() as u64;
        let file = open_journal(&dir)?;
        let journal = self.journal(dir, id, (file, rebuilt.lines), meta, lock);
        journal.write_meta(false)?;
        Ok(Some((Box::new(journal), rebuilt)))
    }

    /// Whether a session with this id exists on disk.
    fn exists(&self, id: &SessionId) -> bool {
        let dir = self.session_dir(id);
        dir.join(JOURNAL).exists() || dir.join(META).exists()
    }

    /// Reads a session without opening it: its metadata and history.
    fn peek(&self, id: &SessionId) -> Result<Option<(Meta, Rebuilt)>> {
        let dir = self.session_dir(id);
        if !dir.join(JOURNAL).exists() {
            return Ok(None);
        }
        check_owned(&dir)?;
        let rebuilt = read_journal(&dir, false, self.trusting(id))?;
        Ok(meta_or_rebuilt(&dir, id.as_str(), &rebuilt).map(|meta| (meta, rebuilt)))
    }

    /// Copies session `from` as `to` (complete journal lines only), records `forkedFrom`
    /// and the mode `from` would start in (sealed anew: the copied seals are `from`'s), and
    /// opens the copy. `None` if `from` does not exist.
    fn fork(
        &self,
        from: &SessionId,
        to: &SessionId,
        cwd: &str,
    ) -> Result<Option<(Box<dyn Journal>, Rebuilt)>> {
        let source = self.session_dir(from);
        let path = source.join(JOURNAL);
        if fs::symlink_metadata(&source).is_ok() {
            check_owned(&source)?;
        }
        let mut bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(err).at(&path),
        };
        bytes.truncate(bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1));
        let Some((source_meta, source)) = self.peek(from)? else { return Ok(None) };
        let meta = Meta::forked(source_meta, from, to, cwd);
        let start = meta.start();
        let dir = self.session_dir(to);
        fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).at(&dir)?;
        let lock = take_lock(&dir, to.as_str())?;
        let mut file = open_journal(&dir)?;
        file.write_all(&bytes).at(&dir.join(JOURNAL))?;
        let lines = complete_lines(&bytes).count() as u64;
        let journal = self.journal(dir.clone(), to, (file, lines), meta, lock);
        journal.append(&start)?;
        if let Some(mode) = source.mode {
            journal.append(&Record::Mode { mode })?;
        }
        journal.sync()?;
        journal.write_meta(true)?;
        Ok(Some((Box::new(journal), read_journal(&dir, false, self.trusting(to))?)))
    }

    /// Every session's metadata (unreadable ones are skipped with a warning).
    fn list(&self) -> Result<Vec<Meta>> {
        let Ok(entries) = fs::read_dir(&self.dir) else { return Ok(Vec::new()) };
        let dirs: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| SessionId::parse(&e.file_name().to_string_lossy()).is_ok())
            .map(|e| e.path())
            .collect();
        Ok(dirs
            .iter()
            .filter_map(|dir| match read_meta(dir) {
                Ok(Some(meta)) => Some(meta),
                // A lost or damaged meta.json: rebuild it from the journal.
                Ok(None) | Err(_) => {
                    let id = dir.file_name()?.to_string_lossy().into_owned();
                    let rebuilt = read_journal(dir, false, Rebuilt::default()).ok()?;
                    let meta = meta_or_rebuilt(dir, &id, &rebuilt);
                    if meta.is_none() {
                        log::warn!("skipping {}: no readable metadata or journal", dir.display());
                    }
                    meta
                }
            })
            .collect())
    }

    /// The session's metadata and its journal's complete lines.
    fn export(&self, id: &SessionId) -> Result<Option<(Meta, Vec<Vec<u8>>)>> {
        let Some((meta, _)) = self.peek(id)? else { return Ok(None) };
        let path = self.session_dir(id).join(JOURNAL);
        let bytes = fs::read(&path).at(&path)?;
        let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        Ok(Some((meta, complete_lines(&bytes[..complete]).map(<[u8]>::to_vec).collect())))
    }

    /// Writes an exported session's files (its directory must not exist yet), once every
    /// line reads as a journal record.
    fn import(&self, meta: Meta, lines: &[Vec<u8>]) -> Result<()> {
        let id = SessionId::parse(&meta.session_id)?;
        super::check_lines(lines)?;
        let dir = self.session_dir(&id);
        fs::create_dir_all(&self.dir).at(&self.dir)?;
        match fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(Error::Usage(format!("session {id} exists already")));
            }
            Err(err) => return Err(err).at(&dir),
        }
        let lock = take_lock(&dir, id.as_str())?;
        let mut file = open_journal(&dir)?;
        let mut text = Vec::new();
        for line in lines {
            text.extend_from_slice(line);
            text.push(b'\n');
        }
        file.write_all(&text).at(&dir.join(JOURNAL))?;
        let journal = self.journal(dir, &id, (file, lines.len() as u64), meta, lock);
        journal.sync()?;
        journal.write_meta(true)
    }

    /// Deletes a session's files. A session driven by a process (this one included) is
    /// refused; an unknown id is not an error.
    fn delete(&self, id: &SessionId) -> Result<()> {
        let dir = self.session_dir(id);
        if !dir.exists() {
            return Ok(());
        }
        let lock = take_lock(&dir, id.as_str())?;
        // Move it aside first so that a half-finished removal never looks like a session.
        let trash = self.dir.join(format!(".deleted-{id}-{}", std::process::id()));
        fs::rename(&dir, &trash).at(&dir)?;
        drop(lock);
        fs::remove_dir_all(&trash).at(&trash)
    }
}

impl FileJournal {
    /// Writes the metadata file; the lock is held from the copy through the rename, so
    /// two threads never interleave.
    fn write_meta(&self, durable: bool) -> Result<()> {
        let meta = crate::sync::lock(&self.meta);
        write_meta_file(&self.dir, &meta, durable)
    }
}

impl Journal for FileJournal {
    /// Appends one record (one write on an append-only file; a mode record sealed for its
    /// place). A failed write is cut back off, so that it cannot glue itself to the next
    /// record.
    fn append(&self, record: &Record) -> Result<()> {
        let path = self.dir.join(JOURNAL);
        {
            let mut guard = crate::sync::lock(&self.file);
            let (file, lines) = &mut *guard;
            let mut text = Line::encode(record, &self.id, *lines, &self.seal)?;
            text.push(b'\n');
            let before = file.metadata().at(&path)?.len();
            if let Err(err) = file.write_all(&text) {
                let _ = file.set_len(before);
                return Err(err).at(&path);
            }
            *lines += 1;
        }
        if matches!(
            record,
            Record::User { .. } | Record::Assistant { .. } | Record::ToolResult { .. }
        ) {
            crate::sync::lock(&self.meta).messages += 1;
        }
        Ok(())
    }

    /// Forces the journal to disk.
    fn sync(&self) -> Result<()> {
        crate::sync::lock(&self.file).0.sync_data().at(&self.dir.join(JOURNAL))
    }

    /// The current metadata.
    fn meta(&self) -> Meta {
        crate::sync::lock(&self.meta).clone()
    }

    /// Changes the metadata, stamps `updatedAt` and replaces the file atomically (without
    /// an fsync: if it is lost, it is rebuilt from the journal).
    fn update_meta(&self, change: &mut dyn FnMut(&mut Meta)) -> Result<()> {
        let mut meta = crate::sync::lock(&self.meta);
        change(&mut meta);
        meta.updated_at = crate::time::now_rfc3339();
        write_meta_file(&self.dir, &meta, false)
    }
}

fn open_journal(dir: &Path) -> Result<File> {
    let path = dir.join(JOURNAL);
    OpenOptions::new().create(true).append(true).mode(0o600).open(&path).at(&path)
}

fn take_lock(dir: &Path, id: &str) -> Result<File> {
    let path = dir.join(LOCK);
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .mode(0o600)
        .open(&path)
        .at(&path)?;
    match file.try_lock() {
        Ok(()) => {
            file.set_len(0).at(&path)?;
            let _ = write!(file, "{}", std::process::id());
            Ok(file)
        }
        Err(TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            let who = if holder.parse::<u32>().ok() == Some(std::process::id()) {
                "this iac-code process (another connection or an open session)".to_string()
            } else if holder.is_empty() {
                "another iac-code process".to_string()
            } else {
                format!("another iac-code process (pid {holder})")
            };
            Err(Error::Busy(format!("session {id} is in use by {who}")))
        }
        Err(TryLockError::Error(err)) => Err(err).at(&path),
    }
}

/// The records of a journal's complete lines (blank ones are no records).
fn complete_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split(|b| *b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace))
}

/// Reads a journal into `rebuilt`; with `repair`, cuts a torn last line off the file.
fn read_journal(dir: &Path, repair: bool, rebuilt: Rebuilt) -> Result<Rebuilt> {
    let path = dir.join(JOURNAL);
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => return Err(err).at(&path),
    };
    let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    if complete < bytes.len() {
        log::warn!(
            "{}: ignoring a torn last line ({} bytes)",
            path.display(),
            bytes.len() - complete
        );
        if repair {
            OpenOptions::new()
                .write(true)
                .open(&path)
                .and_then(|f| f.set_len(complete as u64))
                .at(&path)?;
        }
    }
    Ok(rebuilt.with_journal(&bytes, &path.display()))
}

/// Writes the metadata file.
fn write_meta_file(dir: &Path, meta: &Meta, durable: bool) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(meta)
        .map_err(|err| Error::Internal(format!("cannot encode session metadata: {err}")))?;
    write_atomic(&dir.join(META), &bytes, durable)
}

/// The metadata file, or, when it is missing or damaged, metadata rebuilt from the
/// journal's `Start` record. `None` if neither exists.
fn meta_or_rebuilt(dir: &Path, id: &str, rebuilt: &Rebuilt) -> Option<Meta> {
    match read_meta(dir) {
        Ok(Some(meta)) => return Some(meta),
        Ok(None) => {}
        Err(err) => log::warn!("{err}; rebuilding it from the journal"),
    }
    let updated_at = fs::metadata(dir.join(JOURNAL))
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| crate::time::rfc3339(d.as_secs() as i64, d.subsec_millis()));
    Meta::rebuilt(id, rebuilt, updated_at)
}

fn read_meta(dir: &Path) -> Result<Option<Meta>> {
    let path = dir.join(META);
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err).at(&path),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|err| Error::Internal(format!("{}: unreadable metadata: {err}", path.display())))
}

/// Writes `bytes` to `path` atomically (temp file, rename); with `durable`, also fsyncs the
/// file and the directory.
fn write_atomic(path: &Path, bytes: &[u8], durable: bool) -> Result<()> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp.{}.{n}", std::process::id()));
    let mut file = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .at(&tmp)?;
    file.write_all(bytes).at(&tmp)?;
    if durable {
        file.sync_all().at(&tmp)?;
    }
    fs::rename(&tmp, path).at(path)?;
    if durable && let Some(dir) = path.parent() {
        let _ = File::open(dir).and_then(|d| d.sync_all());
    }
    Ok(())
}

/// A session directory, and each of its files that exists, must be a real directory or
/// file (not a symlink) owned by the user we run as: another user must not be able to plant
/// a journal or point us at files elsewhere.
fn check_owned(dir: &Path) -> Result<()> {
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
