//! Where sessions live: the `SessionStore` and `Journal` traits that every session operation
//! goes through, the metadata (`Meta`) each store keeps beside a journal, and their two
//! implementations: the file store (`file.rs`, the default) and the Redis store that several
//! nodes share (`redis.rs`, on `redis_db.rs` and `redis_journal.rs`). `open` picks the one
//! the configuration names.

mod file;
mod redis;
mod redis_db;
mod redis_journal;
mod redis_reply;
mod redis_scripts;

pub use file::FileStore;
pub(super) use file::JOURNAL;
pub use redis::RedisStore;

use serde::{Deserialize, Serialize};

use super::id::SessionId;
use super::record::{Line, Rebuilt, Record};
use crate::error::{Error, Result};

/// The metadata of a session (`meta.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    /// Format version.
    pub v: u32,
    pub session_id: String,
    /// Working directory as the client gave it.
    pub cwd: String,
    /// Title: the first prompt or a `/rename`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Creation time (RFC 3339).
    pub created_at: String,
    /// Last change (RFC 3339).
    pub updated_at: String,
    /// The session this one was forked from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<String>,
    /// Messages in the journal.
    #[serde(default)]
    pub messages: u64,
    /// What the session's model calls used and cost, all told (as of its last turn; the
    /// journal's `usage` records are the truth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<super::record::UsageRecord>,
    /// Its additional directories, as the client gave them (the journal's last
    /// `directories` record is the truth).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_directories: Vec<String>,
}

impl Meta {
    /// The metadata of a new session with a random id, made now in `cwd`, with nothing
    /// in it yet.
    pub fn new(cwd: String, title: Option<String>) -> Meta {
        let now = crate::time::now_rfc3339();
        Meta {
            v: 1,
            session_id: SessionId::random().to_string(),
            cwd,
            title,
            created_at: now.clone(),
            updated_at: now,
            forked_from: None,
            messages: 0,
            usage: None,
            additional_directories: Vec::new(),
        }
    }

    /// The metadata of session `id` rebuilt from its journal's `Start` record, last changed
    /// at `updated_at` (the creation time when that is not known). `None` without a `Start`.
    fn rebuilt(id: &str, rebuilt: &Rebuilt, updated_at: Option<String>) -> Option<Meta> {
        let (cwd, created_at, forked_from) = rebuilt.start.clone()?;
        Some(Meta {
            v: 1,
            session_id: id.to_string(),
            cwd,
            title: rebuilt.title.clone(),
            updated_at: updated_at.unwrap_or_else(|| created_at.clone()),
            created_at,
            forked_from,
            messages: rebuilt.all.len() as u64,
            usage: super::record::UsageRecord::totals(&rebuilt.usage),
            additional_directories: rebuilt.directories.clone().unwrap_or_default(),
        })
    }

    /// The metadata of `to`, a fork of session `from` (whose metadata is `source`) made now
    /// in `cwd`.
    fn forked(source: Meta, from: &SessionId, to: &SessionId, cwd: &str) -> Meta {
        let now = crate::time::now_rfc3339();
        Meta {
            v: 1,
            session_id: to.to_string(),
            cwd: cwd.to_string(),
            title: source.title,
            created_at: now.clone(),
            updated_at: now,
            forked_from: Some(from.to_string()),
            messages: source.messages,
            usage: source.usage,
            additional_directories: source.additional_directories,
        }
    }

    /// The journal's `Start` record for this session.
    fn start(&self) -> Record {
        Record::Start {
            cwd: self.cwd.clone(),
            created_at: self.created_at.clone(),
            forked_from: self.forked_from.clone(),
        }
    }
}

/// A journal opened for writing and the session's metadata, held (locked) by this process
/// while it drives the session.
pub trait Journal: Send + Sync {
    /// Appends one record. A record that was reported appended is never lost.
    fn append(&self, record: &Record) -> Result<()>;
    /// Makes what was appended durable.
    fn sync(&self) -> Result<()>;
    /// The current metadata.
    fn meta(&self) -> Meta;
    /// Changes the metadata and stamps `updatedAt`.
    fn update_meta(&self, change: &mut dyn FnMut(&mut Meta)) -> Result<()>;
    /// Tells `tell` (once, with why) if this journal can no longer write: a shared store's
    /// lease lost to another node, or not renewed in time. A file's lock is never lost.
    fn on_lost(&self, _tell: Box<dyn Fn(&str) + Send + Sync>) {}
}

/// The store the configuration names. A Redis URL that cannot be used, or an unreadable CA
/// file, is a configuration error (exit 2); a Redis server that is down is not: no
/// connection is made until a request needs one.
pub fn open(config: &crate::config::Config) -> Result<Box<dyn SessionStore>> {
    use crate::config::StoreConfig;
    match &config.store {
        StoreConfig::File => Ok(Box::new(FileStore::new(&config.config_dir))),
        StoreConfig::Redis { url, prefix, ca_file } => {
            let ca = match ca_file {
                Some(path) => Some(std::fs::read(path).map_err(|err| {
                    crate::error::Error::Config(format!(
                        "IAC_CODE_CA_FILE {}: {err}",
                        path.display()
                    ))
                })?),
                None => None,
            };
            let store = RedisStore::new(url, prefix, &config.node_id, config.lease_ttl, ca)?
                .sealed_by(super::seal::Seal::new(&config.config_dir));
            log::info!("node {}: sessions in {}", config.node_id, store.name());
            Ok(Box::new(store))
        }
    }
}

/// Checks exported journal lines as the journal reader reads them, before anything is
/// written: an error (a usage error, exit 2) naming the first that is not one record.
pub fn check_lines(lines: &[Vec<u8>]) -> Result<()> {
    for (n, line) in lines.iter().enumerate() {
        Line::read(line).map_err(|why| Error::Usage(format!("record {}: {why}", n + 1)))?;
    }
    Ok(())
}

/// Changes `journal`'s metadata with a one-shot closure.
pub fn update_meta(journal: &dyn Journal, change: impl FnOnce(&mut Meta)) -> Result<()> {
    let mut change = Some(change);
    journal.update_meta(&mut |meta| {
        if let Some(change) = change.take() {
            change(meta);
        }
    })
}

/// Every session, and the operations on one by id.
pub trait SessionStore: Send + Sync {
    /// Creates a session and takes its lock; the journal starts with a `Start` record.
    fn create(&self, meta: Meta) -> Result<Box<dyn Journal>>;
    /// Opens a session (lock first, then read, repaired), with its history. `None`: no such
    /// session.
    fn open(&self, id: &SessionId) -> Result<Option<(Box<dyn Journal>, Rebuilt)>>;
    /// Whether the session exists.
    fn exists(&self, id: &SessionId) -> bool;
    /// Reads a session without opening it.
    fn peek(&self, id: &SessionId) -> Result<Option<(Meta, Rebuilt)>>;
    /// Copies session `from` as `to` (its whole journal, `forkedFrom` recorded) and opens
    /// the copy. `None` if `from` does not exist.
    fn fork(
        &self,
        from: &SessionId,
        to: &SessionId,
        cwd: &str,
    ) -> Result<Option<(Box<dyn Journal>, Rebuilt)>>;
    /// Every session's metadata (an error when the store cannot be read, never an empty
    /// list that is not true).
    fn list(&self) -> Result<Vec<Meta>>;
    /// Deletes a session; one held by a process is refused, an unknown id is no error.
    fn delete(&self, id: &SessionId) -> Result<()>;
    /// A session as it is kept: its metadata and its journal's lines, byte for byte (for
    /// `iac-code sessions export` and `migrate`). `None`: no such session.
    fn export(&self, id: &SessionId) -> Result<Option<(Meta, Vec<Vec<u8>>)>>;
    /// Creates a session from exported metadata and journal lines (refused if the id
    /// exists, or if a line is not one journal record: `check_lines`). Nothing is left
    /// behind on failure but what `delete` removes.
    fn import(&self, meta: Meta, lines: &[Vec<u8>]) -> Result<()>;
    /// Whether the store answers (its round trip), or why not.
    fn health(&self) -> std::result::Result<std::time::Duration, String> {
        Ok(std::time::Duration::ZERO)
    }
    /// What it is, for logs, `/health` and `doctor` (never a password).
    fn name(&self) -> String {
        "file".to_string()
    }
    /// What `doctor` should say of it, beyond `health`.
    fn check(&self) -> Vec<Finding> {
        Vec::new()
    }
}

/// One thing `doctor` says of the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    Ok(String),
    Warn(String),
    Error(String),
}
