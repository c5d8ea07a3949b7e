//! Sessions of one connection: the table, one prompt at a time per session, cancel, close,
//! and the durable side (journal, load, resume, fork, delete, list) in `lifecycle`. Runs
//! each prompt on its own thread; hands results back through callbacks so this module never
//! builds wire JSON.

mod approve;
mod commands;
mod directories;
mod hooks;
mod id;
mod lifecycle;
mod mcp;
mod prompt;
mod rebuild;
mod recorder;
mod redact;
mod seal;
mod skills;
mod steering;
mod vault_file;
pub use steering::Steered;
mod system;
pub use prompt::{PromptFailure, PromptIo, RunningGuard};
pub mod record;
pub mod replay;
pub mod store;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use crate::agent::{self, Settings};
use crate::cancel::CancelToken;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::gate::Mode;
use crate::history::ChatMessage;
use crate::provider::{self, Provider, ToolDef};
use crate::sync::lock;
use crate::tools::Registry;
pub use commands::{COMMANDS, available};
pub use directories::Directories;
pub use id::SessionId;
use record::Record;
use store::{Journal, SessionStore};

/// How long closing a session waits for its cancelled prompt to let go of it.
const RELEASE_WAIT: Duration = Duration::from_secs(5);

/// What every connection shares: configuration, the provider, the tools, the store.
pub struct Services {
    /// Validated configuration.
    pub config: Config,
    /// The LLM, or why there is none.
    pub provider: std::result::Result<Arc<dyn Provider>, String>,
    pub tools: Registry,
    /// Tool definitions as sent to the model, built with the first prompt (their JSON
    /// schemas are a third of start-up otherwise): `tool_defs()`.
    tool_defs: OnceLock<Vec<ToolDef>>,
    /// Where sessions live.
    pub store: Box<dyn SessionStore>,
    /// Which connection (manager id) holds each open session of this process.
    holders: Mutex<HashMap<SessionId, u64>>,
    /// Set by ACP's `logout`, cleared by a successful `authenticate` (`acp/auth.rs`): new
    /// sessions and prompts need a sign-in first.
    pub signed_out: std::sync::atomic::AtomicBool,
}

impl Services {
    /// Builds the shared services from a configuration (an unusable store setting is an
    /// error).
    pub fn new(config: Config) -> Result<Services> {
        let provider = config.provider.as_ref().map(provider::build).map_err(Clone::clone);
        let tools = Registry::builtin();
        let store = store::open(&config)?;
        let tool_defs = OnceLock::new();
        Ok(Services {
            config,
            provider,
            tools,
            tool_defs,
            store,
            holders: Mutex::default(),
            signed_out: Default::default(),
        })
    }

    /// Tool definitions as sent to the model.
    pub fn tool_defs(&self) -> &[ToolDef] {
        self.tool_defs.get_or_init(|| agent::tool_defs(&self.tools))
    }

    /// The manager (connection) that holds `session` open in this process, if any.
    pub fn holder(&self, session: &SessionId) -> Option<u64> {
        lock(&self.holders).get(session).copied()
    }

    /// The models offered to clients (the default first).
    pub fn models(&self) -> Vec<String> {
        match &self.config.provider {
            Ok(p) => p.models.clone(),
            Err(_) => Vec::new(),
        }
    }
}

/// One open session.
pub struct Session {
    pub id: SessionId,
    /// The cwd as the client gave it.
    pub cwd: String,
    /// The cwd, canonical (symlinks resolved).
    pub root: PathBuf,
    /// Mode, model and permission memory.
    pub settings: Mutex<Settings>,
    journal: Box<dyn Journal>,
    state: Mutex<State>,
    /// Processes its tool calls left running; killed when the session is dropped.
    pub jobs: crate::child::Jobs,
    /// Its MCP servers (closed when the session closes or is dropped).
    pub mcp: crate::mcp::Servers,
    /// The client's `mcpServers` entries the servers were last started with.
    mcp_client: Mutex<Option<Vec<serde_json::Value>>>,
    /// The project `.mcp.json` content the user was last asked about in this session.
    mcp_project_asked: Mutex<Option<String>>,
    /// What its `SessionStart` hooks did (run as it was created or loaded).
    started: hooks::SessionStart,
    /// The project skills the user was last asked about in this session, and the answer.
    skills_asked: Mutex<Option<(String, bool)>>,
    /// The frozen system prompt and the tools last offered (`session/system.rs`).
    prefix: Mutex<system::Prefix>,
    /// What its model calls used and cost so far (`session/recorder.rs`).
    spent: Mutex<agent::TurnUsage>,
    /// Its additional directories (`session/directories.rs`).
    extra: Mutex<Directories>,
    /// Its secrets and their placeholders (`session/redact.rs`, kept by `vault_file.rs`).
    pub vault: crate::secret::Vault,
}

struct State {
    /// What the model sees next.
    history: Vec<ChatMessage>,
    running: Option<CancelToken>,
    /// What the user sent to the running turn (`_session/steering`).
    inbox: steering::Inbox,
    /// Why the store no longer keeps this session's records (lease lost, store down).
    broken: Option<Error>,
}

impl Session {
    /// Sets the permission mode (journalled).
    pub fn set_mode(&self, mode: Mode) {
        lock(&self.settings).mode = mode;
        self.record(&Record::Mode { mode: mode.id().to_string() });
    }

    /// Sets the model (journalled).
    pub fn set_model(&self, model: &str) {
        lock(&self.settings).model = model.to_string();
        self.record(&Record::Model { model: model.to_string() });
    }
}

/// A summary for `session/list`.
#[derive(Debug, Clone)]
pub struct Summary {
    pub id: String,
    /// Cwd as given.
    pub cwd: String,
    /// Title (the first prompt, or a `/rename`).
    pub title: Option<String>,
    /// RFC 3339 time of the last change.
    pub updated_at: String,
    /// Messages in the journal.
    pub messages: u64,
    /// Its additional directories, as given.
    pub additional_directories: Vec<String>,
}

/// The sessions of one connection.
pub struct Manager {
    id: u64,
    services: Arc<Services>,
    sessions: Mutex<HashMap<SessionId, Arc<Session>>>,
    running: Arc<(Mutex<usize>, Condvar)>,
}

impl Manager {
    /// An empty table.
    pub fn new(services: Arc<Services>) -> Manager {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Manager { id, services, sessions: Mutex::new(HashMap::new()), running: Arc::default() }
    }

    /// This manager's id (unique in the process).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The shared services.
    pub fn services(&self) -> &Services {
        &self.services
    }

    /// Looks an open session up.
    pub fn get(&self, id: &SessionId) -> Result<Arc<Session>> {
        lock(&self.sessions).get(id).cloned().ok_or_else(|| Error::UnknownSession(id.to_string()))
    }

    /// Cancels the running prompt of a session, if any. Unknown ids are ignored (cancel is a
    /// notification).
    pub fn cancel(&self, id: &SessionId) {
        if let Ok(session) = self.get(id)
            && let Some(token) = &lock(&session.state).running
        {
            log::info!("session {id}: cancel");
            token.cancel();
        }
    }

    /// Closes a session: cancels its prompt, waits (bounded) until the prompt has let go
    /// (so its `cancelled` answer comes first and the lock is free when this returns),
    /// syncs the journal and forgets the session. The files stay.
    pub fn close(&self, id: &SessionId) -> Result<()> {
        let session = self.get(id)?;
        self.cancel(&session.id);
        session.mcp.close();
        lock(&self.sessions).remove(&session.id);
        self.release(&session.id);
        let _ = session.journal.sync();
        self.wait_idle(RELEASE_WAIT, || Arc::strong_count(&session) == 1);
        Ok(())
    }

    /// Sessions on disk, optionally only those in `cwd`, most recently updated first.
    pub fn list(&self, cwd: Option<&str>) -> Result<Vec<Summary>> {
        let filter = cwd.map(|c| (c.to_string(), Path::new(c).canonicalize().ok()));
        let mut out: Vec<Summary> = self
            .services
            .store
            .list()?
            .into_iter()
            .filter(|m| match &filter {
                None => true,
                Some((given, canonical)) => {
                    m.cwd == *given
                        || canonical.as_ref().is_some_and(|c| Path::new(&m.cwd) == c.as_path())
                }
            })
            .map(|m| Summary {
                id: m.session_id,
                cwd: m.cwd,
                title: m.title,
                updated_at: m.updated_at,
                messages: m.messages,
                additional_directories: m.additional_directories,
            })
            .collect();
        out.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| a.id.cmp(&b.id)));
        Ok(out)
    }

    /// Counts work running off the connection thread (a load) like a prompt, so that
    /// `shutdown` waits for it too; the count drops with the guard.
    pub fn working(&self) -> RunningGuard {
        prompt::RunningGuard::enter(Arc::clone(&self.running))
    }

    /// Cancels every running prompt, waits (bounded) for their threads, syncs journals.
    pub fn shutdown(&self, deadline: Duration) {
        let sessions: Vec<Arc<Session>> = lock(&self.sessions).values().cloned().collect();
        for session in &sessions {
            self.cancel(&session.id);
        }
        self.wait_idle(deadline, || false);
        for session in &sessions {
            session.mcp.close();
            let _ = session.journal.sync();
        }
    }

    /// Waits until `done()` holds or no prompt thread runs, at most `deadline`.
    fn wait_idle(&self, deadline: Duration, done: impl Fn() -> bool) {
        let (count, cvar) = &*self.running;
        let end = Instant::now() + deadline;
        let mut running = lock(count);
        while *running > 0 && !done() {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                log::warn!("{} prompt(s) still running", *running);
                return;
            }
            running = cvar.wait_timeout(running, left).unwrap_or_else(PoisonError::into_inner).0;
        }
    }

    fn insert(&self, session: Arc<Session>) {
        lock(&self.services.holders).insert(session.id.clone(), self.id);
        lock(&self.sessions).insert(session.id.clone(), session);
    }

    fn release(&self, id: &SessionId) {
        let mut holders = lock(&self.services.holders);
        if holders.get(id) == Some(&self.id) {
            holders.remove(id);
        }
    }
}

impl Drop for Manager {
    fn drop(&mut self) {
        lock(&self.services.holders).retain(|_, holder| *holder != self.id);
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
        let file = std::env::temp_dir().join(format!("iac-cwd-file-{}", std::process::id()));
        std::fs::write(&file, "x").unwrap();
        let err = validate_cwd(file.to_str().unwrap()).unwrap_err().to_string();
        assert!(err.contains("is not a directory"), "{err}");
        std::fs::remove_file(&file).unwrap();
        assert!(validate_cwd("/").is_ok());
    }
}
