//! One tool call: announce it, run its `PreToolUse` hooks, pass the gate (`crate::gate`), run
//! it, run its `PostToolUse` hooks, report the result. Errors go back to the model; only
//! a broken server aborts the turn.

use serde_json::Value;

use super::event::{AgentEvent, SettingsChange, ToolCallEnd, ToolCallStart};
use super::hooks::HookCall;
use super::sub_agent::SubAgents;
use super::{CANCELLED_RESULT, Turn};
use crate::gate::{self, Network, Passed};
use crate::history::{ChatMessage, ToolUse};
use crate::sync::lock;
use crate::tools::{
    Invocation, MAX_TOOL_OUTPUT_CHARS, Tool, ToolContext, ToolError, ToolKind, ToolOutput,
    truncate_middle,
};

/// Runs one call and returns its result message, already recorded; a question it could
/// not put while it ran (`ToolOutput::ask`) is added to `asked`. `Err` only for a fatal
/// tool error.
pub(super) fn run(
    turn: &Turn,
    call: &ToolUse,
    asked: &mut Vec<String>,
) -> Result<ChatMessage, String> {
    let id = format!("tc_{}", uuid::Uuid::new_v4().simple());
    let progress = |text: String| {
        let (text, _) = turn.record.vault.redact(&text);
        turn.client.sink.emit(AgentEvent::ToolProgress { id: id.clone(), text });
    };
    let terminal = |terminal: &str| {
        let terminal = terminal.to_string();
        turn.client.sink.emit(AgentEvent::ToolTerminal { id: id.clone(), terminal });
    };
    let sub_agents = SubAgents { parent: turn, call_id: &id };
    let config_dir = crate::tools::paths::real(turn.place.config_dir)
        .unwrap_or_else(|| turn.place.config_dir.to_path_buf());
    let network = Network { host: turn, id: &id };
    let approved = turn.team.hooks.covered();
    let ctx = ToolContext {
        cwd: turn.place.cwd,
        extra: turn.place.extra,
        cancel: turn.cancel,
        config_dir: &config_dir,
        progress: &progress,
        delegate: if turn.nested { None } else { Some(&sub_agents) },
        targets: &[],
        network: &network,
        jobs: turn.calls.jobs,
        files: turn.calls.files,
        terminal: &terminal,
        images: turn.model.images,
        prepared: None,
        skills: turn.calls.skills,
        // Until the gate says otherwise, a command is sealed in (fail closed).
        sandbox: crate::sandbox::Run::Confined(crate::sandbox::Profile::Sealed),
        approved: &approved,
        plan_file: None,
    };
    let (found, args, restored) = match resolve(turn, &id, call) {
        Ok(resolved) => resolved,
        Err(failed) => return Ok(failed),
    };
    let tool = found.as_ref();
    let mut invocation = gate::describe(tool, &args, &ctx);
    if restored != args {
        let named = crate::secret::placeholders_in(&args.to_string());
        invocation.title =
            format!("{} (with the values of {})", invocation.title, named.join(", "));
        invocation.gate.restores = named;
    }
    crate::skills::calls::reach(turn.calls.skills, tool, &mut invocation);
    announce(turn, &id, call, tool.kind(), args.clone(), Some(&invocation));
    let mut hooks = Vec::new();
    // A call the active skill does not allow is refused before any hook runs for it.
    let said =
        match crate::skills::calls::refused(turn.calls.skills, turn.place.cwd, tool, &invocation) {
            Some(why) => Err(why),
            None => {
                let at = HookCall { id: &id, call, tool, args: &args, invocation: &invocation };
                super::hooks::pre_tool_use(turn, &at, &mut hooks)
            }
        };
    let passed =
        said.and_then(|said| gate::pass(turn, &id, tool, &args, &mut invocation, &ctx, said));
    let result = match passed {
        Ok((passed, sandbox)) => {
            let run = Run {
                id: &id,
                call,
                tool,
                args: &args,
                restored: &restored,
                invocation: &invocation,
                hooks,
            };
            execute(turn, run, ToolContext { sandbox, ..ctx }, passed, asked)
        }
        Err(message) => Ok(fail(turn, &id, call, message, hooks)),
    };
    gate::remove_scratch(&invocation.gate.scratch);
    result
}

/// The tools whose arguments get the values back, and which: a command, a file's content
/// (never its path), an MCP call's arguments (`None`: all). Nothing else does: not a URL
/// (`web_fetch`), a question (`ask_user`, `exit_plan_mode`), a plan, a sub-agent's prompt,
/// a path or a pattern.
const RESTORED: [(&str, Option<&[&str]>); 3] = [
    ("bash", Some(&["command"])),
    ("write_file", Some(&["content"])),
    ("edit_file", Some(&["old_string", "new_string"])),
];

/// `args` with the session's placeholders restored, for the tools that get values.
/// Memory never holds a secret: a placeholder there is refused rather than restored
/// (memory reaches every later prompt).
fn restore(turn: &Turn, tool: &dyn Tool, args: &Value) -> Result<Value, String> {
    let name = tool.name();
    if name == "write_memory" && args.to_string().contains(crate::secret::OPEN) {
        return Err(
            "Refused: memory never holds secrets, and a placeholder stands for one.".to_string()
        );
    }
    let fields = match RESTORED.iter().find(|(tool, _)| *tool == name) {
        Some((_, fields)) => *fields,
        None if name.starts_with("mcp__") => None,
        None => return Ok(args.clone()),
    };
    let restored = match (fields, args) {
        (Some(fields), Value::Object(map)) => {
            let mut out = map.clone();
            for (key, value) in map {
                if fields.contains(&key.as_str()) {
                    out.insert(key.clone(), turn.record.vault.restore_value(value)?);
                } else if value.to_string().contains(crate::secret::OPEN)
                    && !crate::secret::placeholders_in(&value.to_string()).is_empty()
                {
                    return Err(format!(
                        "Refused: `{key}` of {name} never takes a secret's value (only {} \
                         do): nothing ran.",
                        fields.join(", ")
                    ));
                }
            }
            Value::Object(out)
        }
        _ => turn.record.vault.restore_value(args)?,
    };
    if let (Some(shown), Some(real)) = (tool.command(args), tool.command(&restored)) {
        gate::restored_command(shown.text, real.text, turn.place.cwd, turn.place.config_dir)?;
    }
    Ok(restored)
}

/// A call that passed the gate, and the lines of the hooks that ran for it so far.
struct Run<'a> {
    id: &'a str,
    call: &'a ToolUse,
    tool: &'a dyn Tool,
    args: &'a Value,
    /// `args` with the placeholders restored: what the tool runs with.
    restored: &'a Value,
    invocation: &'a Invocation,
    hooks: Vec<String>,
}

/// Runs a call that passed the gate, then its `PostToolUse` hooks.
fn execute(
    turn: &Turn,
    run: Run,
    ctx: ToolContext,
    passed: Passed,
    asked: &mut Vec<String>,
) -> Result<ChatMessage, String> {
    let Run { id, call, tool, args, restored, invocation, mut hooks } = run;
    if turn.cancel.is_cancelled() {
        return Ok(fail(turn, id, call, CANCELLED_RESULT.to_string(), hooks));
    }
    if let Err(message) = invocation.gate.verify() {
        return Ok(fail(turn, id, call, message, hooks));
    }
    let sandbox = invocation.gate.tier.map(|_| ctx.sandbox);
    turn.client.sink.emit(AgentEvent::ToolRunning { id: id.to_string(), sandbox });
    log::debug!("tool {} running", tool.name());
    // The call opens exactly what the gate judged, and runs exactly what it approved.
    let ctx = ToolContext {
        targets: &invocation.targets,
        prepared: invocation.gate.prepared.as_deref(),
        plan_file: invocation.gate.shown_plan.as_ref().map(|(path, _)| path.as_path()),
        ..ctx
    };
    let result = tool.run(restored, &ctx);
    if passed == Passed::Unasked {
        gate::ran_unasked(turn, tool, invocation);
    }
    let at = HookCall { id, call, tool, args, invocation };
    let post = |ok: bool, text: &str, raw: &Value, hooks: &mut Vec<String>| {
        super::hooks::post_tool_use(turn, &at, (ok, text, raw), hooks)
    };
    let notes = &invocation.gate.notes;
    match result {
        Ok(mut output) => {
            for note in notes {
                output.text.push_str(&format!("\n{note}"));
            }
            if let Some(said) = post(true, &output.text, &output.raw, &mut hooks) {
                output.text.push_str(&said);
            }
            asked.extend(output.ask.take());
            Ok(succeed(turn, id, call, output, hooks))
        }
        Err(ToolError::Model(mut message)) => {
            for note in notes {
                message.push_str(&format!("\n{note}"));
            }
            let raw = serde_json::json!({ "error": message });
            if let Some(said) = post(false, &message, &raw, &mut hooks) {
                message.push_str(&said);
            }
            Ok(fail(turn, id, call, message, hooks))
        }
        Err(ToolError::Fatal(message)) => {
            let _ = fail(turn, id, call, message.clone(), hooks);
            Err(format!("tool {} failed: {message}", tool.name()))
        }
    }
}

fn parse_arguments(raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!("tool arguments must be a JSON object, got: {other}")),
        Err(err) => Err(format!("tool arguments are not valid JSON ({err}): {raw}")),
    }
}

fn announce(
    turn: &Turn,
    id: &str,
    call: &ToolUse,
    kind: ToolKind,
    input: Value,
    invocation: Option<&Invocation>,
) {
    let start = ToolCallStart::announced(id.to_string(), &call.name, kind, input, invocation);
    turn.client.sink.emit(AgentEvent::ToolCall(start));
}

/// The result is recorded before the client hears of it, so that a crash never loses a
/// result the client saw.
fn fail(turn: &Turn, id: &str, call: &ToolUse, message: String, hooks: Vec<String>) -> ChatMessage {
    let (message, mut redacted) = turn.record.vault.redact(&message);
    let message = truncate_middle(&message, MAX_TOOL_OUTPUT_CHARS);
    let hooks = redact_lines(turn, hooks, &mut redacted);
    let result = ChatMessage::ToolResult {
        call_id: call.id.clone(),
        content: message.clone(),
        is_error: true,
        images: Vec::new(),
    };
    turn.record.recorder.message(&result);
    let raw = serde_json::json!({ "error": message });
    turn.client.sink.emit(AgentEvent::ToolDone(ToolCallEnd {
        id: id.to_string(),
        ok: false,
        text: message,
        raw,
        diff: None,
        terminal: None,
        hooks,
        redacted,
    }));
    result
}

fn succeed(
    turn: &Turn,
    id: &str,
    call: &ToolUse,
    mut output: ToolOutput,
    hooks: Vec<String>,
) -> ChatMessage {
    // What the model, the journal and the client get: secrets as placeholders.
    turn.record.vault.refresh(turn.place.cwd);
    let (text, mut redacted) = turn.record.vault.redact(&output.text);
    let text = truncate_middle(&text, MAX_TOOL_OUTPUT_CHARS);
    // The raw output, the diff and the hooks' lines are other views of the same secrets:
    // their kinds count, and their number only where the text shows fewer.
    let mut views = crate::secret::Tally::default();
    turn.record.vault.redact_value(&mut output.raw, &mut views);
    if let Some(diff) = &mut output.diff {
        for side in [diff.old_text.as_mut(), Some(&mut diff.new_text)].into_iter().flatten() {
            let (safe, tally) = turn.record.vault.redact(side);
            *side = safe;
            views.merge(tally);
        }
    }
    let hooks = redact_lines(turn, hooks, &mut views);
    redacted.merge_view(views);
    let result = ChatMessage::ToolResult {
        call_id: call.id.clone(),
        content: text.clone(),
        is_error: false,
        images: output.images,
    };
    turn.record.recorder.message(&result);
    turn.client.sink.emit(AgentEvent::ToolDone(ToolCallEnd {
        id: id.to_string(),
        ok: true,
        text,
        raw: output.raw,
        diff: output.diff,
        terminal: output.terminal,
        hooks,
        redacted,
    }));
    if let Some(plan) = output.plan {
        turn.client.sink.emit(AgentEvent::Plan(plan));
    }
    if let Some(mode) = output.mode.and_then(gate::Mode::from_id) {
        let (model, thinking) = {
            let mut settings = lock(turn.settings);
            settings.mode = mode;
            (settings.model.clone(), settings.thinking)
        };
        turn.record.recorder.mode(mode.id());
        let mode = mode.id().to_string();
        let change = SettingsChange { mode, mode_changed: true, model, thinking };
        turn.client.sink.emit(AgentEvent::Settings(change));
    }
    result
}

/// The hooks' lines of a call, redacted.
fn redact_lines(turn: &Turn, lines: Vec<String>, tally: &mut crate::secret::Tally) -> Vec<String> {
    lines
        .into_iter()
        .map(|line| {
            let (line, more) = turn.record.vault.redact(&line);
            tally.merge(more);
            line
        })
        .collect()
}

/// Shows the questions of calls that could not put them (`ask_user` without a client that
/// renders forms) as the agent's message, recorded like a reply, which ends the turn.
pub(super) fn show_questions(turn: &Turn, history: &mut Vec<ChatMessage>, asked: Vec<String>) {
    let text = asked.join("\n\n");
    turn.client.sink.emit(AgentEvent::Text(text.clone()));
    let message = ChatMessage::Assistant {
        text,
        thinking: String::new(),
        signed: Vec::new(),
        tool_calls: Vec::new(),
    };
    super::push(turn, history, message);
}

/// The tool a call names, its arguments, and the arguments with the session's secrets
/// restored; `Err`: the call failed (unknown tool, arguments that are no JSON object, a
/// placeholder the session never gave), announced and answered.
fn resolve(
    turn: &Turn,
    id: &str,
    call: &ToolUse,
) -> Result<(std::sync::Arc<dyn Tool>, Value, Value), ChatMessage> {
    let args = parse_arguments(&call.arguments);
    let Some(tool) = turn.tool(&call.name) else {
        let external = turn.calls.external.current();
        let builtin = turn.calls.tools.iter().map(|t| t.name());
        let names: Vec<&str> = builtin.chain(external.iter().map(|t| t.name())).collect();
        let input = args.unwrap_or(Value::Null);
        announce(turn, id, call, ToolKind::Other, input, None);
        let message =
            format!("Unknown tool '{}'. Available tools: {}.", call.name, names.join(", "));
        return Err(fail(turn, id, call, message, Vec::new()));
    };
    let args = match args {
        Ok(args) => args,
        Err(message) => {
            let raw = Value::String(call.arguments.clone());
            announce(turn, id, call, tool.kind(), raw, None);
            return Err(fail(turn, id, call, message, Vec::new()));
        }
    };
    // The model's placeholders stand for the session's secrets: the tool gets the values,
    // the question and the hooks see the placeholders; one the session never gave is an
    // error, never passed on as text.
    match restore(turn, tool.as_ref(), &args) {
        Ok(restored) => Ok((tool, args, restored)),
        Err(message) => {
            announce(turn, id, call, tool.kind(), args, None);
            Err(fail(turn, id, call, message, Vec::new()))
        }
    }
}
