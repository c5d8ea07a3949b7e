//! Per-connection ACP state and the method table: decodes params once, calls the session
//! manager, and answers. Prompts answer later, from their own thread.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::content::prompt_input;
use super::convert::{AcpAsker, AcpSink};
use super::error::{bad_params, rpc_error, turn_failed};
use super::types::*;
use crate::agent::event::EventSink;
use crate::agent::{Outcome, StopReason};
use crate::jsonrpc::{Handler, Notification, Outbox, Request, RpcError};
use crate::permission::Mode;
use crate::session::{Manager, PromptFailure, PromptIo, Services, Session, SessionId, replay};

/// The ACP version we speak (and answer with, whatever the client asked for).
const PROTOCOL_VERSION: u16 = 1;

/// Sessions listed per page.
const LIST_PAGE: usize = 100;

/// The ACP agent of one connection.
pub struct AcpAgent {
    pub(super) sessions: Manager,
    initialized: bool,
}

pub(super) type Reply = Result<Option<Value>, RpcError>;

impl AcpAgent {
    /// An agent over shared services.
    pub fn new(services: Arc<Services>) -> AcpAgent {
        AcpAgent { sessions: Manager::new(services), initialized: false }
    }

    /// The id of this connection's session manager.
    pub fn manager_id(&self) -> u64 {
        self.sessions.id()
    }

    /// Cancels running prompts and waits (bounded) for them to answer.
    pub fn shutdown(&self, deadline: Duration) {
        self.sessions.shutdown(deadline);
    }

    fn dispatch(&mut self, request: &Request, outbox: &Outbox) -> Reply {
        let method = request.method.as_str();
        if method == "initialize" {
            return self.initialize(method, &request.params);
        }
        if !self.initialized {
            return Err(RpcError::invalid_request(format!(
                "{method} before initialize: send initialize first"
            )));
        }
        let params = &request.params;
        match method {
            "authenticate" => Ok(Some(json!({}))),
            "session/new" => {
                let p: NewSessionRequest = decode(method, params)?;
                warn_mcp(&p.mcp_servers);
                let session = self.sessions.create(&p.cwd).map_err(|e| rpc_error(&e))?;
                self.opened(request, outbox, &session, true)
            }
            "session/load" => {
                let p: LoadSessionRequest = decode(method, params)?;
                warn_mcp(&p.mcp_servers);
                let (session, all) =
                    self.sessions.load(&p.session_id, &p.cwd).map_err(|e| rpc_error(&e))?;
                // ACP: the whole conversation is replayed before the response.
                let services = self.sessions.services();
                let sink = AcpSink {
                    outbox: outbox.clone(),
                    session_id: session.id.to_string(),
                    models: services.models(),
                };
                for event in replay::events(
                    &all,
                    &services.tools,
                    &session.root,
                    &services.config.config_dir,
                ) {
                    sink.emit(event);
                }
                self.opened(request, outbox, &session, false)
            }
            "session/resume" => {
                let p: LoadSessionRequest = decode(method, params)?;
                let session =
                    self.sessions.resume(&p.session_id, &p.cwd).map_err(|e| rpc_error(&e))?;
                self.opened(request, outbox, &session, false)
            }
            "session/fork" => {
                let p: LoadSessionRequest = decode(method, params)?;
                let session =
                    self.sessions.fork(&p.session_id, &p.cwd).map_err(|e| rpc_error(&e))?;
                self.opened(request, outbox, &session, true)
            }
            "session/delete" => {
                let p: SessionIdParams = decode(method, params)?;
                self.sessions.delete(&p.session_id).map_err(|e| rpc_error(&e))?;
                Ok(Some(json!({})))
            }
            "session/prompt" => self.prompt(method, request, outbox),
            "session/cancel" => {
                let p: SessionIdParams = decode(method, params)?;
                self.sessions.cancel(&p.session_id);
                Ok(Some(json!({})))
            }
            "session/close" => {
                let p: SessionIdParams = decode(method, params)?;
                self.sessions.close(&p.session_id).map_err(|e| rpc_error(&e))?;
                Ok(Some(json!({})))
            }
            "session/list" | "sessions/list" => self.list(method, params),
            "session/set_mode" => {
                let p: SetSessionModeRequest = decode(method, params)?;
                let session = self.session(&p.session_id)?;
                set_mode(&session, &p.mode_id)?;
                Ok(Some(json!({})))
            }
            "session/set_config_option" | "config/set" => self.set_config_option(method, params),
            "session/set_model" => {
                let p: SetSessionModelRequest = decode(method, params)?;
                let session = self.session(&p.session_id)?;
                self.set_model(&session, &p.model_id)?;
                Ok(Some(json!({})))
            }
            _ => Err(RpcError::method_not_found(method)),
        }
    }

    fn initialize(&mut self, method: &str, params: &Value) -> Reply {
        let p: InitializeRequest = decode(method, params)?;
        let asked = match &p.protocol_version {
            Value::Number(n) if n.as_u64().is_some() => n.to_string(),
            // Lenient like the official Rust crate: "1" is 1; anything else gets our version.
            Value::String(text) => {
                match text.trim().parse::<u64>() {
                    Ok(_) => log::warn!(
                        "initialize: protocolVersion {text:?} is a string; read as a number"
                    ),
                    Err(_) => log::warn!(
                        "initialize: protocolVersion {text:?} is not a number; answering with \
                         version {PROTOCOL_VERSION}"
                    ),
                }
                text.trim().to_string()
            }
            other => {
                return Err(RpcError::invalid_params(format!(
                    "protocolVersion must be an integer, got {other}"
                )));
            }
        };
        log::info!(
            "initialize: client asks protocol {}, client {}",
            asked,
            p.client_info
                .as_ref()
                .and_then(|i| i.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("?")
        );
        self.initialized = true;
        to_reply(&InitializeResponse {
            protocol_version: PROTOCOL_VERSION,
            agent_capabilities: AgentCapabilities {
                load_session: true,
                prompt_capabilities: PromptCapabilities {
                    image: self
                        .sessions
                        .services()
                        .config
                        .provider
                        .as_ref()
                        .is_ok_and(|p| p.images),
                    audio: false,
                    embedded_context: true,
                },
                mcp_capabilities: McpCapabilities { http: false, sse: false },
                session_capabilities: SessionCapabilities {
                    list: Some(Empty {}),
                    close: Some(Empty {}),
                    resume: Some(Empty {}),
                    fork: Some(Empty {}),
                    delete: Some(Empty {}),
                },
            },
            agent_info: Implementation {
                name: "iac-code",
                title: "IaC Code",
                version: env!("CARGO_PKG_VERSION"),
            },
            auth_methods: Vec::new(),
        })
    }

    fn prompt(&mut self, method: &str, request: &Request, outbox: &Outbox) -> Reply {
        let p: PromptRequest = decode(method, &request.params)?;
        let images = self.sessions.services().config.provider.as_ref().is_ok_and(|p| p.images);
        let (text, images) = prompt_input(&p.prompt, images);
        let id = request.id.clone();
        let reply_outbox = outbox.clone();
        let session_id = p.session_id.to_string();
        let io = PromptIo {
            sink: Arc::new(AcpSink {
                outbox: outbox.clone(),
                session_id: session_id.clone(),
                models: self.sessions.services().models(),
            }),
            asker: Arc::new(AcpAsker { outbox: outbox.clone(), session_id: session_id.clone() }),
            done: Box::new(move |result| {
                let route = Some(session_id.as_str());
                match prompt_result(result) {
                    Ok(response) => reply_outbox.respond(&id, &response, route),
                    Err(error) => reply_outbox.respond_error(Some(&id), &error, route),
                }
            }),
        };
        self.sessions.prompt(&p.session_id, text, images, io).map_err(|e| rpc_error(&e))?;
        Ok(None)
    }

    fn list(&mut self, method: &str, params: &Value) -> Reply {
        let p: ListSessionsRequest = decode(method, params)?;
        let all = self.sessions.list(p.cwd.as_deref());
        let start = match p.cursor.as_deref() {
            None => 0,
            Some(cursor) => cursor
                .strip_prefix("offset:")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| *n <= all.len())
                .ok_or_else(|| RpcError::invalid_params(format!("invalid cursor '{cursor}'")))?,
        };
        let end = (start + LIST_PAGE).min(all.len());
        let sessions = all[start..end]
            .iter()
            .map(|s| SessionInfo {
                session_id: s.id.clone(),
                cwd: s.cwd.clone(),
                title: s.title.clone(),
                updated_at: s.updated_at.clone(),
                meta: json!({ "messageCount": s.messages }),
            })
            .collect();
        let next_cursor = (end < all.len()).then(|| format!("offset:{end}"));
        to_reply(&ListSessionsResponse { sessions, next_cursor })
    }

    fn set_config_option(&mut self, method: &str, params: &Value) -> Reply {
        let p: SetSessionConfigOptionRequest = decode(method, params)?;
        let session = self.session(&p.session_id)?;
        let Some(value) = p.value.as_str() else {
            let detail =
                format!("value of '{}' must be a string value id, got {}", p.config_id, p.value);
            return Err(RpcError::invalid_params(detail));
        };
        match p.config_id.as_str() {
            "mode" => set_mode(&session, value)?,
            "model" => self.set_model(&session, value)?,
            other => {
                let detail = format!("unknown config option '{other}': expected 'mode' or 'model'");
                return Err(RpcError::invalid_params(detail));
            }
        }
        to_reply(&SetSessionConfigOptionResponse { config_options: self.config_options(&session) })
    }

    fn set_model(&self, session: &Session, model: &str) -> Result<(), RpcError> {
        let models = self.sessions.services().models();
        if !models.iter().any(|m| m == model) {
            let detail =
                format!("unknown model '{model}': available models are {}", models.join(", "));
            return Err(RpcError::invalid_params(detail));
        }
        session.set_model(model);
        log::info!("session {}: model set to {model}", session.id);
        Ok(())
    }

    fn session(&self, id: &SessionId) -> Result<Arc<Session>, RpcError> {
        self.sessions.get(id).map_err(|e| rpc_error(&e))
    }
}

impl Handler for AcpAgent {
    fn request(&mut self, request: Request, outbox: &Outbox) {
        // Frames go to the session's stream under its canonical id.
        let route = request
            .params
            .get("sessionId")
            .and_then(Value::as_str)
            .and_then(|id| SessionId::parse(id).ok())
            .map(|id| id.to_string());
        match self.dispatch(&request, outbox) {
            Ok(Some(result)) => outbox.respond(&request.id, &result, route.as_deref()),
            Ok(None) => {}
            Err(error) => {
                log::debug!("{} failed: {}", request.method, error.message);
                outbox.respond_error(Some(&request.id), &error, route.as_deref());
            }
        }
    }

    fn notification(&mut self, notification: Notification, _outbox: &Outbox) {
        match notification.method.as_str() {
            "session/cancel" => {
                match decode::<SessionIdParams>("session/cancel", &notification.params) {
                    Ok(p) => self.sessions.cancel(&p.session_id),
                    Err(err) => log::warn!("ignoring session/cancel: {}", err.message),
                }
            }
            // `$/cancel_request` and unknown (including `_`-prefixed) notifications need no
            // answer; there is nothing to undo for them.
            other => log::debug!("ignoring notification {other}"),
        }
    }
}

fn set_mode(session: &Session, mode_id: &str) -> Result<(), RpcError> {
    let Some(mode) = Mode::from_id(mode_id) else {
        let ids: Vec<&str> = Mode::ALL.iter().map(|m| m.id()).collect();
        let detail = format!("unknown mode '{mode_id}': expected one of {}", ids.join(", "));
        return Err(RpcError::invalid_params(detail));
    };
    session.set_mode(mode);
    log::info!("session {}: mode set to {mode_id}", session.id);
    Ok(())
}

fn prompt_result(result: Result<Outcome, PromptFailure>) -> Result<PromptResponse, RpcError> {
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
                    input_tokens: usage.input,
                    output_tokens: usage.output,
                },
                meta: usage.estimated.then(|| json!({ "iacCode": { "usageEstimated": true } })),
            })
        }
        Err(PromptFailure::Provider(failure)) => Err(turn_failed(&failure)),
        Err(PromptFailure::Internal(what)) => Err(RpcError::internal(what)),
    }
}

fn warn_mcp(servers: &[Value]) {
    if !servers.is_empty() {
        log::warn!("{} MCP server(s) given; MCP is not supported yet, ignoring", servers.len());
    }
}

fn decode<T: DeserializeOwned>(method: &str, params: &Value) -> Result<T, RpcError> {
    let params = if params.is_null() { Value::Object(Default::default()) } else { params.clone() };
    serde_json::from_value(params).map_err(|err| bad_params(method, &err))
}

pub(super) fn to_reply<T: Serialize>(value: &T) -> Reply {
    serde_json::to_value(value).map(Some).map_err(|err| RpcError::internal(err.to_string()))
}
