//! A session's steering inbox: what the user sends to its running turn
//! (`_session/steering`), kept until the turn's next model request takes it (through
//! `agent::Steering`). What a turn never took (it ended first) is journalled when the
//! prompt lets go of the session, so the model reads it at its next request all the same.

use super::{Manager, Session, SessionId};
use crate::agent::{Recorder, Steering};
use crate::error::Result;
use crate::history::{ChatMessage, Image};
use crate::sync::lock;

/// The messages waiting for the running turn.
#[derive(Default)]
pub(super) struct Inbox {
    /// Oldest first.
    waiting: Vec<ChatMessage>,
    /// A turn takes what is sent (from its start until it ends with nothing waiting).
    open: bool,
}

/// Where a steering message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Steered {
    /// Into the running turn.
    Injected,
    /// Nowhere: no turn runs, so it is for a new prompt.
    Idle,
    /// Nowhere: the session is busy with something that takes none (a slash command, a
    /// turn ending).
    Busy,
}

impl Manager {
    /// Sends the user's message to the session's running turn, if one takes it.
    pub fn steer(&self, id: &SessionId, text: String, images: Vec<Image>) -> Result<Steered> {
        let session = self.get(id)?;
        if let Some(err) = session.broken() {
            return Err(err);
        }
        let mut state = lock(&session.state);
        if state.running.is_none() {
            return Ok(Steered::Idle);
        }
        if !state.inbox.open {
            return Ok(Steered::Busy);
        }
        state.inbox.waiting.push(ChatMessage::User { text, images });
        log::info!("session {id}: steering message for the running turn");
        Ok(Steered::Injected)
    }
}

impl Session {
    /// A prompt starts: a turn takes steering from now on, a slash command does not.
    pub(super) fn open_inbox(&self, turn: bool) {
        lock(&self.state).inbox.open = turn;
    }

    /// The prompt ends: the inbox closes, and what the turn never took joins `history`
    /// (journalled), before the session is let go.
    pub(super) fn close_inbox(&self, history: &mut Vec<ChatMessage>) {
        let left = {
            let mut state = lock(&self.state);
            state.inbox.open = false;
            std::mem::take(&mut state.inbox.waiting)
        };
        for message in left {
            log::info!(
                "session {}: a steering message came after the turn's last request",
                self.id
            );
            self.message(&message);
            history.push(message);
        }
    }
}

impl Steering for Session {
    fn steered(&self, ending: bool) -> Vec<ChatMessage> {
        let mut state = lock(&self.state);
        if ending && state.inbox.waiting.is_empty() {
            state.inbox.open = false;
        }
        std::mem::take(&mut state.inbox.waiting)
    }
}
