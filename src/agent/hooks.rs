//! The hooks of a turn (`Turn.hooks`): `PreToolUse` after a call is announced and before
//! its permission decision (what the hooks say is one more input to `gate::decide`),
//! `PostToolUse` after it ran (what they say joins the result the model gets), and `Stop`
//! when the model ends the turn (a block makes the turn go on with its reason as the next
//! instruction, at most `MAX_STOP_CONTINUATIONS` times per prompt; never for a
//! sub-agent). Each hook that ran is a line of the call's content; a hook that failed is
//! a notice. Hooks run in every mode, bypass included.

use serde_json::{Value, json};

use super::event::AgentEvent;
use super::{CANCELLED_RESULT, Turn};
use crate::history::ToolUse;
use crate::hooks::wire::About;
use crate::hooks::{Event, Report};
use crate::rules::Verdict;
use crate::sync::lock;
use crate::tools::{Invocation, Tool};

/// How many times per prompt the `Stop` hooks may make the turn go on.
pub(super) const MAX_STOP_CONTINUATIONS: u32 = 3;

/// The session's mode now, as a hook's input names it.
fn mode(turn: &Turn) -> &'static str {
    lock(turn.settings).mode.id()
}

/// Tells the client what ran: the lines in the call's content (kept in `lines` for its
/// end), the warnings as notices.
fn tell(turn: &Turn, id: Option<&str>, report: &Report, lines: &mut Vec<String>) {
    if report.is_empty() {
        return;
    }
    // What a hook printed, and the command it is, may hold a secret: the client sees
    // them as the model would.
    let redact = |text: &str| turn.record.vault.redact(text).0;
    lines.extend(report.lines().iter().map(|l| redact(l)));
    if let Some(id) = id {
        turn.client.sink.emit(AgentEvent::ToolHooks { id: id.to_string(), lines: lines.clone() });
    }
    for warning in report.warnings() {
        turn.client.sink.emit(AgentEvent::Notice(format!("{}\n\n", redact(&warning))));
    }
}

/// Runs the hooks of `about` whose matchers match the call, and tells the client.
fn run_for_call(turn: &Turn, at: &HookCall, about: &About, lines: &mut Vec<String>) -> Report {
    let (name, cwd) = (at.tool.name(), turn.place.cwd);
    let report = crate::gate::with_subject(name, at.invocation, cwd, |subject| {
        let matches = |spec: &crate::hooks::HookSpec| spec.matches_call(subject);
        turn.team.hooks.run(about, Some(mode(turn)), matches, turn.cancel)
    });
    tell(turn, Some(at.id), &report, lines);
    report
}

/// The call a tool hook is about: its id in the client, the model's call, the tool, its
/// arguments and what the tool said it would do.
pub(super) struct HookCall<'a> {
    pub(super) id: &'a str,
    pub(super) call: &'a ToolUse,
    pub(super) tool: &'a dyn Tool,
    pub(super) args: &'a Value,
    pub(super) invocation: &'a Invocation,
}

/// Runs the `PreToolUse` hooks that match the call; what they say for the permission
/// gate. `Err`: the turn was cancelled while they ran.
pub(super) fn pre_tool_use(
    turn: &Turn,
    at: &HookCall,
    lines: &mut Vec<String>,
) -> Result<Option<(Verdict, String)>, String> {
    if !turn.team.hooks.any(Event::PreToolUse) {
        return Ok(None);
    }
    let about = About::PreToolUse {
        tool_name: at.tool.name(),
        tool_input: at.args,
        tool_use_id: &at.call.id,
    };
    let report = run_for_call(turn, at, &about, lines);
    if report.cancelled() {
        return Err(CANCELLED_RESULT.to_string());
    }
    Ok(report.decision())
}

/// Runs the `PostToolUse` hooks that match a call that ran (`ok`: it succeeded, `text`
/// what the model gets, `raw` its structured output); what they say for the model, to
/// add to the result.
pub(super) fn post_tool_use(
    turn: &Turn,
    at: &HookCall,
    (ok, text, raw): (bool, &str, &Value),
    lines: &mut Vec<String>,
) -> Option<String> {
    if !turn.team.hooks.any(Event::PostToolUse) {
        return None;
    }
    let mut response = match raw {
        Value::Object(fields) => Value::Object(fields.clone()),
        Value::Null => json!({}),
        other => json!({ "value": other }),
    };
    if let Value::Object(fields) = &mut response {
        fields.entry("output").or_insert_with(|| Value::String(text.to_string()));
    }
    let about = About::PostToolUse {
        tool_name: at.tool.name(),
        tool_input: at.args,
        tool_use_id: &at.call.id,
        tool_response: &response,
        ok,
    };
    let report = run_for_call(turn, at, &about, lines);
    report.context().map(|feedback| format!("\n\n{feedback}"))
}

/// Runs the `Stop` hooks when the model ended the turn; the next instruction when one
/// blocked and the turn may still go on (`continued`: how often it already did).
pub(super) fn stop(turn: &Turn, continued: &mut u32) -> Option<String> {
    if turn.nested || !turn.team.hooks.any(Event::Stop) || turn.cancel.is_cancelled() {
        return None;
    }
    let about = About::Stop { stop_hook_active: *continued > 0 };
    let report = turn.team.hooks.run(&about, Some(mode(turn)), |_| true, turn.cancel);
    let mut lines = Vec::new();
    tell(turn, None, &report, &mut lines);
    for line in &lines {
        turn.client.sink.emit(AgentEvent::Notice(format!("[{line}]\n\n")));
    }
    let block = report.block()?;
    if *continued >= MAX_STOP_CONTINUATIONS {
        turn.client.sink.emit(AgentEvent::Notice(format!(
            "[The Stop hooks asked to go on {MAX_STOP_CONTINUATIONS} times already: the \
             turn ends here.]\n\n"
        )));
        return None;
    }
    *continued += 1;
    Some(format!("The turn is not over: {block}"))
}
