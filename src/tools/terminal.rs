//! `bash` in the client's terminal, when the client offers terminals: the user watches
//! the command live in the editor; we create the terminal, wait (under the timeout and the
//! cancel), kill it if need be, read its output, and always release it (`acp/client.rs`).

use std::time::Duration;

use serde_json::json;

use super::limits::{KEEP_HEAD, KEEP_TAIL};
use super::process::command_env;
use super::{TerminalCommand, ToolContext, ToolError, ToolOutput};

/// Runs the command in the client's terminal (the user watches it live): the same marker
/// and non-interactive variables as a local run, the same output cap, the same timeout.
pub(super) fn run(
    command: &str,
    timeout: Duration,
    note: Option<String>,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let marker = uuid::Uuid::new_v4().simple().to_string();
    let env = command_env(&marker);
    let limit = (KEEP_HEAD + KEEP_TAIL) as u64;
    let spec = TerminalCommand { command, cwd: ctx.cwd, env: &env, output_limit: limit, timeout };
    let run = ctx.files.run(&spec, ctx.cancel, ctx.terminal).map_err(|err| match err.as_str() {
        "cancelled" => ToolError::Model(
            "Command cancelled by the user; the editor's terminal was killed.".to_string(),
        ),
        _ => ToolError::Model(format!("the editor's terminal failed: {err}")),
    })?;
    let mut text = if run.output.is_empty() {
        "(no output)\n".to_string()
    } else {
        format!("OUTPUT:\n{}\n", run.output.trim_end_matches('\n'))
    };
    if run.truncated {
        text.push_str("(the editor kept only the last part of the output)\n");
    }
    if let Some(note) = note {
        text.push_str(&note);
        text.push('\n');
    }
    if run.timed_out {
        return Err(ToolError::Model(format!(
            "Command timed out after {} s; the editor's terminal was killed.\n{text}",
            timeout.as_secs_f64()
        )));
    }
    let code = match (&run.exit_code, &run.signal) {
        (Some(code), _) => *code,
        (None, Some(signal)) => {
            text.push_str(&format!("Killed by signal {signal}\n"));
            -1
        }
        (None, None) => -1,
    };
    text.push_str(&format!("Exit code: {code}"));
    let raw = json!({"exitCode": code, "truncated": run.truncated, "terminal": true});
    if code != 0 {
        return Err(ToolError::Model(text));
    }
    // The terminal was shown while it lived; it is released now, so the final update carries
    // the text (success and failure alike).
    Ok(ToolOutput { text, raw, ..ToolOutput::default() })
}
