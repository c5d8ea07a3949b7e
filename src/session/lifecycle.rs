//! Opening and removing sessions: new, load (returning the history to replay), resume,
//! fork (a full copy of the journal, `forkedFrom` recorded), delete. Every id is checked
//! before it touches a path; a session held by another process or connection is refused.

use std::sync::{Arc, Mutex};

use super::SessionId;
use super::record::Rebuilt;
use super::store::{self, Journal, Meta};
use super::{Manager, Session, State, validate_cwd};
use crate::agent::Settings;
use crate::error::{Error, Result};
use crate::gate::{Always, Mode, Unreviewed};
use crate::history::ChatMessage;

impl Manager {
    /// Creates a session in `cwd` (absolute, an existing directory).
    pub fn create(&self, cwd: &str) -> Result<Arc<Session>> {
        let root = validate_cwd(cwd)?;
        let meta = Meta::new(cwd.to_string(), None);
        let journal = self.services.store.create(meta)?;
        let session = self.build(journal, root, Rebuilt::default(), None);
        super::hooks::session_start(&self.services, &session, "startup");
        log::info!("session {} created in {cwd}", session.id);
        Ok(session)
    }

    /// Opens a session from disk (or finds it open on this connection) and returns it with
    /// every message it ever had and their message ids, for replay.
    pub fn load(
        &self,
        id: &SessionId,
        cwd: &str,
    ) -> Result<(Arc<Session>, Vec<ChatMessage>, Vec<String>)> {
        let root = validate_cwd(cwd)?;
        if let Ok(session) = self.get(id) {
            if session.broken().is_none() {
                let (all, ids) =
                    self.services.store.peek(id)?.map(|(_, r)| (r.all, r.ids)).unwrap_or_default();
                return Ok((session, all, ids));
            }
            // Its records are no longer kept here: let it go, and open it afresh.
            drop(session);
            self.close(id)?;
        }
        let (journal, rebuilt) =
            self.services.store.open(id)?.ok_or_else(|| Error::UnknownSession(id.to_string()))?;
        let rebuilt = repair(journal.as_ref(), rebuilt)?;
        if journal.meta().cwd != cwd {
            store::update_meta(journal.as_ref(), |m| m.cwd = cwd.to_string())?;
        }
        let (all, ids) = (rebuilt.all.clone(), rebuilt.ids.clone());
        let session = self.build(journal, root, rebuilt, None);
        super::hooks::session_start(&self.services, &session, "resume");
        log::info!("session {id} loaded ({} messages)", all.len());
        Ok((session, all, ids))
    }

    /// Opens a session without replay.
    pub fn resume(&self, id: &SessionId, cwd: &str) -> Result<Arc<Session>> {
        if let Ok(session) = self.get(id)
            && session.broken().is_none()
        {
            return Ok(session);
        }
        self.load(id, cwd).map(|(session, ..)| session)
    }

    /// Copies a session, its whole journal included, under a new id, and opens the copy.
    pub fn fork(&self, source: &SessionId, cwd: &str) -> Result<Arc<Session>> {
        let root = validate_cwd(cwd)?;
        let new_id = SessionId::random();
        let (journal, rebuilt) = self
            .services
            .store
            .fork(source, &new_id, cwd)?
            .ok_or_else(|| Error::UnknownSession(source.to_string()))?;
        let rebuilt = repair(journal.as_ref(), rebuilt)?;
        // The fork's history holds the source's placeholders: it starts with its vault,
        // kept under its own id at once.
        let session = self.build(journal, root, rebuilt, Some(source));
        let config_dir = &self.services.config.config_dir;
        super::vault_file::save(config_dir, &session.id, &session.vault);
        super::hooks::session_start(&self.services, &session, "resume");
        log::info!("session {source} forked as {new_id}");
        Ok(session)
    }

    /// Deletes a session's files, closing it first if it is open here. Unknown ids are not
    /// an error; a session held elsewhere is.
    pub fn delete(&self, id: &SessionId) -> Result<()> {
        if self.get(id).is_ok() {
            // Waits until a cancelled prompt has let go of the session and its lock.
            self.close(id)?;
        }
        self.services.store.delete(id)?;
        super::vault_file::remove(&self.services.config.config_dir, id);
        log::info!("session {id} deleted");
        Ok(())
    }

    /// A session over `journal`; its vault is the one kept for `vault_of` (a fork's
    /// source), else for itself.
    fn build(
        &self,
        journal: Box<dyn Journal>,
        root: std::path::PathBuf,
        rebuilt: Rebuilt,
        vault_of: Option<&SessionId>,
    ) -> Arc<Session> {
        let models = self.services.models();
        let default_model = models.first().cloned().unwrap_or_default();
        let model = rebuilt.model.filter(|m| models.contains(m)).unwrap_or(default_model);
        let mode = rebuilt.mode.as_deref().and_then(Mode::from_id).unwrap_or(Mode::Default);
        let meta = journal.meta();
        let id = SessionId::parse(&meta.session_id).unwrap_or_else(|_| SessionId::random());
        let extra = super::Directories::restored(rebuilt.directories.as_deref().unwrap_or(&[]));
        let vault =
            super::redact::vault(&self.services.config, vault_of.unwrap_or(&id), &rebuilt.context);
        let session = Arc::new(Session {
            id,
            cwd: meta.cwd,
            root,
            settings: Mutex::new(Settings {
                mode,
                model,
                always: Always::default(),
                unreviewed: Unreviewed::default(),
                thinking: true,
            }),
            journal,
            state: Mutex::new(State {
                history: rebuilt.context,
                running: None,
                inbox: Default::default(),
                broken: None,
            }),
            jobs: crate::child::Jobs::default(),
            mcp: crate::mcp::Servers::default(),
            mcp_client: Mutex::default(),
            mcp_project_asked: Mutex::default(),
            started: Default::default(),
            skills_asked: Mutex::default(),
            prefix: Mutex::default(),
            spent: Mutex::new(rebuilt.usage),
            extra: Mutex::new(extra),
            vault,
        });
        // A lease lost while the session runs stops its turn at once (the next record
        // would be refused anyway; the turn must not go on acting in the shared cwd).
        let weak = Arc::downgrade(&session);
        session.journal.on_lost(Box::new(move |why| {
            if let Some(session) = weak.upgrade() {
                session.broke(crate::error::Error::Busy(why.to_string()));
            }
        }));
        self.insert(Arc::clone(&session));
        session
    }
}

/// Journals an error result for every tool call a crash left unanswered (once: the next
/// load finds them answered).
fn repair(journal: &dyn Journal, mut rebuilt: Rebuilt) -> Result<Rebuilt> {
    for record in rebuilt.repairs() {
        journal.append(&record)?;
        rebuilt.apply(&record);
    }
    Ok(rebuilt)
}
