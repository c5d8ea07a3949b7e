//! A session this node drives in the Redis store: every append and metadata write is
//! fenced by its lease (checked inside Redis), written once however often a write is
//! retried (a sequence number), and refused for good once the lease is found lost.

use std::sync::{Arc, Mutex};

use super::redis_db::{Db, Lost};
use super::{Journal, Meta};
use crate::error::{Error, Result};
use crate::session::id::SessionId;
use crate::session::record::{Line, Record};
use crate::session::seal::Seal;
use crate::sync::lock;

/// A session this node drives: its lease, the next sequence number, its metadata.
pub(super) struct RedisJournal {
    db: Arc<Db>,
    id: SessionId,
    /// `<node>|<fencing token>`: what the lease key must still hold for a write.
    lease: String,
    /// The last record's sequence number (retried appends are written once).
    seq: Mutex<u64>,
    meta: Mutex<Meta>,
    lost: Arc<Lost>,
    seal: Arc<Seal>,
}

impl RedisJournal {
    pub(super) fn new(
        db: &Arc<Db>,
        id: &SessionId,
        lease: String,
        seq: u64,
        meta: Meta,
        seal: &Arc<Seal>,
    ) -> RedisJournal {
        let lost = Arc::new(Lost::default());
        db.hold(id, &lease, &lost);
        RedisJournal {
            db: Arc::clone(db),
            id: id.clone(),
            lease,
            seq: Mutex::new(seq),
            meta: Mutex::new(meta),
            lost,
            seal: Arc::clone(seal),
        }
    }
}

/// Milliseconds since the epoch, the listings' score.
fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl RedisJournal {
    /// Fails at once if the lease was found lost (no write is even tried).
    fn check(&self) -> Result<()> {
        match lock(&self.lost.0).clone() {
            Some(why) => Err(Error::Busy(why)),
            None => Ok(()),
        }
    }

    /// A refused write means the lease is gone: remember it, so nothing is tried again.
    fn refused(&self, err: Error) -> Error {
        if let Error::Busy(why) = &err {
            self.lost.mark(why);
        }
        err
    }

    /// Appends one encoded line, fenced by the lease, written once however often retried.
    pub(super) fn append_line(&self, line: &[u8], message: bool) -> Result<()> {
        self.push(&|_| Ok(line.to_vec()), message)
    }

    /// Appends the line `encode` makes for its place in the stream (the number of entries
    /// before it), under the sequence lock so that the place is the one it gets.
    fn push(&self, encode: &dyn Fn(u64) -> Result<Vec<u8>>, message: bool) -> Result<()> {
        self.check()?;
        let db = &self.db;
        let keys = [db.skey(&self.id, "lease"), db.skey(&self.id, "j"), db.skey(&self.id, "m")];
        let mut seq = lock(&self.seq);
        let line = encode(*seq)?;
        let next = *seq + 1;
        let flag = if message { "1" } else { "0" };
        db.run(&mut |con| {
            db.scripts
                .append
                .key(&keys[0])
                .key(&keys[1])
                .key(&keys[2])
                .arg(&self.lease)
                .arg(&line)
                .arg(flag)
                .arg(next)
                .invoke(con)
        })
        .map_err(|err| self.refused(err))?;
        *seq = next;
        Ok(())
    }

    /// Writes the metadata hash and the listings' scores, fenced by the lease.
    pub(super) fn write_meta(&self) -> Result<()> {
        self.check()?;
        let meta = lock(&self.meta).clone();
        let db = &self.db;
        let keys = [
            db.skey(&self.id, "lease"),
            db.skey(&self.id, "m"),
            db.key("list"),
            db.cwd_key(&meta.cwd),
        ];
        let fields = [
            ("v", meta.v.to_string()),
            ("sessionId", meta.session_id.clone()),
            ("cwd", meta.cwd.clone()),
            ("title", meta.title.clone().unwrap_or_default()),
            ("createdAt", meta.created_at.clone()),
            ("updatedAt", meta.updated_at.clone()),
            ("forkedFrom", meta.forked_from.unwrap_or_default()),
            ("usage", meta.usage.and_then(|u| serde_json::to_string(&u).ok()).unwrap_or_default()),
            ("additionalDirectories", directories(&meta.additional_directories)),
        ];
        let score = now_millis();
        db.run(&mut |con| {
            let mut call = db.scripts.meta.prepare_invoke();
            for key in &keys {
                call.key(key);
            }
            call.arg(&self.lease).arg(score).arg(self.id.as_str());
            for (name, value) in &fields {
                call.arg(*name).arg(value);
            }
            call.invoke(con)
        })
        .map(|_| ())
        .map_err(|err| self.refused(err))
    }
}

impl Journal for RedisJournal {
    fn on_lost(&self, tell: Box<dyn Fn(&str) + Send + Sync>) {
        self.lost.on_lost(tell);
    }

    fn append(&self, record: &Record) -> Result<()> {
        let message = matches!(
            record,
            Record::User { .. } | Record::Assistant { .. } | Record::ToolResult { .. }
        );
        self.push(&|index| Line::encode(record, &self.id, index, &self.seal), message)?;
        if message {
            lock(&self.meta).messages += 1;
        }
        Ok(())
    }

    /// Durability is Redis's (its AOF settings, which `doctor` checks): nothing to do here.
    fn sync(&self) -> Result<()> {
        Ok(())
    }

    fn meta(&self) -> Meta {
        lock(&self.meta).clone()
    }

    fn update_meta(&self, change: &mut dyn FnMut(&mut Meta)) -> Result<()> {
        {
            let mut meta = lock(&self.meta);
            change(&mut meta);
            meta.updated_at = crate::time::now_rfc3339();
        }
        self.write_meta()
    }
}

impl Drop for RedisJournal {
    fn drop(&mut self) {
        if lock(&self.lost.0).is_none() {
            self.db.let_go(&self.id, &self.lease);
        }
    }
}

/// The additional directories as the metadata hash keeps them (JSON), empty for none.
fn directories(dirs: &[String]) -> String {
    if dirs.is_empty() { String::new() } else { serde_json::to_string(dirs).unwrap_or_default() }
}
