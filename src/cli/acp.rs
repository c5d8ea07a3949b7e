//! Arguments of `iac-code acp`: the transport, the HTTP transport's limits, the session
//! store and permission rules.

use std::path::PathBuf;

use super::{Command, number};
use crate::error::{Error, Result};
pub use crate::transport::http::HttpArgs;

/// Which transport `acp` serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Newline-delimited JSON-RPC over stdin/stdout.
    Stdio,
    /// HTTP POST plus Server-Sent Events.
    Http,
}

/// Arguments of `iac-code acp`, raw (validated later by `config`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcpArgs {
    pub transport: Transport,
    pub host: String,
    pub port: u16,
    pub debug: bool,
    /// `--log-file`.
    pub log_file: Option<PathBuf>,
    /// Limits and checks of the HTTP transport.
    pub http: HttpArgs,
    /// `--session-store` (over `IAC_CODE_SESSION_STORE`).
    pub session_store: Option<String>,
    /// `--node-id` (over `IAC_CODE_NODE_ID`).
    pub node_id: Option<String>,
    /// `--allowed-tools`, as given (each a comma-separated list of rules).
    pub allowed_tools: Vec<String>,
    /// `--disallowed-tools`, as given.
    pub disallowed_tools: Vec<String>,
    /// `--allow-remote-logout`: ACP `logout` over HTTP may clear the node's credentials.
    pub allow_remote_logout: bool,
}

impl Default for AcpArgs {
    fn default() -> AcpArgs {
        AcpArgs {
            transport: Transport::Stdio,
            host: "127.0.0.1".to_string(),
            port: 8765,
            debug: false,
            log_file: None,
            http: HttpArgs::default(),
            session_store: None,
            node_id: None,
            allowed_tools: Vec::new(),
            disallowed_tools: Vec::new(),
            allow_remote_logout: false,
        }
    }
}

pub(super) fn parse_acp(parser: &mut lexopt::Parser) -> Result<Command> {
    use lexopt::prelude::*;
    let mut args = AcpArgs::default();
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(Command::Help),
            // The editor's terminal sign-in appends it to `iac-code acp` (`acp/auth.rs`).
            Long("login") => return super::login::parse_login(parser),
            Long("transport") => {
                let value = parser.value()?.string()?;
                args.transport = match value.as_str() {
                    "stdio" => Transport::Stdio,
                    "http" => Transport::Http,
                    other => {
                        return Err(Error::Usage(format!(
                            "invalid --transport '{other}': expected 'stdio' or 'http'"
                        )));
                    }
                };
            }
            Long("host") => args.host = parser.value()?.string()?,
            Long("port") => {
                let value = parser.value()?.string()?;
                args.port = value.parse().map_err(|_| {
                    Error::Usage(format!("invalid --port '{value}': expected 0-65535"))
                })?;
            }
            Long("allow-insecure-remote") => args.http.allow_insecure_remote = true,
            Long("allowed-origin") => args.http.allowed_origins.push(parser.value()?.string()?),
            Long("no-web") => args.http.web = false,
            Long("allow-remote-logout") => args.allow_remote_logout = true,
            Long("allowed-host") => args.http.allowed_hosts.push(parser.value()?.string()?),
            Long("max-connections") => {
                args.http.max_connections =
                    number(parser, "--max-connections", 1, 1_000_000)? as usize
            }
            Long("max-body") => args.http.max_body = number(parser, "--max-body", 1024, 1 << 40)?,
            Long("idle-timeout") => {
                args.http.idle_timeout = number(parser, "--idle-timeout", 1, 30 * 24 * 3600)?
            }
            Long("request-timeout") => {
                args.http.request_timeout = number(parser, "--request-timeout", 1, 3600)?
            }
            Long("sse-buffer") => {
                args.http.sse_buffer = number(parser, "--sse-buffer", 64 << 10, 1 << 34)? as usize
            }
            Long("debug") | Short('d') => args.debug = true,
            Long("log-file") => args.log_file = Some(parser.value()?.into()),
            Long("session-store") => args.session_store = Some(parser.value()?.string()?),
            Long("node-id") => args.node_id = Some(parser.value()?.string()?),
            Long("allowed-tools") => args.allowed_tools.push(parser.value()?.string()?),
            Long("disallowed-tools") => args.disallowed_tools.push(parser.value()?.string()?),
            _ => return Err(arg.unexpected().into()),
        }
    }
    Ok(Command::Acp(args))
}
