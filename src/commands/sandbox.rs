//! `iac-code sandbox`: `status` (which layers of the OS sandbox this host offers, as
//! `doctor` and `initialize` say) and `run` (a program in the current directory inside the
//! sandbox a command of that kind gets, its output passed through: to see what it can and
//! cannot reach, and for the sandbox's benchmark).

use std::io::Write;

use crate::child::Supervised;
use crate::cli::{RunProfile, SandboxCommand};
use crate::config::ProcessEnv;
use crate::error::{Error, Result};
use crate::sandbox::{self, Profile, Roots, State};
use crate::sys::{self, Ended};

/// Runs the command; returns the exit code.
pub fn run(command: &SandboxCommand) -> Result<u8> {
    match command {
        SandboxCommand::Status { json } => status(*json),
        SandboxCommand::Run { profile, argv } => run_program(*profile, argv),
    }
}

fn status(json: bool) -> Result<u8> {
    crate::child::init();
    let status = crate::child::sandbox();
    let mut out = sys::stdout().lock();
    if json {
        writeln!(out, "{}", status.meta()).map_err(Error::Stream)?;
        return Ok(0);
    }
    for line in lines(status) {
        writeln!(out, "{line}").map_err(Error::Stream)?;
    }
    Ok(0)
}

/// The status as lines of text (also `doctor`'s).
pub fn lines(status: &sandbox::Status) -> Vec<String> {
    let on = |yes: bool| if yes { "active" } else { "inactive" };
    let mut lines = vec![
        format!("sandbox: {}", if status.usable() { "usable" } else { "NOT usable" }),
        format!("  namespaces (user, mount, pid, ipc, network): {}", on(status.namespaces.is_ok())),
        format!(
            "  landlock: {}",
            if status.landlock > 0 {
                format!("{} (ABI {})", on(status.usable()), status.landlock)
            } else {
                "inactive (the kernel has none)".to_string()
            }
        ),
        format!("  seccomp: {}", on(status.usable())),
    ];
    if let Some(why) = status.why_not() {
        lines.push(format!(
            "  {why}: commands the sandbox would hold are asked instead, in every mode"
        ));
    }
    lines
}

fn run_program(profile: RunProfile, argv: &[String]) -> Result<u8> {
    crate::child::init();
    let cwd = std::env::current_dir().map_err(Error::Stream)?;
    let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    let config_dir = crate::config::config_dir(&ProcessEnv)?;
    let Some((program, args)) = argv.split_first() else {
        return Err(Error::Usage("missing program".to_string()));
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let profile = match profile {
        RunProfile::Sealed => Some(Profile::Sealed),
        RunProfile::CloudRead => Some(Profile::Cloud(State::Scratch)),
        RunProfile::CloudWrite => Some(Profile::Cloud(State::Write)),
        RunProfile::None => None,
    };
    let spec = match profile {
        Some(profile) => {
            let roots = Roots {
                cwd: &cwd,
                extra: &[],
                config_dir: &config_dir,
                approved: &[],
                reveal: None,
            };
            let env = |name: &str| std::env::var(name).ok();
            Some(sandbox::Spec::build(profile, &roots, &env).map_err(Error::Stream)?)
        }
        None => None,
    };
    let started = match &spec {
        Some(spec) => Supervised::spawn_sandboxed(program, &args, &cwd, &[], spec),
        None => Supervised::spawn(program, &args, &cwd, &[]),
    };
    let result = match started {
        Ok((mut supervised, pipes)) => {
            let exit = supervised.exit();
            let out = std::thread::spawn(move || pass(pipes.stdout, sys::stdout()));
            let err = std::thread::spawn(move || pass(pipes.stderr, std::io::stderr()));
            let ended = exit.recv();
            let _ = supervised.kill();
            let _ = (out.join(), err.join());
            match ended {
                Ok(Ended::Code(code)) => Ok(u8::try_from(code).unwrap_or(1)),
                Ok(Ended::Signal(signal)) => Ok(u8::try_from(128 + signal).unwrap_or(1)),
                Err(_) => Ok(1),
            }
        }
        Err(err) => {
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "iac-code: the sandbox could not run {program}: {err}");
            Ok(1)
        }
    };
    if let Some(spec) = &spec {
        spec.clean();
    }
    result
}

/// Copies a program's output to ours until it ends.
fn pass(mut from: impl std::io::Read, mut to: impl Write) {
    let _ = std::io::copy(&mut from, &mut to);
    let _ = to.flush();
}
