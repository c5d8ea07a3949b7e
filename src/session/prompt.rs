//! Running a prompt: one thread per prompt; the turn (or a slash command) runs there, the
//! history goes back into the session, the journal is synced, and the result goes to a
//! callback. A panic on the thread is caught and answered as an internal error.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

use super::commands::{self, Command};
use super::{Manager, Services, Session, SessionId};
use crate::agent::event::AgentEvent;
use crate::agent::{
    self, Calls, Client, Model, Outcome, Place, Record, Team, Turn, TurnFailure, TurnUsage,
};
use crate::cancel::CancelToken;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::history::Image;
use crate::hooks::Hooks;
use crate::provider::Provider;
use crate::rules::RuleSet;
use crate::skills::{Active, catalog};
use crate::sync::lock;

/// How a prompt talks back: events, permission questions, and the final result.
pub struct PromptIo {
    /// Receives the turn's events.
    pub sink: Arc<dyn crate::agent::event::EventSink>,
    /// Asks the user.
    pub asker: Arc<dyn crate::gate::Asker>,
    /// Called once with the result, after the last event, at the moment the session turns
    /// idle (its state locked): it hands the answer over and never calls the manager.
    pub done: Box<dyn FnOnce(std::result::Result<Outcome, PromptFailure>) + Send>,
    /// The client's file system, when it offers one (else `NoClientTools`).
    pub files: Arc<dyn crate::tools::ClientTools>,
}

/// Why a prompt produced no stop reason.
#[derive(Debug, Clone)]
pub enum PromptFailure {
    /// The LLM provider failed.
    Provider(TurnFailure),
    /// A bug (a panic on the prompt thread).
    Internal(String),
    /// The store stopped keeping the session's records: the turn was stopped.
    Store {
        /// The lease was lost to another node (else the store is unreachable).
        lease_lost: bool,
        message: String,
    },
}

impl PromptFailure {
    fn of_store(err: Error) -> PromptFailure {
        PromptFailure::Store { lease_lost: matches!(err, Error::Busy(_)), message: err.to_string() }
    }
}

impl Manager {
    /// Starts a prompt (or a slash command) on its own thread. Fails at once if the session
    /// is unknown or busy, or if it needs the LLM and none is configured; otherwise
    /// `io.done` is called exactly once, later.
    pub fn prompt(
        &self,
        id: &SessionId,
        text: String,
        images: Vec<Image>,
        io: PromptIo,
    ) -> Result<CancelToken> {
        let session = self.get(id)?;
        // A session whose records the store no longer keeps here is let go.
        if let Some(err) = session.broken() {
            drop(session);
            let _ = self.close(id);
            return Err(err);
        }
        let command = commands::parse(&text);
        // A project's rules are read anew for every prompt; a malformed file stops the
        // prompt (its deny rules cannot be known), it is never ignored.
        let rules = rules_for(&self.services.config, &session.root)?;
        let hooks = super::hooks::hooks_for(&self.services, &session)?;
        let provider = match self.services.provider.clone() {
            Ok(provider) => Some(provider),
            Err(_) if command.as_ref().is_some_and(|c| !c.needs_llm()) => None,
            Err(reason) => return Err(Error::NotConfigured(reason)),
        };
        let cancel = CancelToken::new();
        {
            let mut state = lock(&session.state);
            if state.running.is_some() {
                return Err(Error::InvalidParams(format!(
                    "session {id} is already running a prompt; send session/cancel or wait \
                     for it to finish"
                )));
            }
            state.running = Some(cancel.clone());
        }
        session.open_inbox(command.is_none());
        let cancel_handle = cancel.clone();
        if command.is_none() && session.journal.meta().title.is_none() {
            // The title is kept and shown everywhere: made from the prompt as redacted.
            let title = crate::text::title(&session.vault.redact(&text).0);
            session.record(&super::record::Record::Title { title: title.clone() });
            session.touch(|m| m.title = Some(title.clone()));
            let updated_at = Some(session.journal.meta().updated_at);
            io.sink.emit(AgentEvent::SessionInfo { title: Some(title), updated_at });
        }
        let services = Arc::clone(&self.services);
        let session_for_reset = Arc::clone(&session);
        let guard = RunningGuard::enter(Arc::clone(&self.running));
        let spawned =
            thread::Builder::new().name(format!("prompt-{}", &id.as_str()[..8])).spawn(move || {
                let _guard = guard;
                let input = Input { text, images, rules, hooks };
                run(&services, &session, provider.as_deref(), &cancel, input, command, io);
                // Let go of the session (and its lock) before the guard says we are done.
                drop(session);
            });
        let token = cancel_handle;
        spawned.map(|_| token).map_err(|err| {
            lock(&session_for_reset.state).running = None;
            Error::Internal(format!("cannot start prompt: {err}"))
        })
    }
}

fn run(
    services: &Services,
    session: &Session,
    provider: Option<&dyn Provider>,
    cancel: &CancelToken,
    input: Input,
    command: Option<Command>,
    io: PromptIo,
) {
    let Input { text, images, rules, hooks } = input;
    let mut history = std::mem::take(&mut lock(&session.state).history);
    let attempt = catch_unwind(AssertUnwindSafe(|| match (command, provider) {
        (Some(command), provider) => {
            let none = || Active::new(Vec::new(), None);
            let turn = provider.map(|p| TurnParts::new(services, session, p, rules, hooks, none()));
            let turn = turn.as_ref().map(|parts| parts.turn(services, session, cancel, &io));
            let sink = io.sink.as_ref();
            commands::run(command, services, session, turn.as_ref(), &mut history, sink)
        }
        (None, Some(provider)) => {
            super::mcp::before_turn(services, session, &io, cancel);
            let skills = super::skills::before_turn(services, session, &io, cancel);
            // The hooks judge the prompt as typed; a skill's `/name` is expanded after, and
            // what the hooks add follows it.
            let typed = text.clone();
            let text = match super::hooks::before_turn(session, &hooks, text, &*io.sink, cancel) {
                Ok(text) => text,
                Err(refused) => return Ok(refused),
            };
            let context = text.strip_prefix(typed.as_str()).unwrap_or_default().to_string();
            let text = super::skills::expand(&skills, typed) + &context;
            let parts = TurnParts::new(services, session, provider, rules, hooks, skills);
            let turn = parts.turn(services, session, cancel, &io);
            agent::run_turn(&turn, &mut history, text, images).map_err(|failure| {
                agent::close(session, &mut history, "Not run: the turn failed.");
                PromptFailure::Provider(failure)
            })
        }
        (None, None) => Err(PromptFailure::Internal("no LLM provider".to_string())),
    }));
    let attempt = match session.broken() {
        Some(err) => Ok(Err(PromptFailure::of_store(err))),
        None => attempt,
    };
    let result = attempt.unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        log::error!("session {}: prompt thread panicked: {what}", session.id);
        agent::close(session, &mut history, "Interrupted by an internal error.");
        Err(PromptFailure::Internal(what))
    });
    if let Ok(outcome) = &result {
        log::info!(
            "session {}: turn ended: {:?}, {} in / {} out tokens",
            session.id,
            outcome.stop,
            outcome.usage.input,
            outcome.usage.output
        );
    }
    session.close_inbox(&mut history);
    lock(&session.state).history = history;
    let spent = super::record::UsageRecord::totals(&session.spent());
    session.touch(|m| m.usage = spent);
    super::vault_file::save(&services.config.config_dir, &session.id, &session.vault);
    if let Err(err) = session.journal.sync() {
        log::error!("session {}: journal sync failed: {err}", session.id);
    }
    // Before the answer: the client's list shows the session's new last change.
    let updated_at = Some(session.journal.meta().updated_at);
    io.sink.emit(AgentEvent::SessionInfo { title: None, updated_at });
    // Idle and answered in one step: a prompt or a steering message that finds the
    // session idle starts a turn whose updates follow this answer on the wire, never
    // precede it (the outbox never blocks: its channels are unbounded).
    let mut state = lock(&session.state);
    state.running = None;
    (io.done)(result);
}

/// What the user sent, and the rules and hooks in force for it.
struct Input {
    text: String,
    images: Vec<Image>,
    rules: RuleSet,
    hooks: Hooks,
}

/// The rules in force in `cwd`: the configuration's, then the project's (its allow rules
/// only once approved).
fn rules_for(config: &Config, cwd: &std::path::Path) -> Result<RuleSet> {
    let project = crate::config::permissions::project_rules(cwd, &config.config_dir)
        .map_err(|why| Error::Config(format!("{why}; fix or remove it to go on")))?;
    if project.unapproved_allows > 0
        && let Some(path) = &project.path
    {
        log::info!(
            "{}: {} allow rule(s) not used until approved (iac-code config approve)",
            path.display(),
            project.unapproved_allows
        );
    }
    let mut rules = (*config.permissions).clone();
    rules.extend(project.rules);
    Ok(rules)
}

/// What a turn borrows that must outlive it.
struct TurnParts<'a> {
    provider: &'a dyn Provider,
    system: Arc<str>,
    sub_usage: Mutex<TurnUsage>,
    rules: RuleSet,
    hooks: Hooks,
    skills: Active,
    /// The session's additional directories.
    extra: Vec<std::path::PathBuf>,
}

impl<'a> TurnParts<'a> {
    fn new(
        services: &Services,
        session: &Session,
        provider: &'a dyn Provider,
        rules: RuleSet,
        hooks: Hooks,
        skills: Active,
    ) -> TurnParts<'a> {
        let model = lock(&session.settings).model.clone();
        let mcp = crate::tools::ExternalTools::current(&session.mcp);
        let tool_names: Vec<&str> =
            services.tools.iter().map(|t| t.name()).chain(mcp.iter().map(|t| t.name())).collect();
        let budget = catalog::budget(services.config.limits.context_window);
        let catalog = catalog::render(skills.skills(), budget);
        // Built once per session and kept (the provider's prompt cache depends on it).
        // What the `SessionStart` hooks said, waited for before the prefix is locked.
        let started = session.started.section();
        let system = session.system_prompt(&model, &tool_names, &catalog, |date| {
            let sections = [started.as_str(), catalog.as_str()];
            system_prompt(services, session, &model, &tool_names, &sections, date)
        });
        let sub_usage = Mutex::new(TurnUsage::default());
        let extra = session.directories().roots;
        TurnParts { provider, system, sub_usage, rules, hooks, skills, extra }
    }

    fn turn<'t>(
        &'t self,
        services: &'t Services,
        session: &'t Session,
        cancel: &'t CancelToken,
        io: &'t PromptIo,
    ) -> Turn<'t> {
        Turn {
            place: Place {
                cwd: &session.root,
                extra: &self.extra,
                config_dir: &services.config.config_dir,
            },
            model: Model {
                provider: self.provider,
                system_prompt: &self.system,
                tool_defs: services.tool_defs(),
                pricing: &services.config.pricing,
                cache_key: Some(session.id.as_str()),
                images: services.config.provider.as_ref().is_ok_and(|p| p.images),
            },
            calls: Calls {
                tools: &services.tools,
                external: &session.mcp,
                files: io.files.as_ref(),
                jobs: &session.jobs,
                skills: &self.skills,
            },
            team: Team { rules: &self.rules, hooks: &self.hooks },
            client: Client { asker: io.asker.as_ref(), sink: io.sink.as_ref(), steering: session },
            record: Record { recorder: session, vault: &session.vault, sub_usage: &self.sub_usage },
            settings: &session.settings,
            limits: services.config.limits,
            cancel,
            nested: false,
        }
    }
}

/// The system prompt of `session` built now, every section in order, its date `date`: the
/// one place that assembles it (a further section, such as a skills catalog, a memory index
/// or what a `SessionStart` hook said, is appended here, one line each). What this returns
/// is frozen for the session (`session/system.rs`): a section that varies from call to
/// call belongs after the cache breakpoint, not here.
fn system_prompt(
    services: &Services,
    session: &Session,
    model: &str,
    tools: &[&str],
    sections: &[&str],
    date: &str,
) -> String {
    let config = &services.config;
    let mut system =
        agent::prompt::system_prompt(&session.root, model, &config.instructions_file, tools, date);
    system.push_str(&session.directories_section());
    for section in sections {
        system.push_str(section);
    }
    system.extend(crate::memory::prompt_section(&config.config_dir, &session.root));
    // The project's instructions are its files: a secret in AGENTS.md is redacted like
    // one in any file the model reads.
    session.vault.redact(&system).0
}

/// Counts running prompt threads; decrements on drop, even when the thread panics.
pub struct RunningGuard(Arc<(Mutex<usize>, Condvar)>);

impl RunningGuard {
    pub(super) fn enter(running: Arc<(Mutex<usize>, Condvar)>) -> RunningGuard {
        *lock(&running.0) += 1;
        RunningGuard(running)
    }
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        let (count, cvar) = &*self.0;
        *lock(count) -= 1;
        cvar.notify_all();
    }
}
