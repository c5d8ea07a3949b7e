//! Permission policy: the session mode, the "always" answers (`always.rs`), the files
//! written without review (`unreviewed.rs`) and the decision for one call (`decide.rs`).
//! The question itself travels through an `Asker`, which the ACP layer implements; this
//! module never blocks a connection thread and knows no wire types.

mod always;
mod decide;
mod unreviewed;

use std::path::PathBuf;

use serde_json::Value;

use crate::cancel::CancelToken;
use crate::config::WebFetch;
use crate::tools::ToolKind;

pub use always::Always;
pub use decide::{Call, decide};
pub use unreviewed::{Found, Unreviewed};

/// Session modes, as offered to clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Ask before writes and commands that change something.
    Default,
    /// File edits (and commands that only write project files) run without asking.
    AcceptEdits,
    /// Read-only: read- and plan-tier commands run, writes and mutations are refused.
    Plan,
    /// Never ask, except about destroy-tier commands (asked every time).
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
            Mode::AcceptEdits => {
                "Edit project files without asking; ask before commands that change more"
            }
            Mode::Plan => "Read and plan only: reads and terraform plan run, no changes",
            Mode::BypassPermissions => {
                "Run every tool without asking, except destructive commands (always asked)"
            }
        }
    }

    /// Parses a wire id.
    pub fn from_id(id: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.id() == id)
    }
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
    always: &Always,
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
        WebFetch::Ask if always.rejects_host(&host) => Decision::Deny(DENIED.to_string()),
        WebFetch::Ask if always.allows_host(&host) => Decision::Allow,
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
    /// What an "always" answer covers, when not the whole tool (`terraform fmt` commands).
    pub remembers: Option<String>,
    /// What the user should read before answering, shown with the question (a plan's
    /// summary, what the command acts on), as Markdown blocks.
    pub content: Vec<String>,
    /// The tier of the command asked about, shown to the client (`_meta.iacCode.tier`).
    pub tier: Option<crate::infra::Tier>,
    /// Options of the question's own (id, name, the answer choosing it means), in place of
    /// the usual allow/reject ones (`exit_plan_mode`).
    pub choices: Vec<(&'static str, String, Answer)>,
}

/// Puts a question to the user; blocks the prompt thread (never the connection thread)
/// until an answer or a cancel.
pub trait Asker: Send + Sync {
    /// Asks and waits.
    fn ask(&self, question: &Question, cancel: &CancelToken) -> Answer;

    /// Puts a question with a form (`ask_user`, about the call `tool_call_id`) and waits
    /// for the answer or a cancel. By default nobody renders forms: `Unsupported`.
    fn elicit(
        &self,
        _tool_call_id: &str,
        _request: &crate::tools::Elicitation,
        _cancel: &CancelToken,
    ) -> crate::tools::Elicited {
        crate::tools::Elicited::Unsupported
    }
}
