//! Where sessions are kept and who this node is: `IAC_CODE_SESSION_STORE` (`--session-store`,
//! settings `sessionStore`) is `file` (the default: `<config dir>/sessions`) or a Redis URL
//! (`redis://[user:password@]host:port/db`, `rediss://…` with TLS), under the key prefix
//! `IAC_CODE_REDIS_PREFIX` (default `iac:`); `IAC_CODE_NODE_ID` (`--node-id`) names this
//! node in logs, leases and `/health` (default: host name and pid); `IAC_CODE_LEASE_TTL`
//! is how long a node's hold on a session lasts without being renewed.

use std::time::Duration;

use super::{Env, number};
use crate::error::{Error, Result};

/// The session store chosen.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreConfig {
    /// Files under the config directory.
    File,
    /// A Redis (or Valkey) server.
    Redis {
        /// `redis://…` or `rediss://…` (may hold a password: never logged as is).
        url: String,
        /// Prefix of every key.
        prefix: String,
        /// The site CA for `rediss://` (`IAC_CODE_CA_FILE`).
        ca_file: Option<std::path::PathBuf>,
    },
}

impl std::fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.describe())
    }
}

impl StoreConfig {
    /// For logs and `/health`: the URL without its password.
    pub fn describe(&self) -> String {
        match self {
            StoreConfig::File => "file".to_string(),
            StoreConfig::Redis { url, prefix, .. } => {
                format!("{} (prefix {prefix})", redacted(url))
            }
        }
    }
}

/// `url` with the password of its user part masked.
pub fn redacted(url: &str) -> String {
    let Some(start) = url.find("://").map(|i| i + 3) else { return url.to_string() };
    // The last `@` ends the user part: a password may hold `/`, `?` or `#` unescaped.
    match url[start..].rfind('@') {
        Some(at) => {
            let user = &url[start..start + at];
            let user = user.split_once(':').map_or(user, |(name, _)| name);
            let shown = if user.is_empty() { "***".to_string() } else { format!("{user}:***") };
            format!("{}{shown}@{}", &url[..start], &url[start + at + 1..])
        }
        None => url.to_string(),
    }
}

/// The store from the (layered) environment.
pub(super) fn store(env: &dyn Env) -> Result<StoreConfig> {
    let prefix = env.get("IAC_CODE_REDIS_PREFIX").unwrap_or_else(|| "iac:".to_string());
    let prefix_ok = !prefix.is_empty()
        && prefix.len() <= 64
        && prefix.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '_' | '-' | '.'));
    if !prefix_ok {
        return Err(Error::Config(format!(
            "IAC_CODE_REDIS_PREFIX '{prefix}': 1-64 letters, digits, ':', '_', '-' or '.'"
        )));
    }
    match env.get("IAC_CODE_SESSION_STORE").as_deref().map(str::trim) {
        None | Some("file") => Ok(StoreConfig::File),
        Some(url) if url.starts_with("redis://") || url.starts_with("rediss://") => {
            let ca_file = env.get("IAC_CODE_CA_FILE").map(std::path::PathBuf::from);
            Ok(StoreConfig::Redis { url: url.to_string(), prefix, ca_file })
        }
        Some(other) => Err(Error::Config(format!(
            "IAC_CODE_SESSION_STORE '{}': expected file, redis://host:port/db or rediss://…",
            redacted(other)
        ))),
    }
}

/// This node's name: `IAC_CODE_NODE_ID`, else the host name and the pid.
pub(super) fn node_id(env: &dyn Env) -> Result<String> {
    let id = match env.get("IAC_CODE_NODE_ID") {
        Some(id) => id.trim().to_string(),
        None => {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .or_else(|| env.get("HOSTNAME"))
                .unwrap_or_else(|| "node".to_string());
            format!("{}-{}", host.trim(), std::process::id())
        }
    };
    let ok = !id.is_empty()
        && id.len() <= 128
        && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    if ok {
        Ok(id)
    } else {
        Err(Error::Config(format!(
            "IAC_CODE_NODE_ID '{id}': 1-128 letters, digits, '-', '_', '.' or ':'"
        )))
    }
}

/// How long a session's lease lasts without renewal (`IAC_CODE_LEASE_TTL`, seconds).
pub(super) fn lease_ttl(env: &dyn Env) -> Result<Duration> {
    Ok(Duration::from_secs(number(env, "IAC_CODE_LEASE_TTL", 10, 2, 600)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        assert_eq!(redacted("redis://:s3cret@h:6379/0"), "redis://***@h:6379/0");
        assert_eq!(redacted("rediss://user:s3cret@h/1"), "rediss://user:***@h/1");
        assert_eq!(redacted("redis://h:6379"), "redis://h:6379");
        assert_eq!(redacted("redis://u:a/b?c#d@h:1/0"), "redis://u:***@h:1/0");
    }
}
