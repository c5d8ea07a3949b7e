//! Thin entry point: parse the command line, run, map the result to an exit code
//! (0 success, 1 runtime failure, 2 usage or configuration error).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

use iac_code::cli::{self, Command};
use iac_code::error::Error;

fn main() -> ExitCode {
    // A tool command's supervisor (started by the server itself; see `child::supervisor`).
    let mut argv = std::env::args_os().skip(1);
    if argv.next().is_some_and(|a| a == iac_code::child::supervisor::ARG) {
        let code = iac_code::child::supervisor::run(argv.collect());
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let command = match cli::parse() {
        Ok(command) => command,
        Err(err) => return fail(&err),
    };
    match command {
        Command::Help => {
            print!("{}", cli::HELP);
            ExitCode::SUCCESS
        }
        Command::Version => {
            println!("iac-code {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Command::Chat(args) => code(iac_code::commands::chat::run(&args)),
        Command::Prompt(args) => code(iac_code::commands::oneshot::run(&args)),
        Command::Doctor => code(iac_code::commands::doctor::run()),
        Command::Sessions(command) => code(iac_code::commands::sessions::run(&command)),
        Command::Config(command) => code(iac_code::commands::config::run(&command)),
        Command::Mcp(command) => code(iac_code::commands::mcp::run(&command)),
        Command::Skills(command) => code(iac_code::commands::skills::run(&command)),
        Command::Sandbox(command) => code(iac_code::commands::sandbox::run(&command)),
        Command::Policy(command) => code(iac_code::commands::policy::run(&command)),
        Command::Login(args) => code(iac_code::commands::login::login(&args)),
        Command::Logout => code(iac_code::commands::login::logout()),
        Command::Acp(args) => match iac_code::serve_acp(&args, &mut |url| {
            // HTTP mode only: stdout is free there, and scripts read the address from it
            // (println! flushes at the newline).
            println!("iac-code listening on {url}");
        }) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => fail(&err),
        },
    }
}

fn code(result: iac_code::error::Result<u8>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => fail(&err),
    }
}

fn fail(err: &Error) -> ExitCode {
    eprintln!("iac-code: error: {err}");
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        eprintln!("  caused by: {cause}");
        source = cause.source();
    }
    match err {
        Error::Usage(_) | Error::Config(_) => ExitCode::from(2),
        _ => ExitCode::from(1),
    }
}
