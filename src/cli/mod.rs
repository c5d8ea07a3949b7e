//! Command-line parsing with lexopt into `Command`. Never reads the environment or the
//! filesystem (that is `config`'s job); `HELP` is the single source the man page mirrors.

mod acp;
mod chat;
mod login;
mod mcp;
mod policy;
mod sandbox;
mod script;
mod skills;

use std::ffi::OsString;

pub use acp::{AcpArgs, HttpArgs, Transport};
pub use chat::ChatArgs;
pub use login::LoginArgs;
pub use mcp::McpCommand;
pub use policy::PolicyCommand;
pub use sandbox::{RunProfile, SandboxCommand};
pub use script::{ConfigCommand, OutputFormat, PermissionMode, PromptArgs, SessionsCommand};
pub use skills::SkillsCommand;

use crate::error::{Error, Result};

/// The text printed by `--help`. Keep `man/iac-code.1` in step (a test checks the flags).
pub const HELP: &str = "\
iac-code - an AI coding agent for infrastructure-as-code, speaking ACP

Usage:
  iac-code [chat] [OPTIONS]  talk to the agent in this terminal (the
                             conversation stays in the terminal's scrollback;
                             see KEYS in iac-code(1))
  iac-code acp [OPTIONS]     serve the Agent Client Protocol
  iac-code -p <PROMPT|-> [OPTIONS]
                             (or --print) run one prompt in the current
                             directory, print the answer and exit (- reads the
                             prompt from stdin)
  iac-code doctor            check the configuration, the provider and the
                             sessions directory
  iac-code sessions list [--cwd <DIR>] [--json]
  iac-code sessions show <ID> [--json]
  iac-code sessions delete <ID>
  iac-code sessions export <ID>
                             one session as JSON lines: its metadata, then its
                             journal's records
  iac-code sessions import [--keep-mode]
                             create a session from export's lines on stdin
                             (--keep-mode: in the mode they end in)
  iac-code sessions migrate --to <file|redis://HOST:PORT/DB>
                             copy every session into that store
  iac-code config path       print the settings file's path
  iac-code config show [--json]
                             the provider settings, permission rules and
                             skills in force and where each comes from
  iac-code config set [--provider <NAME>] <KEY> <VALUE|->
                             write KEY to the settings file (created 0600);
                             - reads the value from stdin
  iac-code config unset [--provider <NAME>] <KEY>
  iac-code config approve    approve the current directory's
                             .iac-code/settings.json (its allow rules,
                             hooks and policies)
  iac-code mcp list [--json]  the MCP servers of settings.json and of the
                             project's .mcp.json
  iac-code mcp get <NAME> [--json]
  iac-code mcp add [-e NAME=VALUE]... <NAME> -- <COMMAND> [ARGS]...
  iac-code mcp add --transport <http|sse> [-H 'Name: value']... <NAME> <URL>
                             add a server to settings.json
  iac-code mcp add-json <NAME> <JSON|->
  iac-code mcp remove <NAME>
  iac-code mcp test <NAME> [--json]
                             connect, list its tools; exit 0 if it works
  iac-code mcp approve       approve the current directory's .mcp.json
  iac-code skills list       the skills of the current directory: bundled,
                             the user's, the project's; where each came from
  iac-code skills show <NAME>
                             a skill's content as the model gets it
  iac-code skills check <DIR>
                             check a skill folder against the Agent Skills
                             format; exit 0 if it has no problem, else 1
  iac-code sandbox status [--json]
                             which layers of the OS sandbox this host offers
  iac-code sandbox run [--profile <sealed|cloud-read|cloud-write>|--none]
                       [--] <PROGRAM> [ARGS]...
                             run a program in the current directory inside
                             the sandbox a command of that kind gets (to see
                             what it can and cannot reach); exit status: the
                             program's, or 1 if the sandbox cannot be built
  iac-code policy eval --input <FILE> [--policy <DIR>] [--format <text|json>]
                             judge a plan's JSON (terraform show -json) or a
                             manifest with the policies in force (or DIR's):
                             exit 1 on any deny or violation, 0 otherwise, 2
                             on a usage, parse or policy error
  iac-code policy test [DIR] run the test_ rules of DIR's policies (without
                             DIR: the bundled pack's); exit 1 if one fails
  iac-code policy list       the policies in force in the current directory
                             and where each came from
  iac-code login             sign in: choose a provider preset, enter its
                             base URL, model and API key (not shown), test
                             them with a one-token request, store them in
                             settings.json (0600)
  iac-code login --preset <NAME> [--base-url <URL>] [--model <NAME>]
                 [--api-key-stdin] [--no-test]
                             the same for scripts (also: iac-code --login,
                             iac-code acp --login, as an editor runs it)
  iac-code logout            remove the stored API keys and the provider
                             that login chose from settings.json
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
  --no-web                   do not serve the web client at / (with
                             --transport http)
  --allow-remote-logout      let ACP logout over HTTP remove the node's
                             stored API keys (default: refused)
  --max-connections <N>      open HTTP connections at most (default: 2048)
  --max-body <BYTES>         largest request body (default: 16777216)
  --idle-timeout <SECS>      expire idle ACP connections (default: 1800)
  --request-timeout <SECS>   time to receive one request head or body
                             (default: 30)
  --sse-buffer <BYTES>       replay buffer per ACP connection
                             (default: 8388608)
  --session-store <file|redis://HOST:PORT/DB|rediss://…>
                             where sessions live (default: file; or
                             IAC_CODE_SESSION_STORE): Redis lets several nodes
                             share them
  --node-id <ID>             this node's name in logs, leases and /health
                             (default: host name and pid)
  --allowed-tools <RULES>    run these tool calls without asking: rules
                             separated by commas, e.g.
                             'bash(terraform plan*),write_file(*.tf)'
                             (repeatable; see PERMISSION RULES in iac-code(1))
  --disallowed-tools <RULES> refuse these tool calls (repeatable; a deny rule
                             wins over any allow)
  -d, --debug                log at debug level
  --log-file <PATH>          append logs to PATH (created 0600) instead of stderr

Options for -p:
  --output-format <text|json|stream-json>
                             text streams the answer (default); json prints
                             one object at the end; stream-json one line per
                             event
  --permission-mode <default|accept_edits|bypass_permissions|dont_ask>
                             what may run without asking (default: dont_ask;
                             nobody can answer a question in this mode)
  --resume <ID>              continue that session
  --continue                 continue the newest session of this directory
  --allowed-tools, --disallowed-tools
                             as for acp
  -d, --debug, --log-file    as for acp

Options for chat (and bare iac-code):
  --permission-mode <default|accept_edits|plan|bypass_permissions>
                             the session's mode (default: default); Shift+Tab
                             reaches bypass_permissions only when started in it
  --model <NAME>             the model (instead of IAC_CODE_MODEL/settings)
  --resume <ID>, --continue  as for -p
  --allowed-tools, --disallowed-tools, -d, --debug, --log-file
                             as for acp (logs go only to --log-file)

Options for login:
  --preset <NAME>            the provider preset (openai, anthropic, vllm, ...);
                             required when stdin is not a terminal
  --base-url <URL>           its base URL (default: the preset's)
  --model <NAME>             the model (default: the preset's)
  --api-key-stdin            read the API key from stdin's first line
  --no-test                  store without the one-token test request

Options for mcp add:
  -t, --transport <stdio|http|sse>
                             how the server is reached (default: stdio)
  -e, --env <NAME=VALUE>     a variable for a stdio server (repeatable)
  -H, --header <'Name: value'>
                             a header for an HTTP server (repeatable)

Global options:
  -h, --help                 print this help
  -V, --version              print the version

Environment:
  IAC_CODE_PROVIDER, IAC_CODE_BASE_URL, IAC_CODE_API_KEY, IAC_CODE_MODEL
  choose the LLM; IAC_CODE_ALLOWED_TOOLS, IAC_CODE_DISALLOWED_TOOLS add
  permission rules as the flags do; see iac-code(1) for every variable.

Exit status: 0 success, 1 runtime failure, 2 usage or configuration error;
for -p also 3 max turn requests, 4 max tokens, 5 refusal, 130 cancelled,
141 standard output closed.
";

/// What the user asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Acp(AcpArgs),
    /// The terminal client (bare `iac-code`, `iac-code chat`).
    Chat(ChatArgs),
    /// Run one prompt and exit (`-p`).
    Prompt(PromptArgs),
    /// Check the setup.
    Doctor,
    /// Manage stored sessions.
    Sessions(SessionsCommand),
    /// Read or edit the settings file.
    Config(ConfigCommand),
    /// Manage and test MCP servers.
    Mcp(McpCommand),
    /// List, show and check Agent Skills.
    Skills(SkillsCommand),
    /// Show or try the OS sandbox.
    Sandbox(SandboxCommand),
    /// Evaluate, test and list the Rego policies.
    Policy(PolicyCommand),
    /// Sign in: choose a provider, store its key (`--login` too).
    Login(LoginArgs),
    /// Remove the stored credentials.
    Logout,
    Help,
    Version,
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
            // An editor's terminal sign-in runs us with `--login` (`acp/auth.rs`).
            Long("login") => return login::parse_login(&mut parser),
            ref first if chat::starts_chat(first) => {
                let first = chat::flag(arg)?;
                return chat::parse_chat(&mut parser, Some(first));
            }
            Short('p') | Long("print") => {
                let prompt = parser.value()?.string()?;
                return script::parse_prompt(&mut parser, prompt);
            }
            Value(cmd) => {
                let cmd = cmd.string()?;
                return match cmd.as_str() {
                    "acp" => acp::parse_acp(&mut parser),
                    "chat" => chat::parse_chat(&mut parser, None),
                    "doctor" => script::parse_doctor(&mut parser),
                    "sessions" => script::parse_sessions(&mut parser),
                    "config" => script::parse_config(&mut parser),
                    "mcp" => mcp::parse_mcp(&mut parser),
                    "skills" => skills::parse_skills(&mut parser),
                    "sandbox" => sandbox::parse_sandbox(&mut parser),
                    "policy" => policy::parse_policy(&mut parser),
                    "login" => login::parse_login(&mut parser),
                    "logout" => login::parse_logout(&mut parser),
                    "help" => Ok(Command::Help),
                    other => Err(Error::Usage(format!(
                        "unknown command '{other}' (try 'iac-code --help')"
                    ))),
                };
            }
            _ => return Err(arg.unexpected().into()),
        }
    }
    // Bare: the terminal client (which says how to use -p when there is no terminal).
    Ok(Command::Chat(ChatArgs::default()))
}

pub(super) fn number(parser: &mut lexopt::Parser, flag: &str, min: u64, max: u64) -> Result<u64> {
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
        assert!(!args.allow_remote_logout);
        let Command::Acp(args) = parse(&["acp", "--allow-remote-logout"]).unwrap() else {
            panic!("not acp")
        };
        assert!(args.allow_remote_logout);
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
        ];
        for (args, want) in cases {
            let err = parse(args).unwrap_err().to_string();
            assert!(err.contains(want), "{args:?}: {err}");
        }
    }

    #[test]
    fn script_commands_parse() {
        let Command::Prompt(p) =
            parse(&["-p", "-", "--output-format", "stream-json", "--continue"]).unwrap()
        else {
            panic!("not a prompt")
        };
        assert_eq!(p.prompt, "-");
        assert_eq!(p.format, OutputFormat::StreamJson);
        assert_eq!(p.permission, PermissionMode::DontAsk);
        assert!(p.continue_last);
        assert_eq!(
            parse(&["sessions", "show", "x", "--json"]).unwrap(),
            Command::Sessions(SessionsCommand::Show { id: "x".into(), json: true })
        );
        assert_eq!(parse(&["doctor"]).unwrap(), Command::Doctor);
        for (args, want) in [
            (&["-p", "x", "--resume", "a", "--continue"][..], "exclude each other"),
            (&["-p", " "][..], "empty"),
            (&["sessions"][..], "missing action"),
            (&["sessions", "delete"][..], "missing session id"),
            (&["sessions", "purge"][..], "unknown sessions action"),
            (&["-p", "x", "--permission-mode", "yolo"][..], "invalid --permission-mode"),
        ] {
            let err = parse(args).unwrap_err().to_string();
            assert!(err.contains(want), "{args:?}: {err}");
        }
    }

    #[test]
    fn rule_flags_are_collected_as_written() {
        let cmd = parse(&[
            "acp",
            "--allowed-tools",
            "bash(git *),write_file",
            "--allowed-tools=read_file",
            "--disallowed-tools",
            "bash(rm *)",
        ])
        .unwrap();
        let Command::Acp(args) = cmd else { panic!("not acp: {cmd:?}") };
        assert_eq!(args.allowed_tools, ["bash(git *),write_file", "read_file"]);
        assert_eq!(args.disallowed_tools, ["bash(rm *)"]);
        let cmd = parse(&["-p", "x", "--disallowed-tools", "web_fetch", "--allowed-tools", "grep"])
            .unwrap();
        let Command::Prompt(p) = cmd else { panic!("not a prompt: {cmd:?}") };
        assert_eq!(
            (p.allowed_tools, p.disallowed_tools),
            (vec!["grep".into()], vec!["web_fetch".into()])
        );
        assert_eq!(parse(&["config", "approve"]).unwrap(), Command::Config(ConfigCommand::Approve));
        for (args, want) in [
            (&["acp", "--allowed-tools"][..], "missing argument for option '--allowed-tools'"),
            (&["config", "approve", "x"][..], "unexpected arguments for 'iac-code config approve'"),
            (&["config", "approve", "--json"][..], "unexpected arguments"),
        ] {
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
