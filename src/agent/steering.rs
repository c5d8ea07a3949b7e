//! Steering a running turn: what the user sent while it ran (ACP's `_session/steering`)
//! reaches the model at its next request, as a user message after the pending tool
//! results. The session keeps the inbox (`session/steering.rs`); the turn reads it through
//! `Steering`, like the journal through `Recorder`.

use super::{Turn, push};
use crate::history::ChatMessage;

/// What the user sent to a running turn, taken once.
pub trait Steering: Send + Sync {
    /// The messages sent since the last call, oldest first. With `ending` (the model has
    /// finished and nothing else will call it) and nothing waiting, the inbox closes: what
    /// comes later is no longer injected into this turn.
    fn steered(&self, ending: bool) -> Vec<ChatMessage>;
}

/// No inbox (sub-agents: what the user sends is for the parent).
pub struct NoSteering;

impl Steering for NoSteering {
    fn steered(&self, _ending: bool) -> Vec<ChatMessage> {
        Vec::new()
    }
}

/// Adds what the user sent to the history (recorded, so journalled and replayed);
/// whether there was anything.
pub(super) fn inject(turn: &Turn, history: &mut Vec<ChatMessage>, ending: bool) -> bool {
    let sent = turn.client.steering.steered(ending);
    let any = !sent.is_empty();
    for message in sent {
        log::info!("steering: a message joins the running turn");
        push(turn, history, message);
    }
    any
}
