//! Answers to the requests that open a session (new, load, resume, fork): modes, config
//! options, models, then the slash commands; and the option list `set_config_option`
//! returns.

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};

use super::types::*;
use crate::gate::Mode;
use crate::jsonrpc::{Outbox, Request, RpcError};
use crate::session::{Manager, Session, available};
use crate::sync::lock;

/// What a method answers now: a result, nothing yet (answered later), or an error.
pub(super) type Reply = Result<Option<Value>, RpcError>;

pub(super) fn to_reply<T: Serialize>(value: &T) -> Reply {
    serde_json::to_value(value).map(Some).map_err(|err| RpcError::internal(err.to_string()))
}

/// Answers a request that opened a session (new, load, resume, fork) with the session's
/// modes, options (as `offer` has them) and models, then announces the slash commands:
/// after the response, so that the client knows the session id.
pub(super) fn opened(
    sessions: &Manager,
    request: &Request,
    outbox: &Outbox,
    session: &Session,
    (with_id, offer): (bool, &Offer),
) -> Reply {
    let (current_mode_id, current_model) = {
        let s = lock(&session.settings);
        (s.mode.id().to_string(), s.model.clone())
    };
    let models = sessions.services().models();
    let response = to_reply(&NewSessionResponse {
        session_id: with_id.then(|| session.id.to_string()),
        modes: SessionModeState {
            current_mode_id,
            available_modes: Mode::ALL
                .iter()
                .map(|m| SessionMode {
                    id: m.id().into(),
                    name: m.name().into(),
                    description: m.description().into(),
                })
                .collect(),
        },
        config_options: session_options(session, offer),
        models: SessionModelState {
            current_model_id: current_model,
            available_models: models
                .iter()
                .map(|m| ModelInfo {
                    model_id: m.clone(),
                    name: m.clone(),
                    description: model_description(sessions),
                })
                .collect(),
        },
        meta: mcp_meta(session),
    })?
    .unwrap_or_default();
    let route = Some(session.id.as_str());
    // A response that mints a session id goes to the connection's stream (the client
    // cannot have a stream for that session yet); load and resume stay with the session.
    outbox.respond(&request.id, &response, if with_id { None } else { route });
    let commands = available(sessions.services(), session)
        .into_iter()
        .map(|(name, description, hint)| AvailableCommand {
            name,
            description,
            input: hint.map(|hint| CommandInput { hint }),
        })
        .collect();
    let update = SessionUpdate::AvailableCommandsUpdate { available_commands: commands };
    outbox.notify(
        "session/update",
        &SessionNotification { session_id: session.id.as_str(), update },
        route,
    );
    Ok(None)
}

/// Opens a session's MCP servers, then answers as `opened` does. With servers to start,
/// both happen on a thread of their own (the connection thread never waits for a server);
/// the answer waits at most the connect timeout.
pub(super) fn opened_with_mcp(
    sessions: &Arc<Manager>,
    request: &Request,
    outbox: &Outbox,
    session: Arc<Session>,
    entries: Vec<Value>,
    (with_id, offer): (bool, Offer),
) -> Reply {
    if !sessions.mcp_configured(&session, &entries) {
        return opened(sessions, request, outbox, &session, (with_id, &offer));
    }
    let (sessions, request, outbox) = (Arc::clone(sessions), request.clone(), outbox.clone());
    let working = sessions.working();
    let spawned = std::thread::Builder::new().name("mcp-open".into()).spawn(move || {
        let _working = working;
        sessions.attach_mcp(&session, &entries);
        let route = (!with_id).then(|| session.id.to_string());
        if let Err(error) = opened(&sessions, &request, &outbox, &session, (with_id, &offer)) {
            outbox.respond_error(Some(&request.id), &error, route.as_deref());
        }
    });
    spawned
        .map(|_| None)
        .map_err(|err| RpcError::internal(format!("cannot open MCP servers: {err}")))
}

/// The session's MCP servers for the response's `_meta`.
fn mcp_meta(session: &Session) -> Option<Value> {
    let servers = session.mcp.status();
    if servers.is_empty() {
        return None;
    }
    let servers: Vec<Value> = servers
        .into_iter()
        .map(|s| {
            let transport = s.transport.map_or("", |t| t.id());
            let origin = s.origin.map_or("", |o| o.id());
            let mut server = json!({"name": s.name, "transport": transport,
                   "status": s.state.id(), "tools": s.tools, "error": s.error, "origin": origin});
            if !s.left_out.is_empty() {
                server["leftOut"] = json!(s.left_out);
            }
            server
        })
        .collect();
    Some(json!({ "iacCode": { "mcpServers": servers } }))
}

fn model_description(sessions: &Manager) -> String {
    match &sessions.services().config.provider {
        Ok(p) => format!("via {} at {}", p.preset, p.base_url),
        Err(_) => String::new(),
    }
}

/// What the option list depends on beyond a session's settings.
#[derive(Debug, Clone, Default)]
pub(crate) struct Offer {
    /// The models offered.
    pub models: Vec<String>,
    /// Whether thinking can be switched (the provider's configuration asks for reasoning).
    pub thinking: bool,
    /// Whether the client takes boolean options
    /// (`clientCapabilities.session.configOptions.boolean`); else on/off is a select.
    pub boolean: bool,
}

impl Offer {
    /// The offer of this server to a client that does (`boolean`) or does not take boolean
    /// options.
    pub fn of(sessions: &Manager, boolean: bool) -> Offer {
        let services = sessions.services();
        let thinking = services.config.provider.as_ref().is_ok_and(|p| match p.api {
            crate::config::ApiKind::AnthropicMessages => p.thinking_budget.is_some_and(|b| b > 0),
            crate::config::ApiKind::OpenAiChat => p.reasoning_effort.is_some(),
        });
        Offer { models: services.models(), thinking, boolean }
    }
}

/// A session's selectors as they stand.
pub(super) fn session_options(session: &Session, offer: &Offer) -> Vec<SessionConfigOption> {
    let s = lock(&session.settings);
    config_options(s.mode, &s.model, s.thinking, offer)
}

/// The selectors, as `session/new` and `config_option_update` send them: mode, model, and
/// thinking where it can be switched.
pub(super) fn config_options(
    mode: Mode,
    model: &str,
    thinking: bool,
    offer: &Offer,
) -> Vec<SessionConfigOption> {
    let mut options = vec![
        SessionConfigOption {
            id: "mode".into(),
            name: "Mode".into(),
            description: "How much the agent may do without asking".into(),
            category: "mode".into(),
            kind: "select",
            current_value: Value::String(mode.id().into()),
            options: Some(
                Mode::ALL
                    .iter()
                    .map(|m| SessionConfigSelectOption {
                        value: m.id().into(),
                        name: m.name().into(),
                        description: Some(m.description().into()),
                    })
                    .collect(),
            ),
        },
        SessionConfigOption {
            id: "model".into(),
            name: "Model".into(),
            description: "The model used for the next request".into(),
            category: "model".into(),
            kind: "select",
            current_value: Value::String(model.to_string()),
            options: Some(
                offer
                    .models
                    .iter()
                    .map(|m| SessionConfigSelectOption {
                        value: m.clone(),
                        name: m.clone(),
                        description: None,
                    })
                    .collect(),
            ),
        },
    ];
    if offer.thinking {
        options.push(super::toggle::thinking(thinking, offer.boolean));
    }
    options
}
