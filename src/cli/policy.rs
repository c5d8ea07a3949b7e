//! `iac-code policy eval --input FILE [--policy DIR] [--format json]|test [DIR]|list`:
//! parsing only (the work is in `commands/policy.rs`).

use lexopt::prelude::*;

use super::Command;
use crate::error::{Error, Result};

/// An `iac-code policy` action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyCommand {
    /// Judges a plan's JSON or a manifest: exit 1 on any denial, 0 otherwise.
    Eval { input: String, policy: Option<String>, json: bool },
    /// Runs the `test_` rules of a directory (the bundled pack's without one).
    Test { dir: Option<String> },
    /// The policies in force in the current directory and where each came from.
    List,
}

const TRY: &str = "'iac-code policy eval --input <FILE>', 'test [DIR]' or 'list'";

pub(super) fn parse_policy(parser: &mut lexopt::Parser) -> Result<Command> {
    let action = match parser.next()? {
        Some(Value(action)) => action.string()?,
        Some(Short('h') | Long("help")) => return Ok(Command::Help),
        Some(arg) => return Err(arg.unexpected().into()),
        None => return Err(Error::Usage(format!("missing action: try {TRY}"))),
    };
    let (mut input, mut policy, mut json, mut words) = (None, None, false, Vec::new());
    while let Some(arg) = parser.next()? {
        match arg {
            Long("input") if action == "eval" => input = Some(parser.value()?.string()?),
            Long("policy") if action == "eval" => policy = Some(parser.value()?.string()?),
            Long("format") if action == "eval" => match parser.value()?.string()?.as_str() {
                "json" => json = true,
                "text" => json = false,
                other => {
                    return Err(Error::Usage(format!("--format {other}: expected json or text")));
                }
            },
            Value(value) => words.push(value.string()?),
            Short('h') | Long("help") => return Ok(Command::Help),
            _ => return Err(arg.unexpected().into()),
        }
    }
    let command = match (action.as_str(), words.as_slice()) {
        ("eval", []) => {
            let input =
                input.ok_or_else(|| Error::Usage("policy eval needs --input <FILE>".into()))?;
            PolicyCommand::Eval { input, policy, json }
        }
        ("test", []) => PolicyCommand::Test { dir: None },
        ("test", [dir]) => PolicyCommand::Test { dir: Some(dir.clone()) },
        ("list", []) => PolicyCommand::List,
        ("eval" | "test" | "list", _) => {
            return Err(Error::Usage(format!("wrong arguments for 'policy {action}': try {TRY}")));
        }
        (other, _) => return Err(Error::Usage(format!("unknown action '{other}': try {TRY}"))),
    };
    Ok(Command::Policy(command))
}

#[cfg(test)]
mod tests {
    use super::super::parse_from;
    use super::*;

    #[test]
    fn parses_the_three_actions() {
        let parse = |args: &[&str]| parse_from(args.iter().map(std::ffi::OsString::from));
        assert_eq!(
            parse(&["policy", "eval", "--input", "p.json", "--policy", "d", "--format", "json"])
                .unwrap(),
            Command::Policy(PolicyCommand::Eval {
                input: "p.json".into(),
                policy: Some("d".into()),
                json: true
            })
        );
        assert_eq!(
            parse(&["policy", "test"]).unwrap(),
            Command::Policy(PolicyCommand::Test { dir: None })
        );
        assert_eq!(parse(&["policy", "list"]).unwrap(), Command::Policy(PolicyCommand::List));
        for bad in [
            &["policy"][..],
            &["policy", "eval"],
            &["policy", "eval", "--input", "x", "--format", "xml"],
            &["policy", "list", "x"],
            &["policy", "test", "--input", "x"],
            &["policy", "nope"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
