//! `AcpSink`: a session's events to the client as `session/update` notifications. Every
//! chunk of a message (user text, reply, reasoning) carries that message's id
//! (`messageId`), the one `AgentEvent::MessageStart` named; a notice is a message of its
//! own. A burst of streamed pieces leaves as one hand-off, rendered from chunk templates
//! built once per message.

use std::sync::Mutex;

use super::convert::update_of;
use super::setup::Offer;
use super::types::{SessionNotification, SessionUpdate};
use crate::agent::event::{self, AgentEvent, EventSink, PieceKind, Pieces};
use crate::jsonrpc::{Outbox, Template};
use crate::sync::lock;

/// Sends a session's events to the client as `session/update` notifications.
pub struct AcpSink {
    /// Where frames go.
    outbox: Outbox,
    session_id: String,
    /// What the option list offers (for `config_option_update`).
    offer: Offer,
    /// The message the next chunks belong to.
    message: Mutex<Message>,
}

/// The current message: its id, and its chunk updates encoded once (`None` inside only if
/// the session id itself held the template's marker).
struct Message {
    id: String,
    chunks: Option<Option<ChunkTemplates>>,
}

struct ChunkTemplates {
    text: Template,
    thought: Template,
}

impl EventSink for AcpSink {
    fn emit(&self, event: AgentEvent) {
        let id = match &event {
            AgentEvent::MessageStart(id) => {
                *lock(&self.message) = Message { id: id.clone(), chunks: None };
                return;
            }
            AgentEvent::Settings(change) if change.mode_changed => {
                let current_mode_id = change.mode.clone();
                self.send(SessionUpdate::CurrentModeUpdate { current_mode_id });
                String::new()
            }
            // A notice is no part of the model's message: a message of its own.
            AgentEvent::Notice(_) => event::new_message_id(),
            _ => lock(&self.message).id.clone(),
        };
        if let Some(update) = update_of(event, &self.offer, &id) {
            self.send(update);
        }
    }

    fn emit_pieces(&self, pieces: &Pieces) {
        let mut message = lock(&self.message);
        if message.chunks.is_none() {
            message.chunks = Some(self.chunk_templates(&message.id));
        }
        let Some(Some(chunks)) = &message.chunks else {
            drop(message);
            return event::emit_each(self, pieces);
        };
        let (count, text) = pieces.size();
        let frame = chunks.text.overhead().max(chunks.thought.overhead()) + 2;
        let mut bytes = self.outbox.buffer(count * frame + text);
        for (kind, piece) in pieces.iter() {
            let template = match kind {
                PieceKind::Text => &chunks.text,
                PieceKind::Thought => &chunks.thought,
            };
            template.render(&mut bytes, piece);
        }
        drop(message);
        self.outbox.send_encoded(bytes, Some(&self.session_id));
    }
}

impl AcpSink {
    /// A sink for the session `session_id`.
    pub fn new(outbox: Outbox, session_id: String, offer: Offer) -> AcpSink {
        // Chunks before any `MessageStart` (none in practice) still name a message.
        let message = Message { id: event::new_message_id(), chunks: None };
        AcpSink { outbox, session_id, offer, message: Mutex::new(message) }
    }

    /// The chunk updates of the message `id`, serialised from the wire types with a hole
    /// for the text.
    fn chunk_templates(&self, id: &str) -> Option<ChunkTemplates> {
        let template = |event: AgentEvent| {
            let update = update_of(event, &self.offer, id)?;
            let params = SessionNotification { session_id: &self.session_id, update };
            Template::notification("session/update", &params)
        };
        Some(ChunkTemplates {
            text: template(AgentEvent::Text(Template::HOLE.to_string()))?,
            thought: template(AgentEvent::Thought(Template::HOLE.to_string()))?,
        })
    }

    fn send(&self, update: SessionUpdate) {
        let params = SessionNotification { session_id: &self.session_id, update };
        self.outbox.notify("session/update", &params, Some(&self.session_id));
    }
}
