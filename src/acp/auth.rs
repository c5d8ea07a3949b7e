//! Signing in from the editor. `initialize` offers an `agent` method (`iac-code-provider`:
//! `authenticate` sends the configured provider a one-token request, on its own thread,
//! and answers `{}` or -32000 saying how to sign in) and, to a client that sent
//! `clientCapabilities.auth.terminal: true`, a `terminal` method the client runs as our
//! command with `--login` appended (`iac-code acp --login` is `iac-code login`). `logout`
//! removes the stored credentials (`config::login::clear`); until a later `authenticate`
//! succeeds, `session/new` and `session/prompt` answer -32000. Over HTTP `logout` is
//! neither offered nor done unless the server was started with `--allow-remote-logout`
//! (`Config.logout_allowed`): a token holder would sign the node out for every client.
//!
//! A running agent keeps the provider it started with: after a sign-in elsewhere that
//! changed it, `authenticate` says to restart (reconnect), as ACP's terminal sign-in has
//! clients do anyway.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use super::dispatch::{AcpAgent, decode};
use super::error::auth_required;
use super::setup::Reply;
use super::types::{AuthMethod, AuthenticateRequest};
use crate::cancel::CancelToken;
use crate::config::{Config, Env, ProcessEnv, ProviderConfig};
use crate::jsonrpc::{Outbox, Request, RpcError, code};
use crate::provider::probe;
use crate::session::Services;

/// The `agent` method: check the configured provider.
pub(super) const PROVIDER_METHOD: &str = "iac-code-provider";
/// The `terminal` method: `iac-code login` in the client's terminal.
pub(super) const TERMINAL_METHOD: &str = "iac-code-login";
/// What the client appends to our command for the terminal method.
const TERMINAL_ARGS: &[&str] = &["--login"];

/// Whether the client runs terminal sign-ins (`clientCapabilities.auth.terminal`).
fn terminal_offered(capabilities: &Value) -> bool {
    capabilities["auth"]["terminal"].as_bool() == Some(true)
}

/// The methods `initialize` offers.
fn methods(services: &Services, terminal: bool) -> Vec<AuthMethod> {
    let description = match &services.config.provider {
        Ok(p) => format!(
            "Checks that the configured provider answers: {} at {}, model {}.",
            p.preset, p.base_url, p.model
        ),
        Err(why) => {
            let mut why = why.clone();
            if let Some(first) = why.get_mut(..1) {
                first.make_ascii_uppercase();
            }
            format!("{why}.")
        }
    };
    let mut methods = vec![AuthMethod {
        id: PROVIDER_METHOD,
        name: "LLM provider".into(),
        description: Some(description),
        kind: None,
        args: Vec::new(),
    }];
    if terminal {
        methods.push(AuthMethod {
            id: TERMINAL_METHOD,
            name: "Sign in to an LLM provider".into(),
            description: Some(
                "Runs `iac-code login` in a terminal: choose a provider, enter its base URL, \
                 model and API key; they are tested and saved to settings.json."
                    .into(),
            ),
            kind: Some("terminal"),
            args: TERMINAL_ARGS.to_vec(),
        });
    }
    methods
}

impl AcpAgent {
    /// The methods `initialize` offers a client with these capabilities.
    pub(super) fn auth_methods(&self, capabilities: &Value) -> Vec<AuthMethod> {
        methods(self.sessions.services(), terminal_offered(capabilities))
    }

    /// The answer to a request that needs a sign-in after `logout`, if one is needed.
    pub(super) fn after_logout(&self) -> Result<(), RpcError> {
        if self.sessions.services().signed_out.load(Ordering::SeqCst) {
            return Err(auth_required("signed out (logout)", "signed_out"));
        }
        Ok(())
    }

    /// `authenticate`: the agent method is checked on its own thread (a provider may take
    /// seconds to answer, and the connection thread never waits).
    pub(super) fn authenticate(&self, request: &Request, outbox: &Outbox) -> Reply {
        let p: AuthenticateRequest = decode("authenticate", &request.params)?;
        match p.method_id.as_str() {
            PROVIDER_METHOD => {}
            TERMINAL_METHOD => {
                return Err(RpcError::invalid_params(format!(
                    "{TERMINAL_METHOD} is a terminal method: the client runs our command with \
                     {TERMINAL_ARGS:?} and reconnects; it is not passed to authenticate"
                )));
            }
            other => {
                return Err(RpcError::invalid_params(format!(
                    "unknown auth method '{other}': expected {PROVIDER_METHOD}"
                )));
            }
        }
        let sessions = Arc::clone(&self.sessions);
        let (outbox, owned) = (outbox.clone(), request.clone());
        let working = self.sessions.working();
        let spawned = std::thread::Builder::new().name("authenticate".into()).spawn(move || {
            let _working = working;
            let services = sessions.services();
            match check(services) {
                Ok(()) => {
                    services.signed_out.store(false, Ordering::SeqCst);
                    outbox.respond(&owned.id, &json!({}), None);
                }
                Err(error) => outbox.respond_error(Some(&owned.id), &error, None),
            }
        });
        match spawned {
            Ok(_) => Ok(None),
            Err(err) => Err(RpcError::internal(format!("cannot start the check: {err}"))),
        }
    }

    /// Whether `logout` is offered and done (`agentCapabilities.auth.logout`).
    pub(super) fn logout_allowed(&self) -> bool {
        self.sessions.services().config.logout_allowed
    }

    /// `logout`: the stored credentials go; new sessions and prompts need a sign-in.
    pub(super) fn logout(&self) -> Reply {
        if !self.logout_allowed() {
            return Err(logout_disabled());
        }
        let services = self.sessions.services();
        let env = InDir { dir: services.config.config_dir.clone() };
        let cleared = crate::config::login::clear(&env)
            .map_err(|err| RpcError::internal(format!("cannot remove the credentials: {err}")))?;
        services.signed_out.store(true, Ordering::SeqCst);
        log::info!("logout: removed {:?} from {}", cleared.removed, cleared.path.display());
        Ok(Some(json!({})))
    }
}

/// `logout` on a server that does not allow it: -32601 (not available here), `data.reason`
/// `logout_disabled`.
fn logout_disabled() -> RpcError {
    RpcError::new(
        code::METHOD_NOT_FOUND,
        "logout is disabled on this server: over HTTP it would remove the node's stored \
         credentials for every client; the node's operator runs `iac-code logout` on the \
         node, or starts the server with --allow-remote-logout",
        Some(json!({ "reason": "logout_disabled" })),
    )
}

/// The configuration as it is now on disk and in the environment, against the provider
/// this agent runs with: both the same and answering the one-token request is a sign-in.
fn check(services: &Services) -> Result<(), RpcError> {
    let env = InDir { dir: services.config.config_dir.clone() };
    let now = Config::from_env(&env)
        .map_err(|err| auth_required(&err.to_string(), "bad_configuration"))?
        .provider
        .map_err(|why| auth_required(&why, "provider_not_configured"))?;
    let running = match &services.config.provider {
        Ok(running) if same(running, &now) => running,
        _ => {
            return Err(auth_required(
                &format!(
                    "the provider is now {} at {} (model {}), but this agent started with \
                     other settings: restart the agent (reconnect) to use it",
                    now.preset, now.base_url, now.model
                ),
                "restart_required",
            ));
        }
    };
    probe::one_token(running, &CancelToken::new()).map_err(|failure| {
        let mut error = auth_required(
            &format!(
                "{} at {} did not accept a one-token request ({}): {failure}",
                running.preset,
                running.base_url,
                failure.kind.id()
            ),
            "provider_error",
        );
        error.data = Some(json!({ "reason": "provider_error", "kind": failure.kind.id() }));
        error
    })
}

fn same(a: &ProviderConfig, b: &ProviderConfig) -> bool {
    (a.preset, &a.base_url, &a.model, &a.api_key) == (b.preset, &b.base_url, &b.model, &b.api_key)
}

/// The process environment with this agent's config dir.
struct InDir {
    dir: PathBuf,
}

impl Env for InDir {
    fn get(&self, name: &str) -> Option<String> {
        match name {
            "IAC_CODE_CONFIG_DIR" => Some(self.dir.display().to_string()),
            other => ProcessEnv.get(other),
        }
    }
}
