//! Everything a turn works with, grouped by who owns it: where the session works
//! (`Place`), the model and what a request carries (`Model`), what its tool calls may use
//! (`Calls`), what the team set (`Team`: rules and hooks), the connected client
//! (`Client`: questions, events, steering), the session's record (`Record`), and the
//! turn's own settings, limits and cancel. Every part is a set of borrows: a sub-agent's
//! turn is its parent's with a few parts replaced.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::event::EventSink;
use super::{Recorder, Settings, Steering, TurnUsage};
use crate::cancel::CancelToken;
use crate::config::Limits;
use crate::gate::Asker;
use crate::provider::{Provider, ToolDef};
use crate::tools::{ClientTools, ExternalTools, Registry, SkillBook};

/// Everything a turn works with.
#[derive(Clone, Copy)]
pub struct Turn<'a> {
    /// Where the session works.
    pub place: Place<'a>,
    /// The model, and what each request to it carries.
    pub model: Model<'a>,
    /// What the turn's tool calls may use.
    pub calls: Calls<'a>,
    /// What the team set: permission rules and hooks.
    pub team: Team<'a>,
    /// The connected client.
    pub client: Client<'a>,
    /// The session's record.
    pub record: Record<'a>,
    /// Mode, model, "always" answers and unreviewed files (the client may change them at
    /// any time: read at each step).
    pub settings: &'a Mutex<Settings>,
    pub limits: Limits,
    /// Cancellation.
    pub cancel: &'a CancelToken,
    /// Whether this is a sub-agent's turn (which may not start another).
    pub nested: bool,
}

/// Where the session works.
#[derive(Clone, Copy)]
pub struct Place<'a> {
    /// Session cwd (canonical).
    pub cwd: &'a Path,
    /// The session's additional directories (canonical): judged as inside the cwd.
    pub extra: &'a [PathBuf],
    /// The configuration directory (sensitive for tools).
    pub config_dir: &'a Path,
}

/// The model, and what each request to it carries.
#[derive(Clone, Copy)]
pub struct Model<'a> {
    /// The LLM.
    pub provider: &'a dyn Provider,
    pub system_prompt: &'a str,
    /// Tool definitions sent to the model.
    pub tool_defs: &'a [ToolDef],
    /// What tokens cost.
    pub pricing: &'a crate::config::pricing::Pricing,
    /// Names the conversation to providers that route a prompt cache by it (the session
    /// id).
    pub cache_key: Option<&'a str>,
    /// Whether the model accepts images (tool results may then carry them).
    pub images: bool,
}

/// What the turn's tool calls may use.
#[derive(Clone, Copy)]
pub struct Calls<'a> {
    /// The built-in tools.
    pub tools: &'a Registry,
    /// Tools that come and go (the session's MCP servers'), looked at for every request.
    pub external: &'a dyn ExternalTools,
    /// The client's file system and terminals, when it offers them.
    pub files: &'a dyn ClientTools,
    /// Processes the session's tool calls left running.
    pub jobs: &'a crate::child::Jobs,
    /// The skills this turn may load, and what the loaded ones allow.
    pub skills: &'a dyn SkillBook,
}

/// What the team set.
#[derive(Clone, Copy)]
pub struct Team<'a> {
    /// The team's permission rules.
    pub rules: &'a crate::rules::RuleSet,
    /// The team's hooks in force (`PreToolUse`, `PostToolUse` and `Stop` run here).
    pub hooks: &'a crate::hooks::Hooks,
}

/// The connected client.
#[derive(Clone, Copy)]
pub struct Client<'a> {
    /// Asks the user for permission.
    pub asker: &'a dyn Asker,
    /// Receives events.
    pub sink: &'a dyn EventSink,
    /// What the user sends while the turn runs (`_session/steering`).
    pub steering: &'a dyn Steering,
}

/// The session's record.
#[derive(Clone, Copy)]
pub struct Record<'a> {
    /// Keeps the history durable.
    pub recorder: &'a dyn Recorder,
    /// The session's secrets (`secret::Vault`): what reaches the model is redacted.
    pub vault: &'a crate::secret::Vault,
    /// Tokens spent by sub-agents during this turn, added to the turn's usage at its end.
    pub sub_usage: &'a Mutex<TurnUsage>,
}
