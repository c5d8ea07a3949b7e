//! A session's hooks: those in force for a prompt (`settings.json`'s, then the project's
//! once its exact content is approved; a malformed project section stops the prompt, as
//! a malformed rule does), `UserPromptSubmit` before a turn (a block refuses the prompt
//! before the model is called; what it says joins the prompt), and `SessionStart` when a
//! session is created or loaded: run on a thread of its own so the connection never
//! waits; the first prompt waits for it (bounded by its timeouts), tells the client what
//! ran, and its context is a section of the system prompt.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{Services, Session};
use crate::agent::event::{AgentEvent, EventSink};
use crate::agent::{Outcome, StopReason, TurnUsage};
use crate::cancel::CancelToken;
use crate::config::hooks::project_hooks;
use crate::config::{Config, StoreConfig};
use crate::error::{Error, Result};
use crate::hooks::wire::About;
use crate::hooks::{Event, Hooks, Report};
use crate::sync::lock;

/// The hooks in force for `session` now: the configuration's, then the project's (only
/// once approved). `Err`: the project's settings file cannot be used.
pub(super) fn hooks_for(services: &Services, session: &Session) -> Result<Hooks> {
    let config = &services.config;
    let project = project_hooks(&session.root, &config.config_dir)
        .map_err(|why| Error::Config(format!("{why}; fix or remove it to go on")))?;
    if project.unapproved > 0
        && let Some(path) = &project.path
    {
        let changed = match project.changed.is_empty() {
            true => String::new(),
            false => format!(" ({} changed since)", project.changed.join(", ")),
        };
        log::info!(
            "{}: {} hook(s) not run until approved{changed} (iac-code config approve)",
            path.display(),
            project.unapproved
        );
    }
    let mut specs = (*config.hooks).clone();
    specs.extend(project.hooks);
    let transcript = transcript(config, session);
    let hooks = Hooks::new(specs, session.id.as_str(), &session.root, transcript.as_deref());
    Ok(hooks.with_project(project.check))
}

/// The session's journal, when it is a file (the file store): a hook's `transcript_path`.
fn transcript(config: &Config, session: &Session) -> Option<PathBuf> {
    let path = config.config_dir.join("sessions").join(session.id.as_str());
    let path = path.join(super::store::JOURNAL);
    (matches!(config.store, StoreConfig::File) && path.is_file()).then_some(path)
}

/// Before a turn: tells the client what the `SessionStart` hooks did (once), then runs the
/// `UserPromptSubmit` hooks. The prompt to send, with what they said; `Err`: the outcome
/// when they refused it (or the turn was cancelled while they ran).
pub(super) fn before_turn(
    session: &Session,
    hooks: &Hooks,
    text: String,
    sink: &dyn EventSink,
    cancel: &CancelToken,
) -> std::result::Result<String, Outcome> {
    for line in session.started.untold() {
        sink.emit(AgentEvent::Notice(format!("{line}\n\n")));
    }
    if !hooks.any(Event::UserPromptSubmit) {
        return Ok(text);
    }
    let mode = lock(&session.settings).mode.id();
    let about = About::UserPromptSubmit { prompt: &text };
    let report = hooks.run(&about, Some(mode), |_| true, cancel);
    tell(sink, &report);
    let ended =
        |stop| Outcome { stop, usage: TurnUsage { estimated: true, ..TurnUsage::default() } };
    if report.cancelled() {
        return Err(ended(StopReason::Cancelled));
    }
    if let Some(block) = report.block() {
        log::info!("session {}: prompt refused by {block}", session.id);
        sink.emit(AgentEvent::Notice(format!("The prompt was refused by {block}\n\n")));
        return Err(ended(StopReason::Refusal));
    }
    Ok(match report.context() {
        Some(context) => format!("{text}\n\n{context}"),
        None => text,
    })
}

/// The lines of the hooks that ran, and their warnings, as notices.
fn tell(sink: &dyn EventSink, report: &Report) {
    for line in report.lines() {
        sink.emit(AgentEvent::Notice(format!("[{line}]\n\n")));
    }
    for warning in report.warnings() {
        sink.emit(AgentEvent::Notice(format!("{warning}\n\n")));
    }
}

/// Starts the `SessionStart` hooks of `session`, started as `source` (`startup`,
/// `resume`), on a thread of their own.
pub(super) fn session_start(services: &Services, session: &Session, source: &'static str) {
    let hooks = hooks_for(services, session).unwrap_or_else(|err| {
        log::warn!("session {}: {err}; SessionStart runs only the user's hooks", session.id);
        let specs = (*services.config.hooks).clone();
        Hooks::new(specs, session.id.as_str(), &session.root, None)
    });
    if !hooks.any(Event::SessionStart) {
        return;
    }
    // Waited for at most as long as they may all take, and the kills after them.
    let mut bound = Duration::from_secs(5);
    for spec in hooks.specs() {
        if spec.event == Event::SessionStart && spec.matches_source(source) {
            bound += spec.timeout + Duration::from_secs(5);
        }
    }
    let mode = lock(&session.settings).mode.id();
    let shared = Arc::clone(&session.started.shared);
    *lock(&shared.phase) = Phase::Running { until: Instant::now() + bound };
    let spawned = std::thread::Builder::new().name("session-start".into()).spawn(move || {
        let about = About::SessionStart { source };
        let wanted = |spec: &crate::hooks::HookSpec| spec.matches_source(source);
        let report = hooks.run(&about, Some(mode), wanted, &shared.cancel);
        let mut told: Vec<String> = report.lines().iter().map(|line| format!("[{line}]")).collect();
        told.extend(report.warnings());
        *lock(&shared.phase) = Phase::Done { context: report.context(), untold: told };
        shared.changed.notify_all();
    });
    if let Err(err) = spawned {
        log::warn!("session {}: cannot run the SessionStart hooks: {err}", session.id);
        *lock(&session.started.shared.phase) = Phase::Idle;
    }
}

/// What the `SessionStart` hooks of a session did, kept on the session.
#[derive(Default)]
pub(super) struct SessionStart {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    phase: Mutex<Phase>,
    changed: Condvar,
    /// Fired when the session goes: the hooks still running are killed.
    cancel: CancelToken,
}

#[derive(Default)]
enum Phase {
    /// None ran (or none is left to tell).
    #[default]
    Idle,
    /// They are running, and are waited for until then.
    Running { until: Instant },
    /// They ended: the context for the model, and what the client was not told yet.
    Done { context: Option<String>, untold: Vec<String> },
}

impl SessionStart {
    /// Waits (bounded) until the hooks ended.
    fn wait(&self) -> std::sync::MutexGuard<'_, Phase> {
        let mut phase = lock(&self.shared.phase);
        while let Phase::Running { until } = *phase {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                log::warn!("the SessionStart hooks did not end in time; going on without them");
                break;
            }
            let waited = self.shared.changed.wait_timeout(phase, left);
            phase = waited.unwrap_or_else(PoisonError::into_inner).0;
        }
        phase
    }

    /// The section of the system prompt that holds what the hooks said ("" if nothing).
    pub(super) fn section(&self) -> String {
        match &*self.wait() {
            Phase::Done { context: Some(context), .. } => {
                format!("\n\n# Session start\nThe team's SessionStart hooks said:\n{context}")
            }
            _ => String::new(),
        }
    }

    /// What the client was not told yet of the hooks that ran (once).
    fn untold(&self) -> Vec<String> {
        match &mut *self.wait() {
            Phase::Done { untold, .. } => std::mem::take(untold),
            _ => Vec::new(),
        }
    }
}

impl Drop for SessionStart {
    fn drop(&mut self) {
        self.shared.cancel.cancel();
    }
}
