//! `iac-code` on a terminal (and `iac-code chat`): the agent in this process, served over
//! an in-memory ACP connection to the terminal client (`tui/`), which knows it only
//! through those frames. Without a terminal on stdin and stdout it says how to use `-p`
//! and exits 2, drawing nothing; on `TERM=dumb` the client runs in line mode.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::Duration;

use crate::acp::AcpAgent;
use crate::cli::ChatArgs;
use crate::config::{Config, Env, ProcessEnv};
use crate::error::{Error, Result};
use crate::jsonrpc::{self, memory};
use crate::session::Services;
use crate::{child, logging, tui};

/// How long a running turn gets to end when the client exits.
const GRACE: Duration = Duration::from_secs(3);

/// What bare `iac-code` says without a terminal.
pub const NOT_A_TERMINAL: &str = "\
iac-code: the interactive client needs a terminal on stdin and stdout.
In a script or a pipe, run one prompt instead:
  iac-code -p 'explain main.tf'         (or: echo 'explain main.tf' | iac-code -p -)
  iac-code -p - --output-format json    (one JSON object at the end)
See 'iac-code --help'.
";

/// Runs the terminal client; its exit status.
pub fn run(args: &ChatArgs) -> Result<u8> {
    if !std::io::stdin().is_terminal() || !crate::sys::stdout().is_terminal() {
        let _ = std::io::stderr().write_all(NOT_A_TERMINAL.as_bytes());
        return Ok(2);
    }
    // A terminal that cannot move its cursor gets line mode: plain text, no escape codes.
    let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
    // Before any other thread starts (they inherit the signal mask).
    child::init();
    tui::prepare().map_err(Error::Stream)?;
    // Logs never reach the screen: only a log file gets them.
    if let Some(file) = &args.log_file {
        logging::init(args.debug, Some(file))?;
    }
    let mut config =
        Config::from_env(&ModelFlag { model: args.model.as_deref(), env: &ProcessEnv })?;
    config.with_rule_flags(&args.allowed_tools, &args.disallowed_tools)?;
    let cwd = std::env::current_dir().map_err(Error::Stream)?;
    let history = tui::history_file(&config.config_dir, &cwd);
    let services = Arc::new(Services::new(config)?);
    let (client, server) = memory::memory();
    let engine = std::thread::Builder::new()
        .name("acp-engine".into())
        .spawn(move || {
            let mut agent = AcpAgent::new(services);
            jsonrpc::serve(&server.inbox, &server.outbox, &mut agent);
            agent.shutdown(GRACE);
        })
        .map_err(Error::Stream)?;
    let opts = tui::Options {
        cwd,
        resume: args.resume.clone(),
        continue_last: args.continue_last,
        mode: args.permission.clone(),
        allow_bypass: args.permission.as_deref() == Some("bypass_permissions"),
        color: !dumb && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        history: Some(history),
        plain: dumb,
    };
    let code = tui::run(client, opts)?;
    let _ = engine.join();
    child::kill_descendants();
    Ok(code)
}

/// The environment with `--model` over it.
struct ModelFlag<'a> {
    model: Option<&'a str>,
    env: &'a dyn Env,
}

impl Env for ModelFlag<'_> {
    fn get(&self, name: &str) -> Option<String> {
        match (name, self.model) {
            ("IAC_CODE_MODEL", Some(model)) => Some(model.to_string()),
            _ => self.env.get(name),
        }
    }
}
