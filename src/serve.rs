//! The one composition point: builds the shared services and wires them to a transport.
//! stdio runs one ACP engine on the process's stdin and stdout; HTTP gets a factory of
//! engines (one per ACP connection) and the session-scope check, so that neither transport
//! knows ACP or sessions.

use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::Receiver;

use crate::acp::AcpAgent;
use crate::cli::{AcpArgs, Transport};
use crate::config::{Config, Env, ProcessEnv};
use crate::error::{Error, Result};
use crate::jsonrpc::{self, Inbound, Outbox};
use crate::session::{Services, SessionId};
use crate::transport::http::{Engine, Engines};
use crate::{child, logging, sys, transport};

/// How long running prompts get to answer `cancelled` when the client goes away.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves ACP until the client goes away (stdio) or a SIGTERM/SIGINT (HTTP). `ready` gets
/// the URL the HTTP transport listens on.
pub fn serve_acp(args: &AcpArgs, ready: &mut dyn FnMut(&str)) -> Result<()> {
    // Before any other thread starts: descendants that daemonise come back to us.
    child::init();
    logging::init(args.debug, args.log_file.as_deref())?;
    let mut config = Config::from_env(&Flags { args, env: &ProcessEnv })?;
    config.with_rule_flags(&args.allowed_tools, &args.disallowed_tools)?;
    if args.transport == Transport::Http {
        // A token holder is not the user at the keyboard: what the client's MCP entries
        // may start and reach defaults to less than over stdio.
        config.mcp.over_http();
        // Nor is it the node's operator: `logout` would sign every other client out.
        config.logout_allowed = args.allow_remote_logout;
        transport::http::check_bind(
            &args.host,
            args.port,
            config.http_token.is_some(),
            &args.http,
        )?;
    }
    // Each open session holds two descriptors, each HTTP connection one.
    if let Err(err) = sys::raise_open_files_limit() {
        log::warn!("cannot raise the open files limit: {err}");
    }
    match &config.provider {
        Ok(p) => log::info!("provider {} at {} with model {}", p.preset, p.base_url, p.model),
        Err(why) => log::warn!("{why}"),
    }
    if args.transport == Transport::Http {
        let options = transport::http::Options {
            host: args.host.clone(),
            port: args.port,
            token: config.http_token.clone(),
            args: args.http.clone(),
        };
        let engines = Arc::new(AcpEngines {
            services: Arc::new(Services::new(config)?),
            health: std::sync::Mutex::default(),
        });
        let served = transport::http::serve(engines, options, ready);
        child::kill_descendants();
        return served;
    }
    let services = Arc::new(Services::new(config)?);
    let stdio = transport::stdio::start().map_err(Error::Stream)?;
    let mut agent = AcpAgent::new(services);
    jsonrpc::serve(&stdio.inbox, &stdio.outbox, &mut agent);
    log::info!("client closed stdin; shutting down");
    agent.shutdown(SHUTDOWN_GRACE);
    drop(agent);
    stdio.outbox.fail_pending();
    child::kill_descendants();
    stdio.finish(Duration::from_secs(2));
    Ok(())
}

/// The environment with `--session-store` and `--node-id` over it.
struct Flags<'a> {
    args: &'a AcpArgs,
    env: &'a dyn Env,
}

impl Env for Flags<'_> {
    fn get(&self, name: &str) -> Option<String> {
        let flag = match name {
            "IAC_CODE_SESSION_STORE" => self.args.session_store.clone(),
            "IAC_CODE_NODE_ID" => self.args.node_id.clone(),
            _ => None,
        };
        flag.or_else(|| self.env.get(name))
    }
}

/// ACP engines over shared services, for the HTTP transport.
struct AcpEngines {
    services: Arc<Services>,
    /// The last full `/health` answer and when it was made.
    health: std::sync::Mutex<Option<(std::time::Instant, (u16, serde_json::Value))>>,
}

impl Engines for AcpEngines {
    fn start(&self) -> Box<dyn Engine> {
        Box::new(AcpEngine(AcpAgent::new(Arc::clone(&self.services))))
    }

    fn session_scope(
        &self,
        raw: &str,
        owner: u64,
    ) -> std::result::Result<(String, bool), (u16, String)> {
        let id = SessionId::parse(raw).map_err(|err| (400, err.to_string()))?;
        let held = self.services.holder(&id) == Some(owner);
        Ok((id.to_string(), held))
    }

    fn health(&self, full: bool) -> (u16, String) {
        // `/health` needs no token: answered from a cache at most a second old, so that it
        // never opens a store connection per request.
        let (status, body) = {
            let mut cached = crate::sync::lock(&self.health);
            match cached.as_ref() {
                Some((at, answer)) if at.elapsed() < Duration::from_secs(1) => answer.clone(),
                _ => {
                    let answer = self.check_health();
                    *cached = Some((std::time::Instant::now(), answer.clone()));
                    answer
                }
            }
        };
        if full {
            return (status, body.to_string());
        }
        // Without the token: the status, and the node's name only if the operator gave it
        // (the default name holds the host name and the pid).
        let mut brief = serde_json::json!({ "status": body["status"] });
        if self.services.config.node_named {
            brief["node"] = body["node"].clone();
        }
        (status, brief.to_string())
    }
}

impl AcpEngines {
    fn check_health(&self) -> (u16, serde_json::Value) {
        let services = &self.services;
        // The kind only: `/health` needs no token, so the store's address stays out of it.
        let store = if services.store.name() == "file" { "file" } else { "redis" };
        let node = &services.config.node_id;
        let body = match services.store.health() {
            Ok(rtt) => serde_json::json!({"status": "ok", "node": node,
                "store": {"kind": store, "ok": true, "rttMicros": rtt.as_micros() as u64}}),
            Err(why) => serde_json::json!({"status": "unavailable", "node": node,
                "store": {"kind": store, "ok": false, "error": why}}),
        };
        let status = if body["status"] == "ok" { 200 } else { 503 };
        (status, body)
    }
}

/// One HTTP connection's ACP agent.
struct AcpEngine(AcpAgent);

impl Engine for AcpEngine {
    fn owner(&self) -> u64 {
        self.0.manager_id()
    }

    fn run(&mut self, inbox: &Receiver<Inbound>, outbox: &Outbox) {
        jsonrpc::serve(inbox, outbox, &mut self.0);
        self.0.shutdown(SHUTDOWN_GRACE);
    }
}
