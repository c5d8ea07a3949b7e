//! "Always" answers given during a session: per tool, per `web_fetch` host, and for `bash`
//! per command prefix (`terraform fmt`, `git commit`), never for bash as a whole.

use std::collections::HashSet;

use super::Answer;

/// "Always" answers given during a session.
#[derive(Debug, Default, Clone)]
pub struct Always {
    allowed: HashSet<String>,
    rejected: HashSet<String>,
    hosts_allowed: HashSet<String>,
    hosts_rejected: HashSet<String>,
    prefixes_allowed: HashSet<String>,
    prefixes_rejected: HashSet<String>,
}

impl Always {
    /// Whether `tool` was always allowed.
    pub fn allows(&self, tool: &str) -> bool {
        self.allowed.contains(tool)
    }

    /// Whether `tool` was always rejected.
    pub fn rejects(&self, tool: &str) -> bool {
        self.rejected.contains(tool)
    }

    /// Whether every one of `prefixes` was always allowed (an empty list never is).
    pub fn allows_prefixes(&self, prefixes: &[String]) -> bool {
        !prefixes.is_empty() && prefixes.iter().all(|p| self.prefixes_allowed.contains(p))
    }

    /// Whether any of `prefixes` was always rejected.
    pub fn rejects_prefix(&self, prefixes: &[String]) -> bool {
        prefixes.iter().any(|p| self.prefixes_rejected.contains(p))
    }

    /// Whether fetching from `host` was always allowed.
    pub fn allows_host(&self, host: &str) -> bool {
        self.hosts_allowed.contains(host)
    }

    /// Whether fetching from `host` was always rejected.
    pub fn rejects_host(&self, host: &str) -> bool {
        self.hosts_rejected.contains(host)
    }

    /// Remembers an "always" answer about fetching from `host`.
    pub fn record_host(&mut self, host: &str, answer: Answer) {
        let host = host.to_ascii_lowercase();
        remember(&mut self.hosts_allowed, &mut self.hosts_rejected, host, answer);
    }

    /// Remembers an "always" answer for `tool`.
    pub fn record(&mut self, tool: &str, answer: Answer) {
        remember(&mut self.allowed, &mut self.rejected, tool.to_string(), answer);
    }

    /// Remembers an "always" answer about commands starting with each of `prefixes`.
    pub fn record_prefixes(&mut self, prefixes: &[String], answer: Answer) {
        for prefix in prefixes {
            let (allowed, rejected) = (&mut self.prefixes_allowed, &mut self.prefixes_rejected);
            remember(allowed, rejected, prefix.clone(), answer);
        }
    }
}

fn remember(allowed: &mut HashSet<String>, rejected: &mut HashSet<String>, key: String, a: Answer) {
    match a {
        Answer::AllowAlways => {
            rejected.remove(&key);
            allowed.insert(key);
        }
        Answer::RejectAlways => {
            allowed.remove(&key);
            rejected.insert(key);
        }
        Answer::AllowOnce | Answer::RejectOnce | Answer::Cancelled => {}
    }
}
