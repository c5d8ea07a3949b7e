//! `iac-code skills list|show NAME|check DIR`: parsing only (the work is in
//! `commands/skills.rs`).

use lexopt::prelude::*;

use super::Command;
use crate::error::{Error, Result};

/// An `iac-code skills` action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillsCommand {
    /// Every skill of the current directory, where it came from, and the problems found.
    List,
    /// One skill's content as the model gets it.
    Show { name: String },
    /// Checks a skill folder against the Agent Skills format; exit status 0 or 1.
    Check { dir: String },
}

const TRY: &str = "'iac-code skills list', 'show <NAME>' or 'check <DIR>'";

pub(super) fn parse_skills(parser: &mut lexopt::Parser) -> Result<Command> {
    let action = match parser.next()? {
        Some(Value(action)) => action.string()?,
        Some(Short('h') | Long("help")) => return Ok(Command::Help),
        Some(arg) => return Err(arg.unexpected().into()),
        None => return Err(Error::Usage(format!("missing action: try {TRY}"))),
    };
    let mut words = Vec::new();
    while let Some(arg) = parser.next()? {
        match arg {
            Value(value) => words.push(value.string()?),
            Short('h') | Long("help") => return Ok(Command::Help),
            _ => return Err(arg.unexpected().into()),
        }
    }
    let command = match (action.as_str(), words.as_slice()) {
        ("list", []) => SkillsCommand::List,
        ("show", [name]) => SkillsCommand::Show { name: name.clone() },
        ("check", [dir]) => SkillsCommand::Check { dir: dir.clone() },
        ("list" | "show" | "check", _) => {
            return Err(Error::Usage(format!("wrong arguments for 'skills {action}': try {TRY}")));
        }
        (other, _) => return Err(Error::Usage(format!("unknown action '{other}': try {TRY}"))),
    };
    Ok(Command::Skills(command))
}

#[cfg(test)]
mod tests {
    use super::super::parse_from;
    use super::*;

    #[test]
    fn parses_the_three_actions() {
        let parse = |args: &[&str]| parse_from(args.iter().map(std::ffi::OsString::from));
        assert_eq!(parse(&["skills", "list"]).unwrap(), Command::Skills(SkillsCommand::List));
        assert_eq!(
            parse(&["skills", "show", "tf"]).unwrap(),
            Command::Skills(SkillsCommand::Show { name: "tf".into() })
        );
        assert_eq!(
            parse(&["skills", "check", "dir"]).unwrap(),
            Command::Skills(SkillsCommand::Check { dir: "dir".into() })
        );
        for bad in
            [&["skills"][..], &["skills", "show"], &["skills", "list", "x"], &["skills", "nope"]]
        {
            assert!(matches!(parse(bad), Err(Error::Usage(_))), "{bad:?}");
        }
    }
}
