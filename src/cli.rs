//! Command-line parsing with lexopt into `Command`. Never reads the environment or the
//! filesystem (that is `config`'s job); `HELP` is the single source the man page mirrors.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::error::{Error, Result};

/// The text printed by `--help`. Keep `man/iac-code.1` in step (a test checks the flags).
pub const HELP: &str = "\
iac-code - an AI coding agent for infrastructure-as-code, speaking ACP

Usage:
  iac-code acp [OPTIONS]     serve the Agent Client Protocol
  iac-code --help            print this help
  iac-code --version         print the version

Options for acp:
  --transport <stdio|http>   transport to serve (default: stdio)
  --host <ADDR>              address to bind with --transport http
                             (default: 127.0.0.1)
  --port <N>                 port to bind with --transport http
                             (default: 8765; 0 picks a free port)
  --allow-insecure-remote    allow a non-loopback --host without
                             IACCODE_ACP_HTTP_TOKEN
  --allowed-origin <ORIGIN>  also accept this Origin (repeatable)
  --allowed-host <HOST>      also accept this Host header (repeatable)
  --max-connections <N>      open HTTP connections at most (default: 2048)
  --max-body <BYTES>         largest request body (default: 16777216)
  --idle-timeout <SECS>      expire idle ACP connections (default: 1800)
  --request-timeout <SECS>   time to receive one request head or body
                             (default: 30)
  --sse-buffer <BYTES>       replay buffer per ACP connection
                             (default: 8388608)
  -d, --debug                log at debug level
  --log-file <PATH>          append logs to PATH instead of stderr

Global options:
  -h, --help                 print this help
  -V, --version              print the version

Environment:
  IAC_CODE_PROVIDER, IAC_CODE_BASE_URL, IAC_CODE_API_KEY, IAC_CODE_MODEL
  choose the LLM; see iac-code(1) for every variable.

Exit status: 0 success, 1 runtime failure, 2 usage or configuration error.
";

/// What the user asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Serve ACP.
    Acp(AcpArgs),
    /// Print `HELP`.
    Help,
    /// Print the version.
    Version,
}

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
    /// `--transport`.
    pub transport: Transport,
    /// `--host`.
    pub host: String,
    /// `--port`.
    pub port: u16,
    /// `--debug`.
    pub debug: bool,
    /// `--log-file`.
    pub log_file: Option<PathBuf>,
    /// Limits and checks of the HTTP transport.
    pub http: HttpArgs,
}

/// Flags of the HTTP transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpArgs {
    /// `--allow-insecure-remote`.
    pub allow_insecure_remote: bool,
    /// `--allowed-origin`, repeatable.
    pub allowed_origins: Vec<String>,
    /// `--allowed-host`, repeatable.
    pub allowed_hosts: Vec<String>,
    /// `--max-connections`.
    pub max_connections: usize,
    /// `--max-body`.
    pub max_body: u64,
    /// `--idle-timeout`, seconds.
    pub idle_timeout: u64,
    /// `--sse-buffer`.
    pub sse_buffer: usize,
    /// `--request-timeout`, seconds.
    pub request_timeout: u64,
}

impl Default for HttpArgs {
    fn default() -> HttpArgs {
        HttpArgs {
            allow_insecure_remote: false,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_connections: 2048,
            max_body: 16 << 20,
            idle_timeout: 1800,
            sse_buffer: 8 << 20,
            request_timeout: 30,
        }
    }
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
        }
    }
}

/// Parses the process arguments.
pub fn parse() -> Result<Command> {
    parse_from(std::env::args_os().skip(1))
}

/// Parses an argument list (without the program name).
pub fn parse_from(args: impl IntoIterator<Item = OsString>) -> Result<Command> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_args(args);
    if let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(Command::Help),
            Short('V') | Long("version") => return Ok(Command::Version),
            Value(cmd) => {
                let cmd = cmd.string()?;
                return match cmd.as_str() {
                    "acp" => parse_acp(&mut parser),
                    "help" => Ok(Command::Help),
                    other => Err(Error::Usage(format!(
                        "unknown command '{other}' (try 'iac-code --help')"
                    ))),
                };
            }
            _ => return Err(arg.unexpected().into()),
        }
    }
    Err(Error::Usage("missing command: try 'iac-code acp' or 'iac-code --help'".to_string()))
}

fn parse_acp(parser: &mut lexopt::Parser) -> Result<Command> {
    use lexopt::prelude::*;
    let mut args = AcpArgs::default();
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(Command::Help),
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
            _ => return Err(arg.unexpected().into()),
        }
    }
    Ok(Command::Acp(args))
}

fn number(parser: &mut lexopt::Parser, flag: &str, min: u64, max: u64) -> Result<u64> {
    use lexopt::ValueExt;
    let value = parser.value()?.string()?;
    match value.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(Error::Usage(format!("invalid {flag} '{value}': expected {min}-{max}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Command> {
        parse_from(args.iter().map(OsString::from))
    }

    #[test]
    fn acp_defaults_and_flags() {
        assert_eq!(parse(&["acp"]).unwrap(), Command::Acp(AcpArgs::default()));
        let cmd = parse(&["acp", "--transport=http", "--port", "9000", "--host", "::1", "--debug"])
            .unwrap();
        let Command::Acp(args) = cmd else { panic!("not acp: {cmd:?}") };
        assert_eq!(args.transport, Transport::Http);
        assert_eq!(args.port, 9000);
        assert_eq!(args.host, "::1");
        assert!(args.debug);
    }

    #[test]
    fn usage_errors_are_clear() {
        let cases = [
            (&["acp", "--transport", "ws"][..], "invalid --transport 'ws'"),
            (&["acp", "--port", "99999"][..], "invalid --port '99999'"),
            (&["acp", "--max-body", "10"][..], "invalid --max-body '10'"),
            (&["acp", "--port"][..], "missing argument for option '--port'"),
            (&["acp", "--bogus"][..], "invalid option '--bogus'"),
            (&["serve"][..], "unknown command 'serve'"),
            (&[][..], "missing command"),
        ];
        for (args, want) in cases {
            let err = parse(args).unwrap_err().to_string();
            assert!(err.contains(want), "{args:?}: {err}");
        }
    }

    #[test]
    fn help_and_version() {
        assert_eq!(parse(&["--help"]).unwrap(), Command::Help);
        assert_eq!(parse(&["acp", "-h"]).unwrap(), Command::Help);
        assert_eq!(parse(&["-V"]).unwrap(), Command::Version);
    }
}
