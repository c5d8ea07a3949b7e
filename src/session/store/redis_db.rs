//! The Redis side of the shared store: connections (a small pool, every one with read and
//! write timeouts), the key layout, the Lua scripts that make leases and fenced appends
//! atomic, and the heartbeat thread that renews this node's leases.
//!
//! Layout, under the prefix P (default `iac:`): `P s:<id>:j` a Stream, one entry per
//! journal record (field `r`: the same JSON line the file store writes); `P s:<id>:m` a
//! hash, the metadata (`meta.json`'s fields); `P list` and `P cwd:<hash of the cwd>`
//! sorted sets of session ids by `updatedAt` (milliseconds); `P s:<id>:lease` the lease,
//! `<node>|<host>|<pid>|<token>` with a TTL; `P s:<id>:fence` the fencing counter, incremented on every
//! acquisition. Ids are parsed `SessionId`s and a cwd only ever appears hashed, so no key
//! is shaped by what a client sends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use redis::{Client, Connection, Script, Value};

use super::Finding;
use crate::error::{Error, Result};
use crate::session::id::SessionId;
use crate::sync::lock;

/// Timeouts of one connection (connect, each read and write).
const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// How long an operation retries while the server is unreachable (a restart).
pub(super) const RETRY_FOR: Duration = Duration::from_secs(5);
/// Idle connections kept.
const POOL: usize = 8;

/// Takes a lease if it is free: returns the new fencing token, or the holder.
const ACQUIRE: &str = r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local token = redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[1], ARGV[1] .. '|' .. token, 'PX', ARGV[2])
  return {1, tostring(token)}
end
return {0, redis.call('GET', KEYS[1]) or ''}
";

/// Takes over exactly the lease value ARGV[1] (a dead process's): a new token, the new
/// owner ARGV[2], the TTL ARGV[3]. Nil if the lease changed meanwhile.
const STEAL: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  local token = redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[1], ARGV[2] .. '|' .. token, 'PX', ARGV[3])
  return tostring(token)
end
return false
";

/// Renews a lease this node holds (0: it is no longer ours).
const RENEW: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

/// Lets go of a lease this node holds.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// Appends a record if the lease is still ours (the fence), once: a retried append whose
/// sequence number is already in is not written again. KEYS: lease, stream, meta. ARGV:
/// lease value, line, 1 if a message, the record's sequence number.
const APPEND: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('LEASE lost')
end
local last = tonumber(redis.call('HGET', KEYS[3], 'seq') or '0')
if tonumber(ARGV[4]) <= last then return 0 end
redis.call('XADD', KEYS[2], '*', 'r', ARGV[2])
redis.call('HSET', KEYS[3], 'seq', ARGV[4])
if ARGV[3] == '1' then redis.call('HINCRBY', KEYS[3], 'messages', 1) end
return 1
";

/// Writes metadata fields if the lease is still ours (KEYS: lease, meta, list, cwd list;
/// ARGV: lease value, score, id, then field/value pairs).
const META: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('LEASE lost')
end
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[3])
return 1
";

/// The connection to Redis and this node's leases.
pub(super) struct Db {
    me: Weak<Db>,
    /// The heartbeat starts with the first lease: a thread started at construction could
    /// predate the signal mask the HTTP server sets, and take its SIGTERM.
    heartbeat: std::sync::Once,
    client: Client,
    /// Shown in errors: the URL without its password.
    pub(super) name: String,
    pub(super) prefix: String,
    pub(super) node: String,
    /// This host's name, in leases (a lease of a dead process of this host is taken over).
    pub(super) host: String,
    pub(super) ttl: Duration,
    idle: Mutex<Vec<Connection>>,
    /// Leases held by this node: session id → (lease value, the journal's lost flag).
    held: Mutex<HashMap<String, (String, Weak<Lost>)>>,
    pub(super) scripts: Scripts,
}

/// Why a journal can no longer write (set by the heartbeat or a refused append).
#[derive(Default)]
pub(super) struct Lost(pub(super) Mutex<Option<String>>);

pub(super) struct Scripts {
    pub(super) acquire: Script,
    pub(super) renew: Script,
    pub(super) release: Script,
    pub(super) append: Script,
    pub(super) steal: Script,
    pub(super) meta: Script,
}

impl Db {
    pub(super) fn new(
        url: &str,
        prefix: &str,
        node: &str,
        ttl: Duration,
        ca: Option<Vec<u8>>,
    ) -> Result<Arc<Db>> {
        let name = crate::config::redacted(url);
        let client = match ca {
            Some(root) => Client::build_with_tls(
                url,
                redis::TlsCertificates { client_tls: None, root_cert: Some(root) },
            ),
            None => Client::open(url),
        }
        .map_err(|err| Error::Config(format!("session store {name}: {err}")))?;
        let db = Arc::new_cyclic(|me| Db {
            me: me.clone(),
            heartbeat: std::sync::Once::new(),
            client,
            name,
            prefix: prefix.to_string(),
            node: node.to_string(),
            host: std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map(|h| h.trim().replace('|', "_"))
                .unwrap_or_default(),
            ttl,
            idle: Mutex::new(Vec::new()),
            held: Mutex::new(HashMap::new()),
            scripts: Scripts {
                acquire: Script::new(ACQUIRE),
                renew: Script::new(RENEW),
                release: Script::new(RELEASE),
                append: Script::new(APPEND),
                steal: Script::new(STEAL),
                meta: Script::new(META),
            },
        });
        Ok(db)
    }

    /// What a lease of this process holds before its token: `<node>|<host>|<pid>`.
    pub(super) fn owner(&self) -> String {
        format!("{}|{}|{}", self.node, self.host, std::process::id())
    }

    /// A key under the prefix.
    pub(super) fn key(&self, rest: &str) -> String {
        format!("{}{rest}", self.prefix)
    }

    /// A session's key (`s:<id>:<what>`).
    pub(super) fn skey(&self, id: &SessionId, what: &str) -> String {
        format!("{}s:{}:{what}", self.prefix, id.as_str())
    }

    /// The per-cwd listing's key: the cwd hashed, never spelled into a key.
    pub(super) fn cwd_key(&self, cwd: &str) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in cwd.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        format!("{}cwd:{h:016x}", self.prefix)
    }

    fn connect(&self) -> redis::RedisResult<Connection> {
        let con = self.client.get_connection_with_timeout(IO_TIMEOUT)?;
        con.set_read_timeout(Some(IO_TIMEOUT))?;
        con.set_write_timeout(Some(IO_TIMEOUT))?;
        Ok(con)
    }

    /// Runs `op` on a connection, retrying (for `RETRY_FOR`) while the server cannot be
    /// reached; a reply error (a refused script) is returned at once.
    /// Every reply is read as a plain `Value` (see `int`, `text`): one instance of this
    /// loop and of the reply parser in the binary, not one per reply shape.
    pub(super) fn run(
        &self,
        op: &mut dyn FnMut(&mut Connection) -> redis::RedisResult<Value>,
    ) -> Result<Value> {
        let deadline = Instant::now() + RETRY_FOR;
        let mut delay = Duration::from_millis(50);
        loop {
            let pooled = lock(&self.idle).pop();
            let attempt = match pooled.map_or_else(|| self.connect(), Ok) {
                Ok(mut con) => op(&mut con).map(|value| (value, con)),
                Err(err) => Err(err),
            };
            let err = match attempt {
                Ok((value, con)) => {
                    let mut idle = lock(&self.idle);
                    if idle.len() < POOL {
                        idle.push(con);
                    }
                    return Ok(value);
                }
                Err(err) => err,
            };
            let transient = err.is_io_error()
                || err.is_connection_refusal()
                || err.is_timeout()
                || err.is_connection_dropped()
                || err.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::BusyLoading);
            if !transient || Instant::now() + delay > deadline {
                return Err(self.failed(&err));
            }
            std::thread::sleep(delay);
            delay = (delay * 2).min(Duration::from_millis(800));
        }
    }

    /// A Redis error as ours: a lost lease is `Busy`, anything else names the store.
    pub(super) fn failed(&self, err: &redis::RedisError) -> Error {
        let text = err.to_string();
        if text.contains("LEASE lost") {
            return Error::Busy("this node's lease on the session was lost: another node holds it now, or it expired".into());
        }
        Error::Store(format!("the session store {} is unavailable: {text}", self.name))
    }

    /// Whether the store answers, and its round trip.
    pub(super) fn ping(&self) -> std::result::Result<Duration, String> {
        let started = Instant::now();
        let mut con = self.connect().map_err(|e| e.to_string())?;
        redis::cmd("PING").query::<Value>(&mut con).map_err(|e| e.to_string())?;
        Ok(started.elapsed())
    }

    /// What `doctor` says: reachable and how fast, the server's version, and whether it
    /// keeps what it acknowledged (AOF, and how often it syncs it).
    pub(super) fn check(&self) -> Vec<Finding> {
        let rtt = match self.ping() {
            Ok(rtt) => rtt,
            Err(why) => {
                return vec![Finding::Error(format!(
                    "session store {}: unreachable: {why}",
                    self.name
                ))];
            }
        };
        let mut out = vec![Finding::Ok(format!(
            "session store {} answers in {:.2} ms (node {})",
            self.name,
            rtt.as_secs_f64() * 1e3,
            self.node
        ))];
        let info = |section: &str| -> HashMap<String, String> {
            let text = self
                .run(&mut |con| redis::cmd("INFO").arg(section).query(con))
                .ok()
                .and_then(text)
                .unwrap_or_default();
            text.lines()
                .filter_map(|l| l.split_once(':'))
                .map(|(k, v)| (k.to_string(), v.trim().to_string()))
                .collect()
        };
        let server = info("server");
        let version = server.get("valkey_version").or(server.get("redis_version")).cloned();
        match version.as_deref().and_then(|v| v.split('.').next()?.parse::<u32>().ok()) {
            Some(major) if major >= 7 => out.push(Finding::Ok(format!(
                "session store version {}",
                version.unwrap_or_default()
            ))),
            Some(_) => out.push(Finding::Warn(format!(
                "session store version {} is older than 7, which is what is tested",
                version.unwrap_or_default()
            ))),
            None => out.push(Finding::Warn("session store: cannot read its version".into())),
        }
        let persistence = info("persistence");
        if persistence.get("aof_enabled").map(String::as_str) != Some("1") {
            out.push(Finding::Warn(
                "session store: AOF is off, so a Redis restart loses what was acknowledged \
                 since its last snapshot (appendonly yes, appendfsync always)"
                    .into(),
            ));
            return out;
        }
        let fsync = self
            .run(&mut |con| redis::cmd("CONFIG").arg("GET").arg("appendfsync").query(con))
            .map(texts)
            .unwrap_or_default();
        match fsync.get(1).map(String::as_str) {
            Some("always") => out.push(Finding::Ok("session store: AOF with appendfsync always: nothing acknowledged is lost".into())),
            Some("everysec") => out.push(Finding::Warn("session store: AOF with appendfsync everysec: a crash of the Redis host may lose the last second".into())),
            Some(other) => out.push(Finding::Warn(format!("session store: AOF with appendfsync {other}: a crash may lose what the OS had not written"))),
            None => out.push(Finding::Warn("session store: AOF is on; appendfsync cannot be read (CONFIG is disabled?)".into())),
        }
        out
    }

    /// Remembers a lease this node now holds, for the heartbeat.
    pub(super) fn hold(&self, id: &SessionId, value: &str, lost: &Arc<Lost>) {
        lock(&self.held).insert(id.to_string(), (value.to_string(), Arc::downgrade(lost)));
        self.heartbeat.call_once(|| heartbeat(self.me.clone()));
    }

    /// Lets go of a lease (its journal closed).
    pub(super) fn let_go(&self, id: &SessionId, value: &str) {
        lock(&self.held).remove(id.as_str());
        let key = self.skey(id, "lease");
        let released = self.run(&mut |con| self.scripts.release.key(&key).arg(value).invoke(con));
        if let Err(err) = released {
            log::warn!("session {id}: releasing its lease failed: {err}");
        }
    }
}

/// A reply as an integer (0 for anything else).
pub(super) fn int(value: &Value) -> i64 {
    match value {
        Value::Int(n) => *n,
        Value::BulkString(b) => {
            std::str::from_utf8(b).ok().and_then(|s| s.parse().ok()).unwrap_or(0)
        }
        _ => 0,
    }
}

/// A reply as text, if it is a string.
pub(super) fn text(value: Value) -> Option<String> {
    match value {
        Value::BulkString(b) => String::from_utf8(b).ok(),
        Value::SimpleString(s) => Some(s),
        _ => None,
    }
}

/// An array reply as texts (what is not text is left out).
pub(super) fn texts(value: Value) -> Vec<String> {
    match value {
        Value::Array(items) => items.into_iter().filter_map(text).collect(),
        _ => Vec::new(),
    }
}

/// Renews this node's leases every third of their TTL; a lease found taken or expired
/// marks its journal lost, so its next append fails instead of writing.
fn heartbeat(db: Weak<Db>) {
    let spawned = std::thread::Builder::new().name("store-heartbeat".into()).spawn(move || {
        loop {
            let Some(db) = db.upgrade() else { return };
            let every = db.ttl / 3;
            let held: Vec<(String, String, Weak<Lost>)> = lock(&db.held)
                .iter()
                .map(|(id, (value, lost))| (id.clone(), value.clone(), lost.clone()))
                .collect();
            for (id, value, lost) in held {
                let Some(lost) = lost.upgrade() else {
                    lock(&db.held).remove(&id);
                    continue;
                };
                let key = format!("{}s:{id}:lease", db.prefix);
                let ttl = db.ttl.as_millis() as u64;
                let renewed = db.run(&mut |con| {
                    db.scripts.renew.key(&key).arg(&value).arg(ttl).invoke(con)
                });
                match renewed.map(|v| int(&v)) {
                    Ok(1) => {}
                    Ok(_) => {
                        log::warn!("session {id}: this node's lease was lost");
                        lock(&lost.0).get_or_insert_with(|| {
                            "this node's lease on the session expired or was taken by another node".into()
                        });
                        lock(&db.held).remove(&id);
                    }
                    Err(err) => log::warn!("session {id}: renewing its lease failed: {err}"),
                }
            }
            drop(db);
            std::thread::sleep(every);
        }
    });
    if let Err(err) = spawned {
        log::error!("cannot start the lease heartbeat: {err}");
    }
}
