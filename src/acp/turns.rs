//! The requests answered later, from their own thread: `session/prompt` (a turn) and
//! `session/load` (open and replay), both stoppable by `$/cancel_request`.

use std::sync::Arc;

use serde_json::json;

use super::client::AcpFiles;
use super::content::prompt_input;
use super::convert::AcpAsker;
use super::dispatch::{AcpAgent, Pending, decode};
use super::elicit::AcpQuestions;
use super::error::{rpc_error, turn_failed};
use super::setup::{self, Offer, Reply};
use super::sink::AcpSink;
use super::types::*;
use crate::agent::event::EventSink;
use crate::agent::{Outcome, StopReason};
use crate::cancel::CancelToken;
use crate::history::Image;
use crate::jsonrpc::{Outbox, Request, RpcError, code};
use crate::session::{Manager, PromptFailure, PromptIo, SessionId, replay};

impl AcpAgent {
    /// Loads a session on its own thread (a long replay must not hold the connection, and
    /// `$/cancel_request` can stop it): the whole conversation is replayed before the
    /// response, as ACP asks.
    pub(super) fn load(
        &mut self,
        p: LoadSessionRequest,
        request: &Request,
        outbox: &Outbox,
    ) -> Reply {
        let cancel = CancelToken::new();
        let key = request.id.to_string();
        crate::sync::lock(&self.running).insert(key.clone(), Pending::Load(cancel.clone()));
        let (sessions, running, outbox, owned) = (
            Arc::clone(&self.sessions),
            Arc::clone(&self.running),
            outbox.clone(),
            request.clone(),
        );
        let route = p.session_id.to_string();
        let offer = Offer::of(&self.sessions, self.client.boolean_options);
        let working = self.sessions.working();
        let spawned = std::thread::Builder::new().name("load".into()).spawn(move || {
            let _working = working;
            let reply = load_and_replay(&sessions, &p, (&owned, &outbox), &cancel, offer);
            crate::sync::lock(&running).remove(&key);
            match reply {
                Ok(Some(result)) => outbox.respond(&owned.id, &result, Some(&route)),
                Ok(None) => {}
                Err(error) => outbox.respond_error(Some(&owned.id), &error, Some(&route)),
            }
        });
        match spawned {
            Ok(_) => Ok(None),
            Err(err) => {
                crate::sync::lock(&self.running).remove(&request.id.to_string());
                Err(RpcError::internal(format!("cannot start the load: {err}")))
            }
        }
    }

    pub(super) fn prompt(&mut self, method: &str, request: &Request, outbox: &Outbox) -> Reply {
        let p: PromptRequest = decode(method, &request.params)?;
        let (text, images) = self.prompt_content(&p.prompt);
        let id = request.id.clone();
        let reply_outbox = outbox.clone();
        let session_id = p.session_id.to_string();
        let key = request.id.to_string();
        let running = Arc::clone(&self.running);
        let done: Done = Box::new(move |result| {
            crate::sync::lock(&running).remove(&key);
            let route = Some(session_id.as_str());
            match prompt_result(result) {
                Ok(response) => reply_outbox.respond(&id, &response, route),
                Err(error) => reply_outbox.respond_error(Some(&id), &error, route),
            }
        });
        let token = self
            .start_turn(&p.session_id, text, images, outbox, done)
            .map_err(|e| rpc_error(&e))?;
        // Its own token: a late `$/cancel_request` never reaches a later prompt.
        crate::sync::lock(&self.running)
            .entry(request.id.to_string())
            .or_insert(Pending::Prompt(token));
        Ok(None)
    }

    /// A prompt's text and images (those the model takes).
    pub(super) fn prompt_content(&self, blocks: &[serde_json::Value]) -> (String, Vec<Image>) {
        let images = self.sessions.services().config.provider.as_ref().is_ok_and(|p| p.images);
        prompt_input(blocks, images)
    }

    /// Starts a turn (or a slash command) whose events and questions go to this connection,
    /// `done` called with how it ended.
    pub(super) fn start_turn(
        &self,
        session: &SessionId,
        text: String,
        images: Vec<Image>,
        outbox: &Outbox,
        done: Done,
    ) -> crate::error::Result<CancelToken> {
        let session_id = session.to_string();
        let offer = Offer::of(&self.sessions, self.client.boolean_options);
        let asker = AcpAsker { outbox: outbox.clone(), session_id: session_id.clone() };
        let io = PromptIo {
            sink: Arc::new(AcpSink::new(outbox.clone(), session_id.clone(), offer)),
            asker: Arc::new(AcpQuestions { asker, form: self.client.elicit_form }),
            files: Arc::new(AcpFiles { outbox: outbox.clone(), session_id, caps: self.client }),
            done,
        };
        self.sessions.prompt(session, text, images, io)
    }
}

/// What a prompt calls with how it ended.
pub(super) type Done = Box<dyn FnOnce(Result<Outcome, PromptFailure>) + Send>;

/// The body of a `session/load`: open, replay (stopping at a cancel), answer.
fn load_and_replay(
    sessions: &Manager,
    p: &LoadSessionRequest,
    (request, outbox): (&Request, &Outbox),
    cancel: &CancelToken,
    offer: Offer,
) -> Reply {
    let extra = super::dispatch::directories(p.additional_directories.as_deref())?;
    let already_open = sessions.get(&p.session_id).is_ok();
    let (session, all, ids) = sessions.load(&p.session_id, &p.cwd).map_err(|e| rpc_error(&e))?;
    if let Some(extra) = extra {
        session.set_directories(extra);
    }
    if sessions.mcp_configured(&session, &p.mcp_servers) {
        sessions.attach_mcp(&session, &p.mcp_servers);
    }
    let services = sessions.services();
    let sink = AcpSink::new(outbox.clone(), session.id.to_string(), offer.clone());
    let (tools, dir) = (&services.tools, &services.config.config_dir);
    for event in replay::events(&all, &ids, tools, &session.root, dir) {
        if cancel.is_cancelled() {
            drop(session);
            // Only what this load opened is closed again.
            if !already_open {
                let _ = sessions.close(&p.session_id);
            }
            return Err(RpcError::new(code::REQUEST_CANCELLED, "Request cancelled", None));
        }
        sink.emit(event);
    }
    setup::opened(sessions, request, outbox, &session, (false, &offer))
}

pub(super) fn prompt_result(
    result: Result<Outcome, PromptFailure>,
) -> Result<PromptResponse, RpcError> {
    match result {
        Ok(outcome) => {
            let usage = outcome.usage;
            Ok(PromptResponse {
                stop_reason: match outcome.stop {
                    StopReason::EndTurn => "end_turn",
                    StopReason::MaxTokens => "max_tokens",
                    StopReason::MaxTurnRequests => "max_turn_requests",
                    StopReason::Refusal => "refusal",
                    StopReason::Cancelled => "cancelled",
                },
                usage: Usage {
                    total_tokens: usage.input + usage.output,
                    input_tokens: usage.full_input(),
                    output_tokens: usage.output,
                    thought_tokens: (usage.thought > 0).then_some(usage.thought),
                    cached_read_tokens: usage.cached_read,
                    cached_write_tokens: usage.cached_write,
                },
                meta: usage.estimated.then(|| json!({ "iacCode": { "usageEstimated": true } })),
            })
        }
        Err(PromptFailure::Provider(failure)) => Err(turn_failed(&failure)),
        Err(PromptFailure::Internal(what)) => Err(RpcError::internal(what)),
        Err(PromptFailure::Store { lease_lost: true, message }) => Err(RpcError::new(
            code::SESSION_BUSY,
            &message,
            Some(json!({ "reason": "lease_lost" })),
        )),
        Err(PromptFailure::Store { lease_lost: false, message }) => {
            Err(rpc_error(&crate::error::Error::Store(message)))
        }
    }
}
