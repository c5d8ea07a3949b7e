//! Arguments of the commands meant for scripts: `-p` (one-shot), `doctor`, `sessions`.

use std::path::PathBuf;

use lexopt::prelude::*;

use super::Command;
use crate::error::{Error, Result};

/// How `-p` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// The answer's text, streamed.
    Text,
    /// One JSON object at the end.
    Json,
    /// One JSON object per line, per event.
    StreamJson,
}

/// What `-p` may run without asking (nobody can answer a question).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionMode {
    /// Writes and commands ask, and are therefore refused.
    Default,
    /// File edits run; commands are refused.
    AcceptEdits,
    /// Everything runs.
    BypassPermissions,
    /// Anything that would ask is refused.
    DontAsk,
}

/// Arguments of `iac-code -p`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArgs {
    /// The prompt, or `-` for stdin.
    pub prompt: String,
    /// `--output-format`.
    pub format: OutputFormat,
    /// `--permission-mode`.
    pub permission: PermissionMode,
    pub resume: Option<String>,
    pub continue_last: bool,
    pub debug: bool,
    /// `--log-file`.
    pub log_file: Option<PathBuf>,
    /// `--allowed-tools`, as given (each a comma-separated list of rules).
    pub allowed_tools: Vec<String>,
    /// `--disallowed-tools`, as given.
    pub disallowed_tools: Vec<String>,
}

/// `iac-code config …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigCommand {
    /// Print the settings file's path.
    Path,
    /// Show the provider settings and permission rules in force.
    Show { json: bool },
    /// Approve the current directory's `.iac-code/settings.json` as it is now.
    Approve,
    /// Set a key (`-` as the value: read it from stdin).
    Set {
        /// `--provider`: whose section.
        provider: Option<String>,
        key: String,
        value: String,
    },
    /// Remove a key.
    Unset {
        /// `--provider`: whose section.
        provider: Option<String>,
        key: String,
    },
}

/// `iac-code sessions …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionsCommand {
    /// List sessions, optionally of one directory.
    List {
        cwd: Option<String>,
        json: bool,
    },
    /// Show one session's metadata and conversation.
    Show {
        id: String,
        json: bool,
    },
    Delete {
        id: String,
    },
    /// Write one session as JSON lines (metadata, then its journal's records).
    Export {
        id: String,
    },
    /// Create a session from `export`'s lines on stdin; with `keep_mode`, in the mode the
    /// lines end in (otherwise a mode set elsewhere is history only).
    Import {
        keep_mode: bool,
    },
    /// Copy every session into another store.
    Migrate {
        to: String,
    },
}

pub(super) fn parse_prompt(parser: &mut lexopt::Parser, prompt: String) -> Result<Command> {
    let mut args = PromptArgs {
        prompt,
        format: OutputFormat::Text,
        permission: PermissionMode::DontAsk,
        resume: None,
        continue_last: false,
        debug: false,
        log_file: None,
        allowed_tools: Vec::new(),
        disallowed_tools: Vec::new(),
    };
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(Command::Help),
            Long("output-format") => {
                let value = parser.value()?.string()?;
                args.format = match value.as_str() {
                    "text" => OutputFormat::Text,
                    "json" => OutputFormat::Json,
                    "stream-json" => OutputFormat::StreamJson,
                    other => {
                        return Err(Error::Usage(format!(
                            "invalid --output-format '{other}': expected text, json or stream-json"
                        )));
                    }
                };
            }
            Long("permission-mode") => {
                let value = parser.value()?.string()?;
                args.permission = match value.as_str() {
                    "default" => PermissionMode::Default,
                    "accept_edits" => PermissionMode::AcceptEdits,
                    "bypass_permissions" => PermissionMode::BypassPermissions,
                    "dont_ask" => PermissionMode::DontAsk,
                    other => {
                        return Err(Error::Usage(format!(
                            "invalid --permission-mode '{other}': expected default, \
                             accept_edits, bypass_permissions or dont_ask"
                        )));
                    }
                };
            }
            Long("resume") => args.resume = Some(parser.value()?.string()?),
            Long("continue") => args.continue_last = true,
            Long("debug") | Short('d') => args.debug = true,
            Long("log-file") => args.log_file = Some(parser.value()?.into()),
            Long("allowed-tools") => args.allowed_tools.push(parser.value()?.string()?),
            Long("disallowed-tools") => args.disallowed_tools.push(parser.value()?.string()?),
            _ => return Err(arg.unexpected().into()),
        }
    }
    if args.resume.is_some() && args.continue_last {
        return Err(Error::Usage("--resume and --continue exclude each other".to_string()));
    }
    if args.prompt.trim().is_empty() {
        return Err(Error::Usage("the prompt after -p is empty".to_string()));
    }
    Ok(Command::Prompt(args))
}

pub(super) fn parse_doctor(parser: &mut lexopt::Parser) -> Result<Command> {
    match parser.next()? {
        None => Ok(Command::Doctor),
        Some(Short('h') | Long("help")) => Ok(Command::Help),
        Some(arg) => Err(arg.unexpected().into()),
    }
}

/// The action word of a command with actions (`sessions`, `config`): `Ok(None)` for
/// `--help`, a usage error naming `try` when it is missing.
fn action(parser: &mut lexopt::Parser, try_: &str) -> Result<Option<String>> {
    match parser.next()? {
        Some(Value(action)) => Ok(Some(action.string()?)),
        Some(Short('h') | Long("help")) => Ok(None),
        Some(arg) => Err(arg.unexpected().into()),
        None => Err(Error::Usage(format!("missing action: try {try_}"))),
    }
}

pub(super) fn parse_sessions(parser: &mut lexopt::Parser) -> Result<Command> {
    let try_ = "'iac-code sessions list', 'show <ID>', 'delete <ID>', 'export <ID>', 'import' \
                or 'migrate --to <STORE>'";
    let Some(action) = action(parser, try_)? else { return Ok(Command::Help) };
    let (mut id, mut cwd, mut json, mut to) = (None, None, false, None);
    let mut keep_mode = false;
    while let Some(arg) = parser.next()? {
        match arg {
            Long("json") => json = true,
            Long("keep-mode") if action == "import" => keep_mode = true,
            Long("cwd") => cwd = Some(parser.value()?.string()?),
            Long("to") => to = Some(parser.value()?.string()?),
            Value(value) if id.is_none() => id = Some(value.string()?),
            _ => return Err(arg.unexpected().into()),
        }
    }
    let need_id = |id: Option<String>| {
        id.ok_or_else(|| {
            Error::Usage(format!("missing session id: iac-code sessions {action} <ID>"))
        })
    };
    if to.is_some() && action != "migrate" {
        return Err(Error::Usage(format!("--to is for 'iac-code sessions migrate', not {action}")));
    }
    match action.as_str() {
        "export" if cwd.is_none() && !json => {
            Ok(Command::Sessions(SessionsCommand::Export { id: need_id(id)? }))
        }
        "import" if cwd.is_none() && !json && id.is_none() => {
            Ok(Command::Sessions(SessionsCommand::Import { keep_mode }))
        }
        "migrate" if cwd.is_none() && !json && id.is_none() => match to {
            Some(to) => Ok(Command::Sessions(SessionsCommand::Migrate { to })),
            None => Err(Error::Usage(
                "usage: iac-code sessions migrate --to <file|redis://HOST:PORT/DB>".into(),
            )),
        },
        "list" if id.is_none() => Ok(Command::Sessions(SessionsCommand::List { cwd, json })),
        "show" if cwd.is_none() => {
            Ok(Command::Sessions(SessionsCommand::Show { id: need_id(id)?, json }))
        }
        "delete" if cwd.is_none() && !json => {
            Ok(Command::Sessions(SessionsCommand::Delete { id: need_id(id)? }))
        }
        "list" | "show" | "delete" | "export" | "import" | "migrate" => {
            Err(Error::Usage(format!("unexpected arguments for 'iac-code sessions {action}'")))
        }
        other => Err(Error::Usage(format!(
            "unknown sessions action '{other}': expected list, show, delete, export, import or \
             migrate"
        ))),
    }
}

pub(super) fn parse_config(parser: &mut lexopt::Parser) -> Result<Command> {
    let try_ = "'iac-code config show', 'path', 'set <KEY> <VALUE>', 'unset <KEY>' or 'approve'";
    let Some(action) = action(parser, try_)? else { return Ok(Command::Help) };
    let (mut provider, mut json, mut words) = (None, false, Vec::new());
    while let Some(arg) = parser.next()? {
        match arg {
            Long("json") => json = true,
            Long("provider") => provider = Some(parser.value()?.string()?),
            // A lone `-` (read stdin) is a value to lexopt too.
            Value(value) => words.push(value.string()?),
            _ => return Err(arg.unexpected().into()),
        }
    }
    let wrong = || Error::Usage(format!("unexpected arguments for 'iac-code config {action}'"));
    let command = match (action.as_str(), words.as_slice()) {
        ("path", []) if provider.is_none() && !json => ConfigCommand::Path,
        ("show", []) if provider.is_none() => ConfigCommand::Show { json },
        ("set", [key, value]) if !json => {
            ConfigCommand::Set { provider, key: key.clone(), value: value.clone() }
        }
        ("set", _) if !json => {
            return Err(Error::Usage(
                "usage: iac-code config set [--provider <NAME>] <KEY> <VALUE|->".to_string(),
            ));
        }
        ("unset", [key]) if !json => ConfigCommand::Unset { provider, key: key.clone() },
        ("approve", []) if provider.is_none() && !json => ConfigCommand::Approve,
        ("path" | "show" | "set" | "unset" | "approve", _) => return Err(wrong()),
        (other, _) => {
            return Err(Error::Usage(format!(
                "unknown config action '{other}': expected path, show, set, unset or approve"
            )));
        }
    };
    Ok(Command::Config(command))
}
