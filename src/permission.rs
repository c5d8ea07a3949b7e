//! Permission policy: the session mode, the "always" answers remembered per tool, and the
//! decision for one call. The question itself travels through an `Asker`, which the ACP
//! layer implements; this module never blocks a connection thread and knows no wire types.

use std::collections::HashSet;
use std::path::PathBuf;

use serde_json::Value;

use crate::cancel::CancelToken;
use crate::config::WebFetch;
use crate::tools::{Access, ToolKind};

/// Session modes, as offered to clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Ask before writes and commands.
    Default,
    /// File edits run without asking; commands still ask.
    AcceptEdits,
    /// Read-only: writes and commands are refused.
    Plan,
    /// Never ask.
    BypassPermissions,
}

impl Mode {
    /// Every mode, in the order offered.
    pub const ALL: [Mode; 4] =
        [Mode::Default, Mode::AcceptEdits, Mode::Plan, Mode::BypassPermissions];

    /// The wire id.
    pub fn id(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::AcceptEdits => "accept_edits",
            Mode::Plan => "plan",
            Mode::BypassPermissions => "bypass_permissions",
        }
    }

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Default => "Default",
            Mode::AcceptEdits => "Accept edits",
            Mode::Plan => "Plan (read-only)",
            Mode::BypassPermissions => "Bypass permissions",
        }
    }

    /// One-line description.
    pub fn description(self) -> &'static str {
        match self {
            Mode::Default => "Ask before editing files or running commands",
            Mode::AcceptEdits => "Edit files without asking; ask before running commands",
            Mode::Plan => "Read and plan only; no edits, no commands",
            Mode::BypassPermissions => "Run every tool without asking",
        }
    }

    /// Parses a wire id.
    pub fn from_id(id: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.id() == id)
    }
}

/// "Always" answers given during a session, per tool name.
#[derive(Debug, Default, Clone)]
pub struct Memory {
    always_allow: HashSet<String>,
    always_reject: HashSet<String>,
    hosts_allowed: HashSet<String>,
    hosts_rejected: HashSet<String>,
}

/// What to do with one tool call before running it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow,
    /// Do not run it; tell the model this.
    Deny(String),
    /// Ask the user; `offer_always` says whether "always" options may be offered.
    Ask {
        /// Whether allow_always/reject_always are offered.
        offer_always: bool,
    },
}

/// The message the model gets when the user says no.
pub const DENIED: &str = "Permission denied.";

/// Where a call reaches, judged on real paths before it runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reach {
    /// A touched path lies outside the session cwd.
    pub outside_cwd: bool,
    /// A touched path is sensitive (credentials, `.git` internals, the config dir).
    pub sensitive: bool,
}

/// Decides for one call.
pub fn decide(mode: Mode, memory: &Memory, tool: &str, access: Access, reach: Reach) -> Decision {
    if mode == Mode::Plan && !access.read_only() {
        return Decision::Deny(format!(
            "Plan mode is read-only: {tool} was not run. Describe the change instead, or ask \
             the user to switch to another mode."
        ));
    }
    if memory.always_reject.contains(tool) {
        return Decision::Deny(DENIED.to_string());
    }
    if mode == Mode::BypassPermissions {
        return Decision::Allow;
    }
    // Leaving the project, or touching secrets, is always a question of its own: never
    // "always", and asked even of read-only tools.
    if reach.outside_cwd || reach.sensitive {
        return Decision::Ask { offer_always: false };
    }
    // An MCP tool's annotations are the server's claim: in plan mode it asks every time.
    if mode == Mode::Plan && matches!(access, Access::Mcp { .. }) {
        return Decision::Ask { offer_always: false };
    }
    if memory.always_allow.contains(tool) {
        return Decision::Allow;
    }
    match (access, mode) {
        (Access::Mcp { .. }, _) => Decision::Ask { offer_always: true },
        (Access::Read, _) => Decision::Allow,
        (Access::Write, Mode::AcceptEdits) => Decision::Allow,
        (Access::Write | Access::Execute, _) => Decision::Ask { offer_always: true },
    }
}

/// Why every fetch is refused under `webFetch = deny`.
pub const DENY_ALL: &str = "web_fetch is turned off here (webFetch = deny); do without the page.";

/// Whether the `webFetch` policy refuses every fetch, before any name is even resolved.
pub fn network_refused(policy: WebFetch) -> Option<&'static str> {
    (policy == WebFetch::Deny).then_some(DENY_ALL)
}

/// Decides whether `web_fetch` may reach `host` now. Internal targets (loopback, private,
/// link-local, metadata …) ask every time, never "always", and are refused in plan mode;
/// public ones follow the `webFetch` policy, where "always" remembers the host.
pub fn decide_network(
    mode: Mode,
    memory: &Memory,
    policy: WebFetch,
    host: &str,
    internal: Option<&str>,
) -> Decision {
    let host = host.to_ascii_lowercase();
    if policy == WebFetch::Deny {
        return Decision::Deny(DENY_ALL.to_string());
    }
    if let Some(why) = internal {
        return match mode {
            Mode::Plan => Decision::Deny(format!(
                "Plan mode does not reach internal addresses: {host} is {why}. Ask the user \
                 to switch modes if this fetch is meant."
            )),
            Mode::BypassPermissions => Decision::Allow,
            Mode::Default | Mode::AcceptEdits => Decision::Ask { offer_always: false },
        };
    }
    match policy {
        WebFetch::Deny => Decision::Deny(DENY_ALL.to_string()),
        WebFetch::Allow => Decision::Allow,
        WebFetch::Ask if memory.hosts_rejected.contains(&host) => {
            Decision::Deny(DENIED.to_string())
        }
        WebFetch::Ask if memory.hosts_allowed.contains(&host) => Decision::Allow,
        WebFetch::Ask if mode == Mode::BypassPermissions => Decision::Allow,
        WebFetch::Ask => Decision::Ask { offer_always: true },
    }
}

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Run this call.
    AllowOnce,
    /// Run this and every later call of the tool in this session.
    AllowAlways,
    /// Do not run this call.
    RejectOnce,
    /// Do not run this or any later call of the tool in this session.
    RejectAlways,
    /// The question was cancelled (the turn is being cancelled, or the client declined).
    Cancelled,
}

impl Answer {
    /// Whether the call may run.
    pub fn allows(self) -> bool {
        matches!(self, Answer::AllowOnce | Answer::AllowAlways)
    }
}

impl Memory {
    /// Remembers an "always" answer about fetching from `host`.
    pub fn record_host(&mut self, host: &str, answer: Answer) {
        let host = host.to_ascii_lowercase();
        match answer {
            Answer::AllowAlways => {
                self.hosts_rejected.remove(&host);
                self.hosts_allowed.insert(host);
            }
            Answer::RejectAlways => {
                self.hosts_allowed.remove(&host);
                self.hosts_rejected.insert(host);
            }
            Answer::AllowOnce | Answer::RejectOnce | Answer::Cancelled => {}
        }
    }

    /// Remembers an "always" answer for `tool`.
    pub fn record(&mut self, tool: &str, answer: Answer) {
        match answer {
            Answer::AllowAlways => {
                self.always_reject.remove(tool);
                self.always_allow.insert(tool.to_string());
            }
            Answer::RejectAlways => {
                self.always_allow.remove(tool);
                self.always_reject.insert(tool.to_string());
            }
            Answer::AllowOnce | Answer::RejectOnce | Answer::Cancelled => {}
        }
    }
}

/// What the user is asked about.
#[derive(Debug, Clone)]
pub struct Question {
    /// The tool call, as announced to the client.
    pub tool_call_id: String,
    /// The tool's name.
    pub tool: String,
    /// Title of the call.
    pub title: String,
    /// Kind of the tool.
    pub kind: ToolKind,
    /// The call's arguments.
    pub input: Value,
    /// Paths it touches.
    pub locations: Vec<(PathBuf, Option<u32>)>,
    /// Whether "always" options are offered.
    pub offer_always: bool,
    /// Options of the question's own (id, name, the answer choosing it means), in place of
    /// the usual allow/reject ones (`exit_plan_mode`).
    pub choices: Vec<(&'static str, String, Answer)>,
}

/// Puts a question to the user; blocks the prompt thread (never the connection thread)
/// until an answer or a cancel.
pub trait Asker: Send + Sync {
    /// Asks and waits.
    fn ask(&self, question: &Question, cancel: &CancelToken) -> Answer;
}

#[cfg(test)]
mod tests {
    use super::*;

    const IN: Reach = Reach { outside_cwd: false, sensitive: false };
    const OUT: Reach = Reach { outside_cwd: true, sensitive: false };
    const SECRET: Reach = Reach { outside_cwd: false, sensitive: true };

    #[test]
    fn sensitive_paths_always_ask_without_always() {
        let mut m = Memory::default();
        m.record("read_file", Answer::AllowAlways);
        m.record("write_file", Answer::AllowAlways);
        let sticky = Decision::Ask { offer_always: false };
        assert_eq!(decide(Mode::Default, &m, "read_file", Access::Read, SECRET), sticky);
        assert_eq!(decide(Mode::AcceptEdits, &m, "write_file", Access::Write, SECRET), sticky);
        assert_eq!(decide(Mode::Plan, &m, "grep", Access::Read, SECRET), sticky);
        assert_eq!(decide(Mode::AcceptEdits, &m, "edit_file", Access::Write, OUT), sticky);
    }

    #[test]
    fn modes_change_decisions() {
        let m = Memory::default();
        let ask = Decision::Ask { offer_always: true };
        assert_eq!(decide(Mode::Default, &m, "read_file", Access::Read, IN), Decision::Allow);
        assert_eq!(decide(Mode::Default, &m, "write_file", Access::Write, IN), ask);
        assert_eq!(decide(Mode::AcceptEdits, &m, "write_file", Access::Write, IN), Decision::Allow);
        assert_eq!(decide(Mode::AcceptEdits, &m, "bash", Access::Execute, IN), ask);
        assert!(matches!(
            decide(Mode::Plan, &m, "write_file", Access::Write, IN),
            Decision::Deny(_)
        ));
        assert_eq!(decide(Mode::Plan, &m, "read_file", Access::Read, IN), Decision::Allow);
        assert_eq!(
            decide(Mode::BypassPermissions, &m, "bash", Access::Execute, OUT),
            Decision::Allow
        );
        assert_eq!(
            decide(Mode::Default, &m, "read_file", Access::Read, OUT),
            Decision::Ask { offer_always: false }
        );
    }

    #[test]
    fn internal_targets_ask_every_time_and_plan_mode_refuses_them() {
        let mut m = Memory::default();
        m.record_host("127.0.0.1", Answer::AllowAlways);
        let sticky = Decision::Ask { offer_always: false };
        assert!(matches!(
            decide_network(Mode::BypassPermissions, &m, WebFetch::Deny, "127.0.0.1", Some("x")),
            Decision::Deny(_)
        ));
        for policy in [WebFetch::Allow, WebFetch::Ask] {
            let d = |mode| decide_network(mode, &m, policy, "127.0.0.1", Some("loopback"));
            assert_eq!(d(Mode::Default), sticky);
            assert_eq!(d(Mode::AcceptEdits), sticky);
            assert!(matches!(d(Mode::Plan), Decision::Deny(_)));
            assert_eq!(d(Mode::BypassPermissions), Decision::Allow);
        }
    }

    #[test]
    fn public_hosts_follow_the_policy() {
        let mut m = Memory::default();
        let d = |m: &Memory, policy, host| decide_network(Mode::Plan, m, policy, host, None);
        assert_eq!(d(&m, WebFetch::Allow, "example.com"), Decision::Allow);
        assert!(matches!(d(&m, WebFetch::Deny, "example.com"), Decision::Deny(_)));
        assert_eq!(d(&m, WebFetch::Ask, "example.com"), Decision::Ask { offer_always: true });
        m.record_host("Example.com", Answer::AllowAlways);
        assert_eq!(d(&m, WebFetch::Ask, "example.com"), Decision::Allow);
        assert_eq!(d(&m, WebFetch::Ask, "other.org"), Decision::Ask { offer_always: true });
        m.record_host("other.org", Answer::RejectAlways);
        assert_eq!(d(&m, WebFetch::Ask, "other.org"), Decision::Deny(DENIED.to_string()));
    }

    #[test]
    fn mcp_tools_always_ask_and_plan_mode_runs_only_read_only_ones() {
        let mut m = Memory::default();
        let writer = Access::Mcp { read_only: false };
        let reader = Access::Mcp { read_only: true };
        let ask = Decision::Ask { offer_always: true };
        for mode in [Mode::Default, Mode::AcceptEdits] {
            assert_eq!(decide(mode, &m, "mcp__s__w", writer, IN), ask);
            assert_eq!(decide(mode, &m, "mcp__s__r", reader, IN), ask, "annotations are claims");
        }
        assert!(matches!(decide(Mode::Plan, &m, "mcp__s__w", writer, IN), Decision::Deny(_)));
        let sticky = Decision::Ask { offer_always: false };
        assert_eq!(decide(Mode::Plan, &m, "mcp__s__r", reader, IN), sticky);
        assert_eq!(decide(Mode::BypassPermissions, &m, "mcp__s__w", writer, IN), Decision::Allow);
        m.record("mcp__s__w", Answer::AllowAlways);
        m.record("mcp__s__r", Answer::AllowAlways);
        assert_eq!(decide(Mode::Default, &m, "mcp__s__w", writer, IN), Decision::Allow);
        assert_eq!(decide(Mode::Plan, &m, "mcp__s__r", reader, IN), sticky, "no always in plan");
        m.record("mcp__s__w", Answer::RejectAlways);
        assert_eq!(
            decide(Mode::Default, &m, "mcp__s__w", writer, IN),
            Decision::Deny(DENIED.into())
        );
    }

    #[test]
    fn always_answers_are_remembered_per_tool() {
        let mut m = Memory::default();
        m.record("write_file", Answer::AllowAlways);
        assert_eq!(decide(Mode::Default, &m, "write_file", Access::Write, IN), Decision::Allow);
        assert_eq!(
            decide(Mode::Default, &m, "edit_file", Access::Write, IN),
            Decision::Ask { offer_always: true }
        );
        assert_eq!(
            decide(Mode::Default, &m, "write_file", Access::Write, OUT),
            Decision::Ask { offer_always: false }
        );
        m.record("write_file", Answer::RejectAlways);
        assert_eq!(
            decide(Mode::Default, &m, "write_file", Access::Write, IN),
            Decision::Deny(DENIED.to_string())
        );
    }
}
