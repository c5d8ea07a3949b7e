//! Sessions of one connection: the table, one prompt at a time per session, cancel, close,
//! list. Runs each prompt on its own thread; hands results back through callbacks so this
//! module never builds wire JSON.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::agent::event::EventSink;
use crate::agent::history::{ChatMessage, close_unanswered};
use crate::agent::{self, Outcome, Settings, Turn, TurnFailure};
use crate::cancel::CancelToken;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::lock;
use crate::permission::{Asker, Memory, Mode};
use crate::provider::{self, Provider, ToolDef};
use crate::tools::Registry;

/// What every connection shares: configuration, the provider, the tools.
pub struct Services {
    /// Validated configuration.
    pub config: Config,
    /// The LLM, or why there is none.
    pub provider: std::result::Result<Arc<dyn Provider>, String>,
    /// Tools.
    pub tools: Registry,
    /// Tool definitions as sent to the model.
    pub tool_defs: Vec<ToolDef>,
}

impl Services {
    /// Builds the shared services from a configuration.
    pub fn new(config: Config) -> Services {
        let provider = config.provider.as_ref().map(provider::build).map_err(Clone::clone);
        let tools = Registry::builtin();
        let tool_defs = agent::tool_defs(&tools);
        Services { config, provider, tools, tool_defs }
    }

    /// The models offered to clients (the default first).
    pub fn models(&self) -> Vec<String> {
        match &self.config.provider {
            Ok(p) => p.models.clone(),
            Err(_) => Vec::new(),
        }
    }
}

/// One session.
pub struct Session {
    /// Its id (a UUID).
    pub id: String,
    /// The cwd as the client gave it.
    pub cwd: String,
    /// The cwd, canonical (symlinks resolved).
    pub root: PathBuf,
    /// Mode, model and permission memory.
    pub settings: Mutex<Settings>,
    state: Mutex<State>,
}

struct State {
    history: Vec<ChatMessage>,
    running: Option<CancelToken>,
    title: Option<String>,
    updated_at: String,
}

/// A summary for `session/list`.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Session id.
    pub id: String,
    /// Cwd as given.
    pub cwd: String,
    /// Title (the first prompt).
    pub title: Option<String>,
    /// RFC 3339 time of the last change.
    pub updated_at: String,
}

/// How a prompt talks back: events, permission questions, and the final result.
pub struct PromptIo {
    /// Receives the turn's events.
    pub sink: Arc<dyn EventSink>,
    /// Asks the user.
    pub asker: Arc<dyn Asker>,
    /// Called once with the result, after the last event.
    pub done: Box<dyn FnOnce(std::result::Result<Outcome, PromptFailure>) + Send>,
}

/// Why a prompt produced no stop reason.
#[derive(Debug, Clone)]
pub enum PromptFailure {
    /// The LLM provider failed.
    Provider(TurnFailure),
    /// A bug (a panic on the prompt thread).
    Internal(String),
}

/// The sessions of one connection.
pub struct Manager {
    services: Arc<Services>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    running: Arc<(Mutex<usize>, Condvar)>,
}

impl Manager {
    /// An empty table.
    pub fn new(services: Arc<Services>) -> Manager {
        Manager { services, sessions: Mutex::new(HashMap::new()), running: Arc::default() }
    }

    /// The shared services.
    pub fn services(&self) -> &Services {
        &self.services
    }

    /// Creates a session in `cwd` (absolute, an existing directory).
    pub fn create(&self, cwd: &str) -> Result<Arc<Session>> {
        let root = validate_cwd(cwd)?;
        let model = self.services.models().into_iter().next().unwrap_or_default();
        let session = Arc::new(Session {
            id: uuid::Uuid::new_v4().to_string(),
            cwd: cwd.to_string(),
            root,
            settings: Mutex::new(Settings {
                mode: Mode::Default,
                model,
                memory: Memory::default(),
            }),
            state: Mutex::new(State {
                history: Vec::new(),
                running: None,
                title: None,
                updated_at: crate::time::now_rfc3339(),
            }),
        });
        lock(&self.sessions).insert(session.id.clone(), Arc::clone(&session));
        log::info!("session {} created in {cwd}", session.id);
        Ok(session)
    }

    /// Looks a session up.
    pub fn get(&self, id: &str) -> Result<Arc<Session>> {
        lock(&self.sessions).get(id).cloned().ok_or_else(|| Error::UnknownSession(id.to_string()))
    }

    /// Cancels the running prompt of a session, if any. Unknown ids are ignored (cancel is a
    /// notification).
    pub fn cancel(&self, id: &str) {
        if let Ok(session) = self.get(id)
            && let Some(token) = &lock(&session.state).running
        {
            log::info!("session {id}: cancel");
            token.cancel();
        }
    }

    /// Closes a session: cancels its prompt and forgets it.
    pub fn close(&self, id: &str) -> Result<()> {
        self.cancel(id);
        match lock(&self.sessions).remove(id) {
            Some(_) => Ok(()),
            None => Err(Error::UnknownSession(id.to_string())),
        }
    }

    /// Sessions, optionally only those in `cwd`, most recently updated first.
    pub fn list(&self, cwd: Option<&str>) -> Vec<Summary> {
        let sessions: Vec<Arc<Session>> = lock(&self.sessions).values().cloned().collect();
        let mut out: Vec<Summary> = sessions
            .iter()
            .filter(|s| cwd.is_none_or(|c| same_dir(c, &s.cwd, &s.root)))
            .map(|s| {
                let state = lock(&s.state);
                Summary {
                    id: s.id.clone(),
                    cwd: s.cwd.clone(),
                    title: state.title.clone(),
                    updated_at: state.updated_at.clone(),
                }
            })
            .collect();
        out.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| a.id.cmp(&b.id)));
        out
    }

    /// Starts a prompt on its own thread. Fails at once if the session is unknown, busy, or
    /// no provider is configured; otherwise `io.done` is called exactly once, later.
    pub fn prompt(&self, id: &str, text: String, io: PromptIo) -> Result<()> {
        let session = self.get(id)?;
        let provider = self.services.provider.clone().map_err(Error::NotConfigured)?;
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
            if state.title.is_none() {
                state.title = Some(title_of(&text));
            }
        }
        let services = Arc::clone(&self.services);
        let session_for_reset = Arc::clone(&session);
        let guard = RunningGuard::enter(Arc::clone(&self.running));
        let spawned = thread::Builder::new()
            .name(format!("prompt-{}", &id[..id.len().min(8)]))
            .spawn(move || {
                let _guard = guard;
                run_prompt(&services, &session, provider.as_ref(), &cancel, text, io);
            });
        spawned.map(|_| ()).map_err(|err| {
            lock(&session_for_reset.state).running = None;
            Error::Internal(format!("cannot start prompt: {err}"))
        })
    }

    /// Cancels every running prompt and waits (bounded) for their threads to finish.
    pub fn shutdown(&self, deadline: Duration) {
        let ids: Vec<String> = lock(&self.sessions).keys().cloned().collect();
        for id in &ids {
            self.cancel(id);
        }
        let (count, cvar) = &*self.running;
        let end = Instant::now() + deadline;
        let mut running = lock(count);
        while *running > 0 {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                log::warn!("{} prompt(s) still running at shutdown", *running);
                return;
            }
            running = cvar.wait_timeout(running, left).unwrap_or_else(PoisonError::into_inner).0;
        }
    }
}

fn run_prompt(
    services: &Services,
    session: &Session,
    provider: &dyn Provider,
    cancel: &CancelToken,
    text: String,
    io: PromptIo,
) {
    let mut history = std::mem::take(&mut lock(&session.state).history);
    let model = lock(&session.settings).model.clone();
    let tool_names: Vec<&str> = services.tools.iter().map(|t| t.name()).collect();
    let system = agent::prompt::system_prompt(
        &session.root,
        &model,
        &services.config.instructions_file,
        &tool_names,
    );
    let sub_usage = Mutex::new(agent::TurnUsage::default());
    let turn = Turn {
        cwd: &session.root,
        system_prompt: &system,
        provider,
        tools: &services.tools,
        tool_defs: &services.tool_defs,
        settings: &session.settings,
        asker: io.asker.as_ref(),
        sink: io.sink.as_ref(),
        cancel,
        limits: services.config.limits,
        config_dir: &services.config.config_dir,
        nested: false,
        sub_usage: &sub_usage,
    };
    let result = match catch_unwind(AssertUnwindSafe(|| agent::run_turn(&turn, &mut history, text)))
    {
        Ok(Ok(outcome)) => Ok(outcome),
        Ok(Err(failure)) => {
            close_unanswered(&mut history, "Not run: the turn failed.");
            Err(PromptFailure::Provider(failure))
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            log::error!("session {}: prompt thread panicked: {what}", session.id);
            close_unanswered(&mut history, "Interrupted by an internal error.");
            Err(PromptFailure::Internal(what))
        }
    };
    if let Ok(outcome) = &result {
        log::info!(
            "session {}: turn ended: {:?}, {} in / {} out tokens",
            session.id,
            outcome.stop,
            outcome.usage.input,
            outcome.usage.output
        );
    }
    {
        let mut state = lock(&session.state);
        state.history = history;
        state.running = None;
        state.updated_at = crate::time::now_rfc3339();
    }
    (io.done)(result);
}

/// Counts running prompt threads; decrements on drop, even when the thread panics.
struct RunningGuard(Arc<(Mutex<usize>, Condvar)>);

impl RunningGuard {
    fn enter(running: Arc<(Mutex<usize>, Condvar)>) -> RunningGuard {
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

fn validate_cwd(cwd: &str) -> Result<PathBuf> {
    let path = Path::new(cwd);
    if !path.is_absolute() {
        return Err(Error::InvalidParams(format!("cwd must be an absolute path, got '{cwd}'")));
    }
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => path
            .canonicalize()
            .map_err(|err| Error::InvalidParams(format!("cwd '{cwd}' cannot be resolved: {err}"))),
        Ok(_) => Err(Error::InvalidParams(format!("cwd '{cwd}' is not a directory"))),
        Err(err) => Err(Error::InvalidParams(format!("cwd '{cwd}' does not exist: {err}"))),
    }
}

fn same_dir(filter: &str, cwd: &str, root: &Path) -> bool {
    filter == cwd || Path::new(filter).canonicalize().is_ok_and(|f| f == root)
}

/// A session title from its first prompt: one line, at most 80 characters.
fn title_of(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("(empty)");
    if line.chars().count() <= 80 {
        return line.to_string();
    }
    format!("{}…", line.chars().take(79).collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_must_be_an_absolute_existing_directory() {
        assert!(validate_cwd("relative/dir").unwrap_err().to_string().contains("absolute"));
        assert!(
            validate_cwd("/definitely/not/here")
                .unwrap_err()
                .to_string()
                .contains("does not exist")
        );
        assert!(validate_cwd("/etc/hostname").is_err() || !Path::new("/etc/hostname").exists());
        assert!(validate_cwd("/").is_ok());
    }

    #[test]
    fn titles_are_one_short_line() {
        assert_eq!(title_of("\n  fix the vpc  \nmore"), "fix the vpc");
        assert_eq!(title_of(&"x".repeat(100)).chars().count(), 80);
    }
}
