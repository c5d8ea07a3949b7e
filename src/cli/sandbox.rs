//! `iac-code sandbox status|run`: parsing only (the work is in `commands/sandbox.rs`).

use lexopt::prelude::*;

use super::Command;
use crate::error::{Error, Result};

/// An `iac-code sandbox` action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxCommand {
    /// Which layers of the sandbox this host offers.
    Status { json: bool },
    /// Runs a program in the sandbox a command of that kind would get, in the current
    /// directory (`--profile sealed|cloud-read|cloud-write`); `--none` runs it under the
    /// same supervisor without a sandbox (to compare).
    Run { profile: RunProfile, argv: Vec<String> },
}

/// The sandbox `sandbox run` uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunProfile {
    Sealed,
    CloudRead,
    CloudWrite,
    None,
}

const TRY: &str = "'iac-code sandbox status' or 'sandbox run [--profile P] -- PROGRAM [ARGS]...'";

pub(super) fn parse_sandbox(parser: &mut lexopt::Parser) -> Result<Command> {
    let action = match parser.next()? {
        Some(Value(action)) => action.string()?,
        Some(Short('h') | Long("help")) => return Ok(Command::Help),
        Some(arg) => return Err(arg.unexpected().into()),
        None => return Err(Error::Usage(format!("missing action: try {TRY}"))),
    };
    match action.as_str() {
        "status" => {
            let mut json = false;
            while let Some(arg) = parser.next()? {
                match arg {
                    Long("json") => json = true,
                    Short('h') | Long("help") => return Ok(Command::Help),
                    _ => return Err(arg.unexpected().into()),
                }
            }
            Ok(Command::Sandbox(SandboxCommand::Status { json }))
        }
        "run" => parse_run(parser),
        other => Err(Error::Usage(format!("unknown action '{other}': try {TRY}"))),
    }
}

fn parse_run(parser: &mut lexopt::Parser) -> Result<Command> {
    let mut profile = RunProfile::Sealed;
    let mut argv = Vec::new();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("profile") => {
                let value = parser.value()?.string()?;
                profile = match value.as_str() {
                    "sealed" => RunProfile::Sealed,
                    "cloud-read" => RunProfile::CloudRead,
                    "cloud-write" => RunProfile::CloudWrite,
                    _ => {
                        return Err(Error::Usage(format!(
                            "invalid --profile '{value}': expected sealed, cloud-read or \
                             cloud-write"
                        )));
                    }
                };
            }
            Long("none") => profile = RunProfile::None,
            Value(word) => {
                argv.push(word.string()?);
                argv.extend(parser.raw_args()?.map(|w| w.to_string_lossy().into_owned()));
            }
            Short('h') | Long("help") => return Ok(Command::Help),
            _ => return Err(arg.unexpected().into()),
        }
    }
    if argv.is_empty() {
        return Err(Error::Usage(format!("missing program: try {TRY}")));
    }
    Ok(Command::Sandbox(SandboxCommand::Run { profile, argv }))
}

#[cfg(test)]
mod tests {
    use super::super::parse_from;
    use super::*;

    fn parse(args: &[&str]) -> Result<Command> {
        parse_from(args.iter().map(std::ffi::OsString::from))
    }

    #[test]
    fn parses_status_and_run() {
        assert_eq!(
            parse(&["sandbox", "status", "--json"]).unwrap(),
            Command::Sandbox(SandboxCommand::Status { json: true })
        );
        assert_eq!(
            parse(&["sandbox", "run", "--profile", "cloud-read", "--", "ls", "-l"]).unwrap(),
            Command::Sandbox(SandboxCommand::Run {
                profile: RunProfile::CloudRead,
                argv: vec!["ls".into(), "-l".into()]
            })
        );
        assert_eq!(
            parse(&["sandbox", "run", "true", "--profile", "x"]).unwrap(),
            Command::Sandbox(SandboxCommand::Run {
                profile: RunProfile::Sealed,
                argv: vec!["true".into(), "--profile".into(), "x".into()]
            })
        );
        for (args, want) in [
            (&["sandbox"][..], "missing action"),
            (&["sandbox", "run"][..], "missing program"),
            (&["sandbox", "run", "--profile", "open", "ls"][..], "invalid --profile 'open'"),
            (&["sandbox", "jail"][..], "unknown action 'jail'"),
        ] {
            let err = parse(args).unwrap_err().to_string();
            assert!(err.contains(want), "{args:?}: {err}");
        }
    }
}
