//! The gate: everything that decides whether a tool call runs, and how. One call's way
//! through it (`pass.rs`): what a shell command is (`judge.rs`: tier, paths, what it acts
//! on), the team's rules and hooks' verdicts, the decision for the session's mode
//! (`decide.rs`, with the "always" answers of `always.rs` and the files written without
//! review of `unreviewed.rs`), a terraform apply's plan made before anyone is asked
//! (`plan.rs`) and judged by the team's policies (`policy.rs`), the question and its
//! wording (`question.rs`), then the sandbox the command runs in. Network targets met
//! while a call runs, `exit_plan_mode`'s choice and `ask_user`'s form pass `network.rs`.
//!
//! The gate fails closed: what it cannot judge asks, what the sandbox cannot hold asks, a
//! broken policy refuses. It reaches the session through `Host` (the agent's turn
//! implements it) and a person through an `Asker` (the ACP layer implements it); it never
//! blocks a connection thread and knows no wire types.

mod always;
mod decide;
mod judge;
mod manifests;
mod network;
mod pass;
mod plan;
mod policy;
mod question;
mod unreviewed;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::cancel::CancelToken;
use crate::config::WebFetch;
use crate::rules::{RuleSet, Subject};
use crate::tools::{Invocation, Tool, ToolContext, ToolKind};

pub use always::Always;
pub use decide::{Call, decide};
pub use judge::restored_command;
pub use network::{DENY_ALL, Network, decide_network, network_refused};
pub use pass::{Passed, pass, ran_unasked, written};
pub use plan::remove_scratch;
pub use unreviewed::{Found, Unreviewed};

/// A rule's or a hook's verdict on a call, with the rule or hook as shown to the model.
pub type Rule = Option<(crate::rules::Verdict, String)>;

/// What the model sees for a call that was cut short by a cancel.
pub const CANCELLED_RESULT: &str = "Tool call cancelled by the user.";

/// What the gate needs of the session it serves (the agent's turn implements it).
pub trait Host {
    /// Runs `f` on the session's standing permissions, held for its duration.
    fn standing<R>(&self, f: impl FnOnce(Standing<'_>) -> R) -> R;
    /// The team's permission rules.
    fn rules(&self) -> &RuleSet;
    /// Puts questions to a person.
    fn asker(&self) -> &dyn Asker;
    /// The turn's cancellation.
    fn cancel(&self) -> &CancelToken;
    /// The session's `webFetch` policy.
    fn web_fetch(&self) -> WebFetch;
    /// `text` with the session's secrets as placeholders (what a question shows).
    fn redact(&self, text: &str) -> String;
    /// The call `id`'s tier changed once its plan was made (the client is told).
    fn retiered(&self, id: &str, tier: crate::infra::Tier);
}

/// The session's standing permissions, as the gate reads and records them.
pub struct Standing<'s> {
    /// The session's mode.
    pub mode: &'s mut Mode,
    /// "Always" answers given so far.
    pub always: &'s mut Always,
    /// Files written without a person's answer.
    pub unreviewed: &'s mut Unreviewed,
}

/// How a call is presented before it runs: the tool's own description, and for a call
/// that runs a shell command, what the gate judges that command to be (its tier, the
/// paths it names, what it writes and runs).
pub fn describe(tool: &dyn Tool, args: &Value, ctx: &ToolContext) -> Invocation {
    let mut invocation = tool.describe(args, ctx);
    if let Some(command) = tool.command(args) {
        judge::judge(&mut invocation, command.text.trim(), ctx);
    }
    invocation
}

/// The call `invocation` of `tool` as the rules and the hooks' matchers see it: each
/// command, the raw text when it was not parsed whole, the paths relative to `cwd`.
pub fn with_subject<R>(
    tool: &str,
    invocation: &Invocation,
    cwd: &Path,
    judge: impl FnOnce(&Subject) -> R,
) -> R {
    let paths: Vec<String> = invocation
        .targets
        .iter()
        .map(|t| crate::tools::paths::display_relative(&t.path, cwd))
        .collect();
    judge(&Subject {
        tool,
        commands: &invocation.gate.lines,
        opaque: invocation.gate.opaque.as_deref(),
        patterns: &invocation.gate.patterns,
        paths: &paths,
        host: None,
    })
}

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
