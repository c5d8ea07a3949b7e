//! Session metadata (`meta.json`): id, cwd, title, times, fork origin, message count.
//! Replaced atomically; when it is lost or damaged it is rebuilt from the journal's
//! `Start` record, so the journal alone is the truth.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::files::{JOURNAL, META};
use super::record::Rebuilt;
use crate::error::{Error, IoContext, Result};

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
    pub usage: Option<super::usage::UsageRecord>,
    /// Its additional directories, as the client gave them (the journal's last
    /// `directories` record is the truth).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_directories: Vec<String>,
}

/// Writes the metadata file.
pub(super) fn write_meta_file(dir: &Path, meta: &Meta, durable: bool) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(meta)
        .map_err(|err| Error::Internal(format!("cannot encode session metadata: {err}")))?;
    write_atomic(&dir.join(META), &bytes, durable)
}

/// The metadata file, or, when it is missing or damaged, metadata rebuilt from the
/// journal's `Start` record. `None` if neither exists.
pub(super) fn meta_or_rebuilt(dir: &Path, id: &str, rebuilt: &Rebuilt) -> Option<Meta> {
    match read_meta(dir) {
        Ok(Some(meta)) => return Some(meta),
        Ok(None) => {}
        Err(err) => log::warn!("{err}; rebuilding it from the journal"),
    }
    let (cwd, created_at, forked_from) = rebuilt.start.clone()?;
    let updated_at = fs::metadata(dir.join(JOURNAL))
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or_else(
            || created_at.clone(),
            |d| crate::time::rfc3339(d.as_secs() as i64, d.subsec_millis()),
        );
    Some(Meta {
        v: 1,
        session_id: id.to_string(),
        cwd,
        title: rebuilt.title.clone(),
        created_at,
        updated_at,
        forked_from,
        messages: rebuilt.all.len() as u64,
        usage: super::usage::UsageRecord::totals(&rebuilt.usage),
        additional_directories: rebuilt.directories.clone().unwrap_or_default(),
    })
}

pub(super) fn read_meta(dir: &Path) -> Result<Option<Meta>> {
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
pub(super) fn write_atomic(path: &Path, bytes: &[u8], durable: bool) -> Result<()> {
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
