//! `_session/steering`: a message for the session's running turn (`injected`: the model
//! reads it at its next request), or, when none runs, a new turn (`startedNewTurn`,
//! answered at once, as codex-acp does) unless the client asked for `promptRequired`.
//! A turn that steering started has no request to answer: its updates go out as a
//! prompt's do, and its end is a `session_info_update` whose `_meta.iacCode.turnEnded`
//! holds what a `session/prompt` would have answered (`stopReason`, `usage`) or the error.

use serde_json::{Value, json};

use super::dispatch::{AcpAgent, decode};
use super::error::rpc_error;
use super::setup::{Reply, to_reply};
use super::turns::{Done, prompt_result};
use super::types::{SessionNotification, SessionUpdate, SteeringRequest, SteeringResponse};
use crate::jsonrpc::{Outbox, Request, RpcError};
use crate::session::Steered;

/// The method.
pub(super) const METHOD: &str = "_session/steering";

impl AcpAgent {
    pub(super) fn steer(&mut self, request: &Request, outbox: &Outbox) -> Reply {
        let p: SteeringRequest = decode(METHOD, &request.params)?;
        let blocks = match p.prompt {
            Value::Array(blocks) => blocks,
            Value::String(text) => vec![json!({"type": "text", "text": text})],
            other => {
                return Err(RpcError::invalid_params(format!(
                    "{METHOD}: prompt must be an array of content blocks (or a string), got {other}"
                )));
            }
        };
        let (text, images) = self.prompt_content(&blocks);
        if text.trim().is_empty() && images.is_empty() {
            return Err(RpcError::invalid_params(format!("{METHOD}: the prompt is empty")));
        }
        let prompt_required = p.meta.as_ref().and_then(|m| m.pointer("/steering/idleBehavior"))
            == Some(&json!("promptRequired"));
        let steered = self.sessions.steer(&p.session_id, text.clone(), images.clone());
        let answer = |outcome, reason: Option<&str>| {
            to_reply(&SteeringResponse { outcome, reason: reason.map(str::to_string) })
        };
        match steered.map_err(|e| rpc_error(&e))? {
            Steered::Injected => answer("injected", None),
            Steered::Busy => answer(
                "failed",
                Some("the session is finishing its turn or running a command; send it again"),
            ),
            Steered::Idle if prompt_required => {
                answer("promptRequired", Some("no turn is running; send it as session/prompt"))
            }
            Steered::Idle => {
                let done = turn_ended(outbox.clone(), p.session_id.to_string());
                self.start_turn(&p.session_id, text, images, outbox, done)
                    .map_err(|e| rpc_error(&e))?;
                log::info!("session {}: steering started a new turn", p.session_id);
                answer("startedNewTurn", None)
            }
        }
    }
}

/// Tells the client how a turn started by steering ended.
fn turn_ended(outbox: Outbox, session_id: String) -> Done {
    Box::new(move |result| {
        let ended = match prompt_result(result) {
            Ok(response) => serde_json::to_value(&response).unwrap_or(Value::Null),
            Err(error) => json!({ "error": error }),
        };
        let update = SessionUpdate::SessionInfoUpdate {
            title: None,
            updated_at: None,
            meta: Some(json!({ "iacCode": { "turnEnded": ended } })),
        };
        let params = SessionNotification { session_id: &session_id, update };
        outbox.notify("session/update", &params, Some(&session_id));
    })
}
