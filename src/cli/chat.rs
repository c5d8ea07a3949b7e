//! Arguments of the terminal client: bare `iac-code`, `iac-code chat`, and `iac-code`
//! started with one of its flags (`iac-code --resume <ID>`).

use std::path::PathBuf;

use lexopt::prelude::*;

use super::Command;
use crate::error::{Error, Result};

/// Arguments of `iac-code chat`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatArgs {
    pub resume: Option<String>,
    pub continue_last: bool,
    /// `--permission-mode`: a session mode id.
    pub permission: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    pub allowed_tools: Vec<String>,
    pub disallowed_tools: Vec<String>,
    pub debug: bool,
    pub log_file: Option<PathBuf>,
}

/// The flags that start the terminal client when they come first (`iac-code --continue`).
pub(super) fn starts_chat(arg: &lexopt::Arg<'_>) -> bool {
    matches!(
        arg,
        Long(
            "resume"
                | "continue"
                | "permission-mode"
                | "model"
                | "allowed-tools"
                | "disallowed-tools"
                | "log-file"
        ) | Short('d')
            | Long("debug")
    )
}

/// A flag as written (`--resume`, `-d`); a usage error for anything else.
pub(super) fn flag(arg: lexopt::Arg<'_>) -> Result<String> {
    match arg {
        Long(name) => Ok(format!("--{name}")),
        Short(c) => Ok(format!("-{c}")),
        Value(_) => Err(arg.unexpected().into()),
    }
}

/// Parses the client's flags; `first` is one already read.
pub(super) fn parse_chat(parser: &mut lexopt::Parser, first: Option<String>) -> Result<Command> {
    let mut args = ChatArgs::default();
    if let Some(name) = first
        && one(parser, &name, &mut args)?
    {
        return Ok(Command::Help);
    }
    while let Some(arg) = parser.next()? {
        let name = flag(arg)?;
        if one(parser, &name, &mut args)? {
            return Ok(Command::Help);
        }
    }
    if args.resume.is_some() && args.continue_last {
        return Err(Error::Usage("--resume and --continue exclude each other".to_string()));
    }
    Ok(Command::Chat(args))
}

/// One flag; true for `--help`.
fn one(parser: &mut lexopt::Parser, name: &str, args: &mut ChatArgs) -> Result<bool> {
    match name {
        "-h" | "--help" => return Ok(true),
        "--permission-mode" => {
            let value = parser.value()?.string()?;
            if !matches!(value.as_str(), "default" | "accept_edits" | "plan" | "bypass_permissions")
            {
                return Err(Error::Usage(format!(
                    "invalid --permission-mode '{value}': expected default, accept_edits, plan or \
                     bypass_permissions"
                )));
            }
            args.permission = Some(value);
        }
        "--model" => args.model = Some(parser.value()?.string()?),
        "--resume" => args.resume = Some(parser.value()?.string()?),
        "--continue" => args.continue_last = true,
        "--debug" | "-d" => args.debug = true,
        "--log-file" => args.log_file = Some(parser.value()?.into()),
        "--allowed-tools" => args.allowed_tools.push(parser.value()?.string()?),
        "--disallowed-tools" => args.disallowed_tools.push(parser.value()?.string()?),
        other => return Err(Error::Usage(format!("invalid option '{other}'"))),
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;
    use crate::cli::parse_from;

    fn parse(args: &[&str]) -> Result<Command> {
        parse_from(args.iter().map(OsString::from))
    }

    #[test]
    fn bare_and_chat_flags_start_the_terminal_client() {
        assert_eq!(parse(&[]).unwrap(), Command::Chat(ChatArgs::default()));
        assert_eq!(parse(&["chat"]).unwrap(), Command::Chat(ChatArgs::default()));
        let Command::Chat(args) = parse(&["--resume", "abc", "--model", "m", "-d"]).unwrap() else {
            panic!("not chat")
        };
        assert_eq!(
            (args.resume.as_deref(), args.model.as_deref(), args.debug),
            (Some("abc"), Some("m"), true)
        );
        let Command::Chat(args) =
            parse(&["chat", "--permission-mode", "bypass_permissions", "--continue"]).unwrap()
        else {
            panic!("not chat")
        };
        assert_eq!(args.permission.as_deref(), Some("bypass_permissions"));
        assert!(args.continue_last);
        for (args, want) in [
            (&["chat", "--resume", "a", "--continue"][..], "exclude each other"),
            (&["chat", "--permission-mode", "dont_ask"][..], "invalid --permission-mode"),
            (&["chat", "extra"][..], "unexpected argument"),
            (&["--continue", "--bogus"][..], "invalid option '--bogus'"),
        ] {
            let err = parse(args).unwrap_err().to_string();
            assert!(err.contains(want), "{args:?}: {err}");
        }
        assert_eq!(parse(&["chat", "--help"]).unwrap(), Command::Help);
    }
}
