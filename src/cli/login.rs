//! Arguments of `iac-code login` and `iac-code logout` (and `--login`, which an editor's
//! terminal sign-in appends to the command it runs us with).

use super::Command;
use crate::error::{Error, Result};

/// Arguments of `iac-code login`, raw (checked against the presets by the command).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoginArgs {
    /// `--preset`.
    pub preset: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--api-key-stdin`: the key is standard input's first line.
    pub key_stdin: bool,
    /// `--no-test`: store without the one-token test request.
    pub no_test: bool,
}

pub(super) fn parse_login(parser: &mut lexopt::Parser) -> Result<Command> {
    use lexopt::prelude::*;
    let mut args = LoginArgs::default();
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(Command::Help),
            Long("preset") => args.preset = Some(parser.value()?.string()?),
            Long("base-url") => args.base_url = Some(parser.value()?.string()?),
            Long("model") => args.model = Some(parser.value()?.string()?),
            Long("api-key-stdin") => args.key_stdin = true,
            Long("no-test") => args.no_test = true,
            Value(value) => {
                return Err(Error::Usage(format!(
                    "unexpected argument '{}' for 'iac-code login' (see iac-code --help)",
                    value.to_string_lossy()
                )));
            }
            _ => return Err(arg.unexpected().into()),
        }
    }
    Ok(Command::Login(args))
}

pub(super) fn parse_logout(parser: &mut lexopt::Parser) -> Result<Command> {
    use lexopt::prelude::*;
    match parser.next()? {
        None => Ok(Command::Logout),
        Some(Short('h') | Long("help")) => Ok(Command::Help),
        Some(_) => Err(Error::Usage("'iac-code logout' takes no arguments".to_string())),
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::super::parse_from;
    use super::*;

    fn parse(args: &[&str]) -> Result<Command> {
        parse_from(args.iter().map(OsString::from))
    }

    #[test]
    fn login_flags_and_the_editor_spellings() {
        let cmd = parse(&["login", "--preset", "vllm", "--base-url=http://h/v1", "--model", "m"]);
        let want = LoginArgs {
            preset: Some("vllm".into()),
            base_url: Some("http://h/v1".into()),
            model: Some("m".into()),
            ..LoginArgs::default()
        };
        assert_eq!(cmd.unwrap(), Command::Login(want));
        let cmd = parse(&["login", "--api-key-stdin", "--no-test"]).unwrap();
        let Command::Login(args) = cmd else { panic!("not login: {cmd:?}") };
        assert!(args.key_stdin && args.no_test);
        for args in [&["--login"][..], &["acp", "--login"], &["acp", "--debug", "--login"]] {
            assert_eq!(parse(args).unwrap(), Command::Login(LoginArgs::default()), "{args:?}");
        }
        assert_eq!(parse(&["logout"]).unwrap(), Command::Logout);
        for (args, want) in [
            (&["login", "x"][..], "unexpected argument 'x'"),
            (&["login", "--preset"][..], "missing argument"),
            (&["login", "--key"][..], "invalid option '--key'"),
            (&["logout", "now"][..], "takes no arguments"),
        ] {
            let err = parse(args).unwrap_err().to_string();
            assert!(err.contains(want), "{args:?}: {err}");
        }
    }
}
