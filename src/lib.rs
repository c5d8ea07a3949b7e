//! iac-code: an AI coding agent for infrastructure-as-code that speaks the Agent Client
//! Protocol. `main.rs` is a thin entry; everything testable lives here.

pub mod acp;
pub mod agent;
pub mod cancel;
pub mod child;
pub mod cli;
pub mod commands;
pub mod config;
pub mod error;
pub mod history;
pub mod jsonrpc;
pub mod logging;
pub mod permission;
pub mod provider;
pub mod session;
pub mod sync;
mod sys;
pub mod time;
pub mod tools;
pub mod transport;

use std::sync::Arc;
use std::time::Duration;

use cli::{AcpArgs, Transport};
use config::{Config, ProcessEnv};
use error::{Error, Result};


/// How long running prompts get to answer `cancelled` when the client goes away.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves ACP until the client goes away (stdio) or a SIGTERM/SIGINT (HTTP). `ready` gets
/// the URL the HTTP transport listens on.
pub fn serve_acp(args: &AcpArgs, ready: &mut dyn FnMut(&str)) -> Result<()> {
    // Before any other thread starts: descendants that daemonise come back to us.
    child::init();
    logging::init(args.debug, args.log_file.as_deref())?;
    let config = Config::from_env(&ProcessEnv)?;
    if args.transport == Transport::Http {
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
        let services = Arc::new(session::Services::new(config));
        let served = transport::http::serve(services, options, ready);
        child::kill_descendants();
        return served;
    }
    let services = Arc::new(session::Services::new(config));
    let stdio = transport::stdio::start().map_err(Error::Stream)?;
    let mut agent = acp::AcpAgent::new(services);
    jsonrpc::serve(&stdio.inbox, &stdio.outbox, &mut agent);
    log::info!("client closed stdin; shutting down");
    agent.shutdown(SHUTDOWN_GRACE);
    drop(agent);
    stdio.outbox.fail_pending();
    child::kill_descendants();
    stdio.finish(Duration::from_secs(2));
    Ok(())
}
