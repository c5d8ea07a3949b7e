//! Per-connection ACP state and the method table: decodes params once, calls the session
//! manager, and answers. Prompts and loads answer later, from their own thread (`turns`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::client::ClientCaps;
use super::error::{bad_params, rpc_error};
use super::setup::{self, Reply, to_reply};
use super::types::*;
use crate::cancel::CancelToken;
use crate::gate::Mode;
use crate::jsonrpc::{self, Handler, Notification, Outbox, Request, RpcError};
use crate::session::{Directories, Manager, Services, Session, SessionId};

/// The ACP version we speak (and answer with, whatever the client asked for).
const PROTOCOL_VERSION: u16 = 1;

/// Sessions listed per page.
const LIST_PAGE: usize = 100;

/// The ACP agent of one connection.
pub struct AcpAgent {
    pub(super) sessions: Arc<Manager>,
    initialized: bool,
    /// Requests still running off the connection thread (prompts, loads), by request id:
    /// what `$/cancel_request` stops.
    pub(super) running: Arc<Mutex<HashMap<String, Pending>>>,
    /// What the client offers the tools (from `initialize`).
    pub(super) client: ClientCaps,
}

/// A request answered later, from another thread.
#[derive(Clone)]
pub(super) enum Pending {
    /// A prompt: cancelled like `session/cancel`, through its own token.
    Prompt(CancelToken),
    /// A load, stopped by its token.
    Load(CancelToken),
}

impl AcpAgent {
    /// An agent over shared services.
    pub fn new(services: Arc<Services>) -> AcpAgent {
        AcpAgent {
            sessions: Arc::new(Manager::new(services)),
            initialized: false,
            running: Arc::default(),
            client: ClientCaps::default(),
        }
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
            let detail = format!("{method} before initialize: send initialize first");
            let data = json!({ "reason": "not_initialized", "detail": detail });
            return Err(RpcError::new(
                jsonrpc::code::INVALID_REQUEST,
                "Invalid request",
                Some(data),
            ));
        }
        let params = &request.params;
        let sessions = &self.sessions;
        let offer = setup::Offer::of(sessions, self.client.boolean_options);
        let opened = |session, servers, with_id| {
            setup::opened_with_mcp(sessions, request, outbox, session, servers, (with_id, offer))
        };
        match method {
            "authenticate" => self.authenticate(request, outbox),
            "logout" => self.logout(),
            "session/new" => {
                self.after_logout()?;
                let p: NewSessionRequest = decode(method, params)?;
                let extra = directories(p.additional_directories.as_deref())?;
                let session = self.sessions.create(&p.cwd).map_err(|e| rpc_error(&e))?;
                if let Some(extra) = extra {
                    session.set_directories(extra);
                }
                opened(session, p.mcp_servers, true)
            }
            "session/load" => {
                let p: LoadSessionRequest = decode(method, params)?;
                self.load(p, request, outbox)
            }
            "session/resume" => {
                let p: LoadSessionRequest = decode(method, params)?;
                let extra = directories(p.additional_directories.as_deref())?;
                let session =
                    self.sessions.resume(&p.session_id, &p.cwd).map_err(|e| rpc_error(&e))?;
                if let Some(extra) = extra {
                    session.set_directories(extra);
                }
                opened(session, p.mcp_servers, false)
            }
            "session/fork" => {
                let p: LoadSessionRequest = decode(method, params)?;
                let extra = directories(p.additional_directories.as_deref())?;
                let session =
                    self.sessions.fork(&p.session_id, &p.cwd).map_err(|e| rpc_error(&e))?;
                if let Some(extra) = extra {
                    session.set_directories(extra);
                }
                opened(session, p.mcp_servers, true)
            }
            "session/delete" => {
                let p: SessionIdParams = decode(method, params)?;
                self.sessions.delete(&p.session_id).map_err(|e| rpc_error(&e))?;
                Ok(Some(json!({})))
            }
            "session/prompt" => {
                self.after_logout()?;
                self.prompt(method, request, outbox)
            }
            // `steering::METHOD`, named here so that dispatch imports nothing of it.
            "_session/steering" => self.steer(request, outbox),
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
        let allowed = self.sessions.services().config.client_tools;
        self.client = ClientCaps::of(&p.client_capabilities, allowed);
        log::info!("client offers: {:?}", self.client);
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
                mcp_capabilities: McpCapabilities { http: true, sse: true },
                session_capabilities: SessionCapabilities {
                    list: Some(Empty {}),
                    close: Some(Empty {}),
                    resume: Some(Empty {}),
                    fork: Some(Empty {}),
                    delete: Some(Empty {}),
                    additional_directories: Some(Empty {}),
                },
                auth: AgentAuthCapabilities { logout: self.logout_allowed().then_some(Empty {}) },
            },
            agent_info: Implementation {
                name: "iac-code",
                title: "IaC Code",
                version: env!("CARGO_PKG_VERSION"),
            },
            auth_methods: self.auth_methods(&p.client_capabilities),
            // `iacCode.cwd`: where the server runs, the web page's first directory;
            // `iacCode.sandbox`: which layers of the OS sandbox hold commands here.
            meta: Some(json!({
                "steering": { "supported": true },
                "iacCode": {
                    "cwd": std::env::current_dir().ok().map(|d| d.display().to_string()),
                    "sandbox": crate::child::sandbox().meta(),
                },
            })),
        })
    }

    fn list(&mut self, method: &str, params: &Value) -> Reply {
        let p: ListSessionsRequest = decode(method, params)?;
        let all = self.sessions.list(p.cwd.as_deref()).map_err(|e| rpc_error(&e))?;
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
                additional_directories: s.additional_directories.clone(),
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
        let offer = setup::Offer::of(&self.sessions, self.client.boolean_options);
        let text = || {
            p.value.as_str().ok_or_else(|| {
                let detail = format!(
                    "value of '{}' must be a string value id, got {}",
                    p.config_id, p.value
                );
                RpcError::invalid_params(detail)
            })
        };
        match p.config_id.as_str() {
            "mode" => set_mode(&session, text()?)?,
            "model" => self.set_model(&session, text()?)?,
            "thinking" if offer.thinking => {
                let on = super::toggle::on_off("thinking", &p.value)?;
                crate::sync::lock(&session.settings).thinking = on;
                log::info!("session {}: thinking {}", session.id, if on { "on" } else { "off" });
            }
            other => {
                let known = if offer.thinking {
                    "'mode', 'model' or 'thinking'"
                } else {
                    "'mode' or 'model'"
                };
                let detail = format!("unknown config option '{other}': expected {known}");
                return Err(RpcError::invalid_params(detail));
            }
        }
        to_reply(&SetSessionConfigOptionResponse {
            config_options: setup::session_options(&session, &offer),
        })
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
            // A pending prompt is cancelled like `session/cancel` (it answers `cancelled`); a
            // pending load stops and answers -32800. Unknown ids are ignored.
            "$/cancel_request" => {
                let id = notification.params.get("requestId").map(|v| match v {
                    Value::String(s) => format!("{s:?}"),
                    other => other.to_string(),
                });
                let pending = id.and_then(|id| crate::sync::lock(&self.running).get(&id).cloned());
                match pending {
                    Some(Pending::Prompt(token)) => token.cancel(),
                    Some(Pending::Load(token)) => token.cancel(),
                    None => log::debug!("$/cancel_request for no pending request"),
                }
            }
            // Unknown (including `_`-prefixed) notifications need no answer.
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

/// The additional directories a request names, checked (`None`: it names none).
pub(super) fn directories(dirs: Option<&[String]>) -> Result<Option<Directories>, RpcError> {
    dirs.map(Directories::check).transpose().map_err(|e| rpc_error(&e))
}

pub(super) fn decode<T: DeserializeOwned>(method: &str, params: &Value) -> Result<T, RpcError> {
    let params = if params.is_null() { Value::Object(Default::default()) } else { params.clone() };
    serde_json::from_value(params).map_err(|err| bad_params(method, &err))
}
