//! `iac-code mcp list|get|add|add-json|remove|test|approve`: parsing only (the work is in
//! `commands/mcp.rs`).

use lexopt::prelude::*;

use super::Command;
use crate::error::{Error, Result};
use crate::mcp::TransportKind;

/// An `iac-code mcp` action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpCommand {
    /// The servers of `settings.json` and of the project file in the current directory.
    List { json: bool },
    /// One server's entry (secrets masked).
    Get { name: String, json: bool },
    /// Adds a server to `settings.json`: `transport` stdio (with `target` the command and
    /// `args`), http or sse (with `target` the URL).
    Add {
        name: String,
        transport: TransportKind,
        target: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        headers: Vec<(String, String)>,
    },
    /// Adds a server from a JSON entry (`-` reads it from stdin).
    AddJson { name: String, json: String },
    /// Removes a server from `settings.json`.
    Remove { name: String },
    /// Connects to a server, lists its tools; exit status 0 or 1.
    Test { name: String, json: bool },
    /// Approves the current directory's `.mcp.json` as it is now.
    Approve,
}

const TRY: &str = "'iac-code mcp list', 'get <NAME>', 'add <NAME> -- <COMMAND> [ARGS]', \
                   'add --transport http <NAME> <URL>', 'add-json <NAME> <JSON|->', \
                   'remove <NAME>', 'test <NAME>' or 'approve'";

pub(super) fn parse_mcp(parser: &mut lexopt::Parser) -> Result<Command> {
    let action = match parser.next()? {
        Some(Value(action)) => action.string()?,
        Some(Short('h') | Long("help")) => return Ok(Command::Help),
        Some(arg) => return Err(arg.unexpected().into()),
        None => return Err(Error::Usage(format!("missing action: try {TRY}"))),
    };
    let (mut json, mut transport, mut env, mut headers, mut words) =
        (false, None, Vec::new(), Vec::new(), Vec::new());
    let mut rest = false;
    while let Some(arg) = parser.next()? {
        match arg {
            Value(value) => {
                words.push(value.string()?);
                // After the name and the command, everything is the command's.
                if action == "add" && words.len() >= 2 {
                    rest = true;
                    break;
                }
            }
            Long("json") => json = true,
            Short('t') | Long("transport") => transport = Some(parser.value()?.string()?),
            Short('e') | Long("env") => {
                let pair = parser.value()?.string()?;
                let Some((k, v)) = pair.split_once('=').filter(|(k, _)| !k.is_empty()) else {
                    return Err(Error::Usage(format!("--env '{pair}': expected NAME=VALUE")));
                };
                env.push((k.to_string(), v.to_string()));
            }
            Short('H') | Long("header") => {
                let pair = parser.value()?.string()?;
                let Some((k, v)) = pair.split_once(':').filter(|(k, _)| !k.trim().is_empty())
                else {
                    return Err(Error::Usage(format!("--header '{pair}': expected 'Name: value'")));
                };
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
            _ => return Err(arg.unexpected().into()),
        }
    }
    let mut args = Vec::new();
    if rest {
        for arg in parser.raw_args()? {
            args.push(
                arg.into_string()
                    .map_err(|a| Error::Usage(format!("argument {a:?} is not valid UTF-8")))?,
            );
        }
    }
    let wrong = || Error::Usage(format!("unexpected arguments for 'iac-code mcp {action}'"));
    let only_json = transport.is_none() && env.is_empty() && headers.is_empty();
    let command = match (action.as_str(), words.as_slice()) {
        ("list", []) if only_json => McpCommand::List { json },
        ("get", [name]) if only_json => McpCommand::Get { name: name.clone(), json },
        ("test", [name]) if only_json => McpCommand::Test { name: name.clone(), json },
        ("approve", []) if only_json && !json => McpCommand::Approve,
        ("remove", [name]) if only_json && !json => McpCommand::Remove { name: name.clone() },
        ("add-json", [name, entry]) if only_json && !json => {
            McpCommand::AddJson { name: name.clone(), json: entry.clone() }
        }
        ("add", [name, target]) if !json => {
            let transport = match transport.as_deref() {
                None | Some("stdio") => TransportKind::Stdio,
                Some("http") => TransportKind::Http,
                Some("sse") => TransportKind::Sse,
                Some(other) => {
                    return Err(Error::Usage(format!(
                        "--transport '{other}': expected stdio, http or sse"
                    )));
                }
            };
            if transport != TransportKind::Stdio && !args.is_empty() {
                let kind = transport.id();
                return Err(Error::Usage(format!("an {kind} server takes one URL")));
            }
            McpCommand::Add {
                name: name.clone(),
                transport,
                target: target.clone(),
                args,
                env,
                headers,
            }
        }
        ("add", _) => {
            return Err(Error::Usage(
                "usage: iac-code mcp add [-e NAME=VALUE]... <NAME> -- <COMMAND> [ARGS]... or \
                 iac-code mcp add --transport http|sse [-H 'Name: value']... <NAME> <URL>"
                    .to_string(),
            ));
        }
        ("list" | "get" | "test" | "remove" | "add-json" | "approve", _) => return Err(wrong()),
        (other, _) => {
            return Err(Error::Usage(format!("unknown mcp action '{other}': try {TRY}")));
        }
    };
    Ok(Command::Mcp(command))
}
