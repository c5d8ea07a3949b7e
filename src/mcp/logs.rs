//! A server's log messages (`notifications/message`, and the notifications we ignore) in
//! our log, at a bounded rate: a token bucket per connection (a burst of `BURST` messages, then `PER_SECOND`), each
//! message one printable line of at most `MAX_CHARS` characters. What the bucket drops is
//! counted and told in one line: before the next message it lets through, when the server
//! says anything else (an answer, a request, another notification), and when the
//! connection ends. A flood costs the log a few lines, never megabytes.

use std::sync::Mutex;
use std::time::Instant;

use serde_json::Value;

use crate::sync::lock;

/// Messages logged in a row before the rate applies.
const BURST: f64 = 50.0;
/// Messages logged a second, past the burst.
const PER_SECOND: f64 = 10.0;
/// Characters of one message logged at most (its head and its tail).
const MAX_CHARS: usize = 2000;

/// One connection's log messages.
pub(super) struct ServerLog {
    /// The server's name, for the log.
    name: String,
    bucket: Mutex<Bucket>,
}

struct Bucket {
    tokens: f64,
    last: Instant,
    /// Messages dropped since the last report.
    dropped: u64,
}

impl ServerLog {
    pub(super) fn new(name: &str) -> ServerLog {
        let bucket = Bucket { tokens: BURST, last: Instant::now(), dropped: 0 };
        ServerLog { name: name.to_string(), bucket: Mutex::new(bucket) }
    }

    /// Whether one more line may be logged now (what was dropped before it is told
    /// first); else it is counted as dropped.
    fn admit(&self) -> bool {
        {
            let mut bucket = lock(&self.bucket);
            let now = Instant::now();
            let earned = now.duration_since(bucket.last).as_secs_f64() * PER_SECOND;
            bucket.tokens = (bucket.tokens + earned).min(BURST);
            bucket.last = now;
            if bucket.tokens < 1.0 {
                bucket.dropped += 1;
                return false;
            }
            bucket.tokens -= 1.0;
        }
        self.flush();
        true
    }

    /// Notes (at debug level) a notification we do not act on.
    pub(super) fn ignored(&self, method: &str) {
        if log::log_enabled!(log::Level::Debug) && self.admit() {
            let method = crate::text::Title::bounded(None, method, 100);
            log::debug!("MCP server {}: notification {method} ignored", self.name);
        }
    }

    /// Logs one `notifications/message` (its `params`), or counts it as dropped.
    pub(super) fn message(&self, params: &Value) {
        if !self.admit() {
            return;
        }
        let level = params.get("level").and_then(Value::as_str).unwrap_or("info");
        let data = match params.get("data") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        let data = crate::text::Title::bounded(None, &data, MAX_CHARS);
        let name = &self.name;
        match level {
            "debug" => log::debug!("MCP server {name}: {data}"),
            "info" | "notice" => log::info!("MCP server {name}: {data}"),
            "warning" => log::warn!("MCP server {name}: {data}"),
            _ => log::error!(
                "MCP server {name} ({}): {data}",
                crate::text::Title::bounded(None, level, 20)
            ),
        }
    }

    /// Tells how many messages were dropped since the last report, if any.
    pub(super) fn flush(&self) {
        let dropped = std::mem::take(&mut lock(&self.bucket).dropped);
        if dropped > 0 {
            log::warn!(
                "MCP server {}: {dropped} log messages dropped (it sent more than {PER_SECOND} \
                 a second)",
                self.name
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_counted_not_logged() {
        let log = ServerLog::new("flood");
        let params = serde_json::json!({"level": "debug", "data": "x"});
        for _ in 0..10_000 {
            log.message(&params);
        }
        let dropped = lock(&log.bucket).dropped;
        assert!((9_900..10_000 - 49).contains(&(dropped as usize)), "{dropped}");
        log.flush();
        assert_eq!(lock(&log.bucket).dropped, 0);
    }
}
