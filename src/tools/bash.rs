//! `bash`: runs `bash -c` in its own process group with stdin closed and its output
//! piped, capped (head and tail kept) and streamed to the client while it runs (`run.rs`).
//! A cancel or a timeout kills the whole process tree. Whether it may run is the
//! gate's question (`crate::gate`, which judges the command `Tool::command` names).

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::limits::{KEEP_HEAD, KEEP_TAIL};
use super::run::{End, IO_DRAIN, Run, execute};
use super::{
    Access, Command, Invocation, Tool, ToolContext, ToolError, ToolKind, ToolOutput, parse_args,
};

/// Timeout when the call gives none.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest timeout a call may ask for.
const MAX_TIMEOUT: Duration = Duration::from_secs(600);

pub struct Bash;

#[derive(Deserialize)]
struct Args {
    command: String,
    timeout: Option<f64>,
}

impl Tool for Bash {
    fn name(&self) -> &'static str {
        "bash"
    }
    fn description(&self) -> &'static str {
        "Execute a shell command with bash in the working directory. Use this for running \
         programs, terraform/kubectl/ansible commands, tests and git operations. stdin is \
         closed (commands must not wait for input). Commands time out after 120 seconds by \
         default (timeout parameter, at most 600). Output is returned with the exit code; very \
         long output keeps its beginning and end. Processes still running at a timeout or \
         cancel are killed."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The shell command to execute."},
                "timeout": {"type": "integer", "description": "Timeout in seconds. Defaults to 120, at most 600."}
            },
            "required": ["command"]
        })
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }
    fn access(&self) -> Access {
        Access::Execute
    }
    fn describe(&self, args: &Value, _ctx: &ToolContext) -> Invocation {
        let command = args.get("command").and_then(Value::as_str).unwrap_or("").trim();
        // The command itself, so that a client showing only the title shows what runs: one
        // printable line, a long one as its head and its tail (`text::Title`).
        let title = crate::text::Title::new(None, command).into_string();
        Invocation::plain(if title.is_empty() { "bash".to_string() } else { title })
    }
    fn command<'a>(&self, args: &'a Value) -> Option<Command<'a>> {
        let text = args.get("command").and_then(Value::as_str).unwrap_or("");
        let parsed = parse_args::<Args>(self.name(), args);
        let timeout = parsed.and_then(|a| timeout_of(a.timeout)).map(|(t, _)| t);
        let timeout = timeout.map_err(|err| match err {
            ToolError::Model(message) | ToolError::Fatal(message) => message,
        });
        Some(Command { text, timeout })
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        if args.command.trim().is_empty() {
            return Err(ToolError::Model("command is empty".to_string()));
        }
        let (timeout, note) = timeout_of(args.timeout)?;
        // Exactly what the gate approved (`apply <the plan shown>`), when it prepared one.
        let command = ctx.prepared.unwrap_or(&args.command);
        if ctx.files.terminals() {
            return super::terminal::run(command, timeout, note, ctx);
        }
        let run = execute(command, timeout, ctx)?;
        report(run, timeout, note)
    }
}

pub(super) fn timeout_of(requested: Option<f64>) -> Result<(Duration, Option<String>), ToolError> {
    let Some(secs) = requested else { return Ok((DEFAULT_TIMEOUT, None)) };
    if !secs.is_finite() || secs <= 0.0 {
        return Err(ToolError::Model(format!(
            "timeout must be a positive number of seconds, got {secs}"
        )));
    }
    if secs > MAX_TIMEOUT.as_secs_f64() {
        let note = format!("(timeout {secs} s was lowered to the maximum, 600 s)");
        return Ok((MAX_TIMEOUT, Some(note)));
    }
    Ok((Duration::from_secs_f64(secs), None))
}

fn report(run: Run, timeout: Duration, note: Option<String>) -> Result<ToolOutput, ToolError> {
    let stdout = run.stdout.text();
    let stderr = run.stderr.text();
    let mut text = String::new();
    if !stdout.is_empty() {
        text.push_str(&format!("STDOUT:\n{}\n", stdout.trim_end_matches('\n')));
    }
    if !stderr.is_empty() {
        text.push_str(&format!("STDERR:\n{}\n", stderr.trim_end_matches('\n')));
    }
    if stdout.is_empty() && stderr.is_empty() {
        text.push_str("(no output)\n");
    }
    if let Some(note) = note {
        text.push_str(&note);
        text.push('\n');
    }
    let code = match run.end {
        End::Cancelled => {
            return Err(ToolError::Model(format!(
                "Command cancelled by the user; it and every process it started were killed.\n{text}"
            )));
        }
        End::TimedOut => {
            return Err(ToolError::Model(format!(
                "Command timed out after {} s; it and every process it started were killed.\n{text}",
                timeout.as_secs_f64()
            )));
        }
        End::Exited(status) => match (status.code(), status.signal()) {
            (Some(code), _) => code,
            (None, Some(signal)) => 128 + signal,
            (None, None) => 255,
        },
    };
    if run.pipe_holders > 0 {
        text.push_str(&format!(
            "(stopped {} background process(es) that kept the output open {} s after the \
             command exited; redirect the output of processes meant to keep running)\n",
            run.pipe_holders,
            IO_DRAIN.as_secs()
        ));
    }
    if !run.left_running.is_empty() {
        let named: Vec<String> =
            run.left_running.iter().map(|p| format!("pid {} `{}`", p.pid, p.command)).collect();
        text.push_str(&format!(
            "left running: {} (they are stopped when the session ends)\n",
            named.join(", ")
        ));
    }
    if !run.undone.is_empty() {
        let named: Vec<String> = run.undone.iter().map(|p| format!("`{}`", p.display())).collect();
        text.push_str(&format!(
            "the sandbox removed what this command created where only a person may: {} \
             (ask the user to run it if it is meant)\n",
            named.join(", ")
        ));
    }
    text.push_str(&format!("Exit code: {code}"));
    let truncated = run.stdout.total > (KEEP_HEAD + KEEP_TAIL) as u64
        || run.stderr.total > (KEEP_HEAD + KEEP_TAIL) as u64;
    if code != 0 {
        return Err(ToolError::Model(text));
    }
    let raw = json!({
        "exitCode": code,
        "stdoutBytes": run.stdout.total,
        "stderrBytes": run.stderr.total,
        "truncated": truncated,
        "leftRunning": run.left_running.iter().map(|p| p.pid).collect::<Vec<_>>(),
    });
    Ok(ToolOutput { text, raw, diff: None, ..ToolOutput::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_bounded() {
        assert_eq!(timeout_of(None).unwrap().0, DEFAULT_TIMEOUT);
        assert_eq!(timeout_of(Some(120000.0)).unwrap().0, MAX_TIMEOUT);
        assert!(timeout_of(Some(0.0)).is_err());
        assert_eq!(timeout_of(Some(1.5)).unwrap().0, Duration::from_millis(1500));
    }
}
