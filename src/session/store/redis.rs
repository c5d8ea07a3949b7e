//! The Redis (or Valkey) store, for several nodes sharing sessions: the same two traits as
//! the file store, on the layout and scripts of `redis_db.rs`. A node drives a session only
//! while it holds the session's lease (taken with `SET NX PX`, renewed by the heartbeat,
//! carrying a fencing token); every append and metadata write checks, inside Redis, that
//! the lease is still this journal's, so a node that lost it (paused, partitioned) never
//! writes again. A session held by a live node is refused elsewhere (`Busy`, -32001); one
//! whose node died becomes free when its lease expires.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use redis::Value;

use super::redis_db::Db;
use super::redis_journal::RedisJournal;
use super::redis_reply::{int, pairs, strings, text, texts};
use super::{Finding, Journal, Meta, SessionStore};
use crate::error::{Error, Result};
use crate::session::id::SessionId;
use crate::session::record::{Rebuilt, Record};
use crate::session::seal::Seal;

/// The shared store.
pub struct RedisStore {
    db: Arc<Db>,
    /// Seals the mode records written here, and verifies those read.
    seal: Arc<Seal>,
}

impl RedisStore {
    /// The store at `url` under `prefix`; no connection is made yet (a server that is down
    /// at start only fails the requests that need it).
    pub fn new(
        url: &str,
        prefix: &str,
        node: &str,
        ttl: Duration,
        ca: Option<Vec<u8>>,
    ) -> Result<RedisStore> {
        Ok(RedisStore { db: Db::new(url, prefix, node, ttl, ca)?, seal: Arc::new(Seal::none()) })
    }

    /// The store with this node's seal (without one, no mode that widens is restored).
    pub fn sealed_by(self, seal: Seal) -> RedisStore {
        RedisStore { seal: Arc::new(seal), ..self }
    }

    /// Takes `id`'s lease for this node: the value written with it.
    /// A lease held by a process of this host that no longer exists (it was killed, or
    /// crashed) is taken over at once, as a dead process's file lock is: only that exact
    /// lease value is replaced, and a process that is merely paused still exists.
    fn acquire(&self, id: &SessionId) -> Result<String> {
        let db = &self.db;
        let (lease, fence) = (db.skey(id, "lease"), db.skey(id, "fence"));
        let ttl = db.ttl.as_millis() as u64;
        let owner = db.owner();
        let reply = db.run(&mut |con| {
            db.scripts.acquire.key(&lease).key(&fence).arg(&owner).arg(ttl).invoke(con)
        })?;
        let (won, value) = match reply {
            Value::Array(mut parts) if parts.len() == 2 => {
                let value = parts.pop().and_then(text).unwrap_or_default();
                (int(&parts[0]), value)
            }
            _ => (0, String::new()),
        };
        if won == 1 {
            return Ok(format!("{owner}|{value}"));
        }
        let fields: Vec<&str> = value.split('|').collect();
        if let [_, machine, pid, _, _] = fields.as_slice()
            && !db.machine.is_empty()
            && *machine == db.machine
            && pid.parse::<u32>().is_ok_and(|pid| pid != std::process::id() && !running(pid))
        {
            let token = db.run(&mut |con| {
                db.scripts
                    .steal
                    .key(&lease)
                    .key(&fence)
                    .arg(&value)
                    .arg(&owner)
                    .arg(ttl)
                    .invoke(con)
            })?;
            if let Some(token) = text(token) {
                log::info!("session {id}: took over the lease of dead process {pid} of this host");
                return Ok(format!("{owner}|{token}"));
            }
        }
        let holder = fields.first().copied().unwrap_or("another node");
        let who = if holder == db.node {
            "this node (another connection or an open session)".to_string()
        } else {
            format!("node {holder}")
        };
        Err(Error::Busy(format!("session {id} is in use by {who}")))
    }

    fn journal(&self, id: &SessionId, lease: String, seq: u64, meta: Meta) -> RedisJournal {
        RedisJournal::new(&self.db, id, lease, seq, meta, &self.seal)
    }

    /// Whether `id` exists, or why that cannot be told.
    fn exists_checked(&self, id: &SessionId) -> Result<bool> {
        let keys = [self.db.skey(id, "m"), self.db.skey(id, "j")];
        let n = self.db.run(&mut |con| redis::cmd("EXISTS").arg(&keys).query(con))?;
        Ok(int(&n) > 0)
    }

    /// Every record line of `id`'s journal, in order.
    fn lines(&self, id: &SessionId) -> Result<Vec<Vec<u8>>> {
        let key = self.db.skey(id, "j");
        // Read as plain values (one `FromRedisValue` instance fewer per shape in the binary).
        let entries: Value =
            self.db.run(&mut |con| redis::cmd("XRANGE").arg(&key).arg("-").arg("+").query(con))?;
        let Value::Array(entries) = entries else { return Ok(Vec::new()) };
        Ok(entries
            .into_iter()
            .filter_map(|entry| {
                let Value::Array(mut parts) = entry else { return None };
                let fields = pairs(parts.pop()?);
                fields.into_iter().find(|(name, _)| name == b"r").map(|(_, value)| value)
            })
            .collect())
    }

    /// The history of `id`, rebuilt from its stream.
    fn rebuilt(&self, id: &SessionId) -> Result<(Rebuilt, usize)> {
        let lines = self.lines(id)?;
        let mut rebuilt = Rebuilt::trusting(&self.seal, id);
        for (n, line) in lines.iter().enumerate() {
            rebuilt.apply_line(line, &format_args!("session {id}, record {}", n + 1));
        }
        rebuilt.mend();
        Ok((rebuilt, lines.len()))
    }

    /// The metadata hash of `id` (with the sequence number), if there is one.
    fn read_meta(&self, id: &SessionId) -> Result<Option<(Meta, u64)>> {
        let key = self.db.skey(id, "m");
        let fields: Value = self.db.run(&mut |con| redis::cmd("HGETALL").arg(&key).query(con))?;
        let fields = strings(fields);
        Ok(meta_of(&fields).map(|meta| {
            let seq = fields.get("seq").and_then(|s| s.parse().ok()).unwrap_or(0);
            (meta, seq)
        }))
    }
}

impl SessionStore for RedisStore {
    fn health(&self) -> std::result::Result<Duration, String> {
        self.db.ping()
    }

    fn name(&self) -> String {
        format!("redis {} (prefix {})", self.db.name, self.db.prefix)
    }

    fn check(&self) -> Vec<Finding> {
        self.db.check()
    }

    fn create(&self, meta: Meta) -> Result<Box<dyn Journal>> {
        let id = SessionId::parse(&meta.session_id)?;
        let lease = self.acquire(&id)?;
        let start = Record::Start {
            cwd: meta.cwd.clone(),
            created_at: meta.created_at.clone(),
            forked_from: meta.forked_from.clone(),
        };
        let journal = self.journal(&id, lease, 0, meta);
        journal.append(&start)?;
        journal.write_meta()?;
        Ok(Box::new(journal))
    }

    fn open(&self, id: &SessionId) -> Result<Option<(Box<dyn Journal>, Rebuilt)>> {
        if !self.exists_checked(id)? {
            return Ok(None);
        }
        let lease = self.acquire(id)?;
        let found = (|| {
            let (rebuilt, count) = self.rebuilt(id)?;
            let (meta, seq) = match self.read_meta(id)? {
                Some((meta, seq)) => (Some(meta), seq),
                None => (Meta::rebuilt(id.as_str(), &rebuilt, None), 0),
            };
            Ok::<_, Error>(meta.map(|meta| (rebuilt, meta, seq.max(count as u64))))
        })();
        let (rebuilt, mut meta, seq) = match found {
            Ok(Some(found)) => found,
            Ok(None) => {
                self.db.let_go(id, &lease);
                return Ok(None);
            }
            Err(err) => {
                self.db.let_go(id, &lease);
                return Err(err);
            }
        };
        meta.title = rebuilt.title.clone().or(meta.title);
        meta.messages = rebuilt.all.len() as u64;
        let journal = self.journal(id, lease, seq, meta);
        journal.write_meta()?;
        Ok(Some((Box::new(journal), rebuilt)))
    }

    fn exists(&self, id: &SessionId) -> bool {
        self.exists_checked(id).unwrap_or_else(|err| {
            log::warn!("{err}");
            false
        })
    }

    fn peek(&self, id: &SessionId) -> Result<Option<(Meta, Rebuilt)>> {
        let (rebuilt, count) = self.rebuilt(id)?;
        if count == 0 {
            return Ok(None);
        }
        let meta = match self.read_meta(id)? {
            Some((meta, _)) => Some(meta),
            None => Meta::rebuilt(id.as_str(), &rebuilt, None),
        };
        Ok(meta.map(|meta| (meta, rebuilt)))
    }

    fn fork(
        &self,
        from: &SessionId,
        to: &SessionId,
        cwd: &str,
    ) -> Result<Option<(Box<dyn Journal>, Rebuilt)>> {
        let Some((source, history)) = self.peek(from)? else { return Ok(None) };
        let lines = self.lines(from)?;
        let lease = self.acquire(to)?;
        let meta = Meta::forked(source, from, to, cwd);
        let start = meta.start();
        let journal = self.journal(to, lease, 0, meta);
        for line in &lines {
            journal.append_line(line, counts(line))?;
        }
        journal.append(&start)?;
        // The copied seals are `from`'s: the mode it would start in is sealed anew.
        if let Some(mode) = history.mode {
            journal.append(&Record::Mode { mode })?;
        }
        journal.write_meta()?;
        let (rebuilt, _) = self.rebuilt(to)?;
        Ok(Some((Box::new(journal), rebuilt)))
    }

    fn export(&self, id: &SessionId) -> Result<Option<(Meta, Vec<Vec<u8>>)>> {
        let Some((meta, _)) = self.peek(id)? else { return Ok(None) };
        Ok(Some((meta, self.lines(id)?)))
    }

    fn import(&self, meta: Meta, lines: &[Vec<u8>]) -> Result<()> {
        let id = SessionId::parse(&meta.session_id)?;
        super::check_lines(lines)?;
        if self.exists_checked(&id)? {
            return Err(Error::Usage(format!("session {id} exists already")));
        }
        let lease = self.acquire(&id)?;
        let journal = self.journal(&id, lease, 0, meta);
        let written = lines
            .iter()
            .try_for_each(|line| journal.append_line(line, counts(line)))
            .and_then(|()| journal.write_meta());
        if let Err(err) = written {
            // A half import is removed, so a later one (or `migrate`) is not skipped.
            drop(journal);
            let _ = self.delete(&id);
            return Err(err);
        }
        Ok(())
    }

    fn list(&self) -> Result<Vec<Meta>> {
        let key = self.db.key("list");
        let listed = self.db.run(&mut |con| {
            let ids = texts(redis::cmd("ZREVRANGE").arg(&key).arg(0).arg(-1).query(con)?);
            if ids.is_empty() {
                return Ok(Value::Array(Vec::new()));
            }
            let mut pipe = redis::pipe();
            for id in &ids {
                pipe.cmd("HGETALL").arg(format!("{}s:{id}:m", self.db.prefix));
            }
            pipe.query::<Value>(con)
        });
        match listed? {
            Value::Array(all) => {
                Ok(all.into_iter().map(strings).filter_map(|m| meta_of(&m)).collect())
            }
            _ => Ok(Vec::new()),
        }
    }

    fn delete(&self, id: &SessionId) -> Result<()> {
        if !self.exists_checked(id)? {
            return Ok(());
        }
        let lease = self.acquire(id)?;
        let cwd = self.read_meta(id)?.map(|(meta, _)| meta.cwd).unwrap_or_default();
        let db = &self.db;
        let keys = [
            db.skey(id, "lease"),
            db.skey(id, "j"),
            db.skey(id, "m"),
            db.skey(id, "fence"),
            db.key("list"),
            db.cwd_key(&cwd),
        ];
        // Fenced like every write: a node that lost the lease meanwhile removes nothing.
        let removed = db.run(&mut |con| {
            let mut call = db.scripts.delete.prepare_invoke();
            for key in &keys {
                call.key(key);
            }
            call.arg(&lease).arg(id.as_str()).invoke(con)
        });
        db.forget(id.as_str(), &lease);
        removed.map(|_| ())
    }
}

/// Whether a journal line is a message (which the `messages` count counts).
fn counts(line: &[u8]) -> bool {
    serde_json::from_slice::<crate::session::record::Line>(line).is_ok_and(|l| {
        matches!(
            l.record,
            Record::User { .. } | Record::Assistant { .. } | Record::ToolResult { .. }
        )
    })
}

/// Whether process `pid` of this host still exists (a zombie too: it is not reaped yet).
fn running(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// A metadata hash as `Meta` (`None` if it lacks the essentials).
fn meta_of(fields: &HashMap<String, String>) -> Option<Meta> {
    let get = |key: &str| fields.get(key).cloned();
    Some(Meta {
        v: get("v").and_then(|v| v.parse().ok()).unwrap_or(1),
        session_id: get("sessionId")?,
        cwd: get("cwd")?,
        title: get("title").filter(|t| !t.is_empty()),
        created_at: get("createdAt")?,
        updated_at: get("updatedAt")?,
        forked_from: get("forkedFrom").filter(|f| !f.is_empty()),
        messages: get("messages").and_then(|m| m.parse().ok()).unwrap_or(0),
        usage: get("usage").and_then(|u| serde_json::from_str(&u).ok()),
        additional_directories: get("additionalDirectories")
            .and_then(|d| serde_json::from_str(&d).ok())
            .unwrap_or_default(),
    })
}
