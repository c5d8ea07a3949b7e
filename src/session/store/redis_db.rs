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

use redis::{Client, Connection, Value};

use super::redis_reply::{int, text, texts};
use super::redis_scripts::Scripts;

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
    /// This machine and pid namespace (host name, boot id, pid namespace), in leases: a
    /// lease of a process of the same one that no longer exists is taken over. Empty when
    /// any part cannot be read (then nothing is taken over).
    pub(super) machine: String,
    pub(super) ttl: Duration,
    idle: Mutex<Vec<Connection>>,
    /// Leases held by this node: session id → (lease value, the journal's lost flag).
    /// Leases held: session id → (lease value, the journal's loss flag, last renewal).
    held: Mutex<HashMap<String, Held>>,
    pub(super) scripts: Scripts,
}

/// A lease held: its value, the journal's loss flag, its last renewal.
type Held = (String, Weak<Lost>, Instant);

/// Why a journal can no longer write (set by the heartbeat or a refused append).
#[derive(Default)]
pub(super) struct Lost(pub(super) Mutex<Option<String>>, Mutex<Option<OnLost>>);

/// Told once, when a journal's lease is found lost (stops the session's turn).
pub(super) type OnLost = Box<dyn Fn(&str) + Send + Sync>;

impl Lost {
    /// Records why the lease is lost (the first reason stays) and tells the session.
    pub(super) fn mark(&self, why: &str) {
        let first = {
            let mut reason = lock(&self.0);
            let first = reason.is_none();
            reason.get_or_insert_with(|| why.to_string());
            first
        };
        if first && let Some(tell) = lock(&self.1).take() {
            tell(why);
        }
    }

    /// Sets what is told on loss.
    pub(super) fn on_lost(&self, tell: OnLost) {
        *lock(&self.1) = Some(tell);
    }
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
            machine: machine(),
            ttl,
            idle: Mutex::new(Vec::new()),
            held: Mutex::new(HashMap::new()),
            scripts: Scripts::new(),
        });
        Ok(db)
    }

    /// What a lease of this process holds before its token: `<node>|<machine>|<pid>|`
    /// and a nonce of this attempt (a retried attempt recognises its own lease).
    pub(super) fn owner(&self) -> String {
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        format!("{}|{}|{}|{}", self.node, self.machine, std::process::id(), &nonce[..12])
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
        self.run_for(RETRY_FOR, op)
    }

    /// `run`, retrying for at most `retry` (the heartbeat does not retry: its next beat is
    /// the retry).
    fn run_for(
        &self,
        retry: Duration,
        op: &mut dyn FnMut(&mut Connection) -> redis::RedisResult<Value>,
    ) -> Result<Value> {
        let deadline = Instant::now() + retry;
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
        // The scripts' own error codes (redis shows an unknown code as `"LEASE": …`).
        if err.code() == Some("LEASE") || text.contains("LEASE") {
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
        // Eviction would delete journals and leases: only `noeviction` is safe.
        let memory = info("memory");
        match memory.get("maxmemory_policy").map(String::as_str) {
            Some("noeviction") | None => {}
            Some(policy) => out.push(Finding::Warn(format!(
                "session store: maxmemory-policy {policy} may evict sessions and leases; \
                 set it to noeviction"
            ))),
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
        let entry = (value.to_string(), Arc::downgrade(lost), Instant::now());
        lock(&self.held).insert(id.to_string(), entry);
        self.heartbeat.call_once(|| heartbeat(self.me.clone()));
    }

    /// Stops renewing `id`'s lease `value` (and only that one: another journal of this
    /// process may hold the session by now).
    pub(super) fn forget(&self, id: &str, value: &str) {
        let mut held = lock(&self.held);
        if held.get(id).is_some_and(|(held, _, _)| held == value) {
            held.remove(id);
        }
    }

    /// Lets go of a lease (its journal closed).
    pub(super) fn let_go(&self, id: &SessionId, value: &str) {
        self.forget(id.as_str(), value);
        let key = self.skey(id, "lease");
        let released = self.run(&mut |con| self.scripts.release.key(&key).arg(value).invoke(con));
        if let Err(err) = released {
            log::warn!("session {id}: releasing its lease failed: {err}");
        }
    }
}

/// Host name, boot id and pid namespace: processes with the same one see each other's pids.
fn machine() -> String {
    let read = |path: &str| std::fs::read_to_string(path).map(|s| s.trim().to_string());
    let parts = (
        read("/proc/sys/kernel/hostname"),
        read("/proc/sys/kernel/random/boot_id"),
        std::fs::read_link("/proc/self/ns/pid").map(|p| p.display().to_string()),
    );
    match parts {
        (Ok(host), Ok(boot), Ok(ns)) if !host.is_empty() && !boot.is_empty() => {
            let id: String = format!("{host}/{}/{ns}", &boot[..boot.len().min(8)])
                .chars()
                .map(|c| if c == '|' { '_' } else { c })
                .collect();
            id
        }
        _ => String::new(),
    }
}

/// Renews this node's leases every third of their TTL; a lease found taken or expired
/// marks its journal lost, so its next append fails instead of writing.
fn heartbeat(db: Weak<Db>) {
    let spawned = std::thread::Builder::new().name("store-heartbeat".into()).spawn(move || {
        loop {
            let Some(db) = db.upgrade() else { return };
            let every = db.ttl / 3;
            let held: Vec<(String, String, Weak<Lost>, Instant)> = lock(&db.held)
                .iter()
                .map(|(id, (value, lost, renewed))| {
                    (id.clone(), value.clone(), lost.clone(), *renewed)
                })
                .collect();
            for (id, value, lost, last) in held {
                let Some(lost) = lost.upgrade() else {
                    db.forget(&id, &value);
                    continue;
                };
                let key = format!("{}s:{id}:lease", db.prefix);
                let ttl = db.ttl.as_millis() as u64;
                let renewed = db.run_for(Duration::ZERO, &mut |con| {
                    db.scripts.renew.key(&key).arg(&value).arg(ttl).invoke(con)
                });
                let why = match renewed.map(|v| int(&v)) {
                    Ok(1) => {
                        if let Some(entry) = lock(&db.held).get_mut(&id)
                            && entry.0 == value
                        {
                            entry.2 = Instant::now();
                        }
                        continue;
                    }
                    Ok(_) => {
                        "this node's lease on the session expired or was taken by another node"
                            .to_string()
                    }
                    // Unrenewed past most of its TTL, it may be another node's by now: stop
                    // before it is (a partitioned node never hears that it was taken).
                    Err(err) if last.elapsed() >= db.ttl.saturating_sub(every) => format!(
                        "this node could not renew its lease on the session for {:.1} s ({err})",
                        last.elapsed().as_secs_f64()
                    ),
                    Err(err) => {
                        log::warn!("session {id}: renewing its lease failed: {err}");
                        continue;
                    }
                };
                log::warn!("session {id}: {why}");
                lost.mark(&why);
                db.forget(&id, &value);
            }
            drop(db);
            std::thread::sleep(every);
        }
    });
    if let Err(err) = spawned {
        log::error!("cannot start the lease heartbeat: {err}");
    }
}
