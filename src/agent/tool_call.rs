//! One tool call: announce it, pass the permission gate, run it, report the result. Errors
//! go back to the model; only a broken server aborts the turn.

use serde_json::Value;

use super::event::{AgentEvent, SettingsChange, ToolCallEnd, ToolCallStart};
use super::sub_agent::SubAgents;
use super::{CANCELLED_RESULT, Turn};
use crate::history::{ChatMessage, ToolUse};
use crate::permission::{self, Answer, Decision, Question};
use crate::sync::lock;
use crate::tools::{
    Choice, ChoiceKind, HostReach, MAX_TOOL_OUTPUT_CHARS, NetworkGate, ToolContext, ToolError,
    ToolKind, ToolOutput, truncate_middle,
};

/// Runs one call and returns its result message, already recorded. `Err` only for a fatal
/// tool error.
pub(super) fn run(turn: &Turn, call: &ToolUse) -> Result<ChatMessage, String> {
    let id = format!("tc_{}", uuid::Uuid::new_v4().simple());
    let progress = |text: String| turn.sink.emit(AgentEvent::ToolProgress { id: id.clone(), text });
    let terminal = |terminal: &str| {
        let terminal = terminal.to_string();
        turn.sink.emit(AgentEvent::ToolTerminal { id: id.clone(), terminal });
    };
    let sub_agents = SubAgents { parent: turn, call_id: &id };
    let config_dir =
        crate::tools::paths::real(turn.config_dir).unwrap_or_else(|| turn.config_dir.to_path_buf());
    let network = Network { turn, id: &id };
    let ctx = ToolContext {
        cwd: turn.cwd,
        cancel: turn.cancel,
        config_dir: &config_dir,
        progress: &progress,
        delegate: if turn.nested { None } else { Some(&sub_agents) },
        targets: &[],
        network: &network,
        jobs: turn.jobs,
        files: turn.files,
        terminal: &terminal,
        images: turn.images,
    };
    let args = parse_arguments(&call.arguments);
    let found = turn.tool(&call.name);
    let Some(tool) = found.as_deref() else {
        let external = turn.external.current();
        let names: Vec<&str> =
            turn.tools.iter().map(|t| t.name()).chain(external.iter().map(|t| t.name())).collect();
        announce(
            turn,
            &id,
            call.name.clone(),
            ToolKind::Other,
            args.clone().unwrap_or(Value::Null),
            Vec::new(),
        );
        let message =
            format!("Unknown tool '{}'. Available tools: {}.", call.name, names.join(", "));
        return Ok(fail(turn, &id, call, message));
    };
    let args = match args {
        Ok(args) => args,
        Err(message) => {
            announce(
                turn,
                &id,
                call.name.clone(),
                tool.kind(),
                Value::String(call.arguments.clone()),
                Vec::new(),
            );
            return Ok(fail(turn, &id, call, message));
        }
    };
    let invocation = tool.describe(&args, &ctx);
    announce(
        turn,
        &id,
        invocation.title.clone(),
        tool.kind(),
        args.clone(),
        invocation.locations.clone(),
    );

    let decision = {
        let settings = lock(turn.settings);
        permission::decide(
            settings.mode,
            &settings.memory,
            &tool.memory_key(),
            tool.access(),
            permission::Reach {
                outside_cwd: invocation.outside_cwd,
                sensitive: invocation.sensitive.is_some(),
            },
        )
    };
    match decision {
        Decision::Allow => {}
        Decision::Deny(message) => return Ok(fail(turn, &id, call, message)),
        Decision::Ask { offer_always } => {
            let mut title = invocation.title.clone();
            let mut reasons: Vec<String> =
                invocation.targets.iter().flat_map(|t| t.reasons()).collect();
            if invocation.targets.is_empty() {
                if invocation.outside_cwd {
                    reasons.push("outside the project".to_string());
                }
                reasons.extend(invocation.sensitive.clone());
            }
            if !reasons.is_empty() {
                title = format!("{title} ({})", reasons.join("; "));
            }
            let question = Question {
                tool_call_id: id.clone(),
                tool: tool.name().to_string(),
                title,
                kind: tool.kind(),
                input: args.clone(),
                locations: invocation.locations.clone(),
                offer_always: offer_always && tool.offers_always(),
                choices: Vec::new(),
            };
            let answer = turn.asker.ask(&question, turn.cancel);
            lock(turn.settings).memory.record(&tool.memory_key(), answer);
            if !answer.allows() {
                let message = if answer == Answer::Cancelled && turn.cancel.is_cancelled() {
                    CANCELLED_RESULT
                } else {
                    permission::DENIED
                };
                return Ok(fail(turn, &id, call, message.to_string()));
            }
        }
    }

    if turn.cancel.is_cancelled() {
        return Ok(fail(turn, &id, call, CANCELLED_RESULT.to_string()));
    }
    turn.sink.emit(AgentEvent::ToolRunning { id: id.clone() });
    log::debug!("tool {} running", tool.name());
    // The call opens exactly what the gate judged.
    let ctx = ToolContext { targets: &invocation.targets, ..ctx };
    match tool.run(&args, &ctx) {
        Ok(output) => Ok(succeed(turn, &id, call, output)),
        Err(ToolError::Model(message)) => Ok(fail(turn, &id, call, message)),
        Err(ToolError::Fatal(message)) => {
            let _ = fail(turn, &id, call, message.clone());
            Err(format!("tool {} failed: {message}", tool.name()))
        }
    }
}

/// The permission gate for network targets a running call meets (web_fetch hosts and
/// redirect hops): the session's mode and `webFetch` policy, and a question when needed.
struct Network<'t> {
    turn: &'t Turn<'t>,
    id: &'t str,
}

impl NetworkGate for Network<'_> {
    fn choose(&self, title: &str, options: &[Choice]) -> Result<Option<&'static str>, String> {
        if lock(self.turn.settings).mode != permission::Mode::Plan {
            return Err("not in plan mode: nothing to leave".to_string());
        }
        let answer_of = |kind: ChoiceKind| match kind {
            ChoiceKind::AllowAlways => Answer::AllowAlways,
            ChoiceKind::AllowOnce => Answer::AllowOnce,
            ChoiceKind::Reject => Answer::RejectOnce,
        };
        let question = Question {
            tool_call_id: self.id.to_string(),
            tool: "exit_plan_mode".to_string(),
            title: title.to_string(),
            kind: ToolKind::SwitchMode,
            input: serde_json::json!({}),
            locations: Vec::new(),
            offer_always: false,
            choices: options
                .iter()
                .map(|c| (c.id, c.name.to_string(), answer_of(c.kind)))
                .collect(),
        };
        let answer = self.turn.asker.ask(&question, self.turn.cancel);
        if answer == Answer::Cancelled && self.turn.cancel.is_cancelled() {
            return Err(CANCELLED_RESULT.to_string());
        }
        Ok(options.iter().find(|c| answer_of(c.kind) == answer && answer.allows()).map(|c| c.id))
    }

    fn open(&self) -> Result<(), String> {
        match permission::network_refused(self.turn.limits.web_fetch) {
            Some(why) => Err(why.to_string()),
            None => Ok(()),
        }
    }

    fn reach(&self, target: &HostReach) -> Result<(), String> {
        let decision = {
            let settings = lock(self.turn.settings);
            permission::decide_network(
                settings.mode,
                &settings.memory,
                self.turn.limits.web_fetch,
                &target.host,
                target.internal.as_deref(),
            )
        };
        let offer_always = match decision {
            Decision::Allow => return Ok(()),
            Decision::Deny(message) => return Err(message),
            Decision::Ask { offer_always } => offer_always,
        };
        let why = match &target.internal {
            Some(why) => format!("{} is {why}", target.host),
            None => format!("first request to {}", target.host),
        };
        let question = Question {
            tool_call_id: self.id.to_string(),
            tool: "web_fetch".to_string(),
            title: format!("Fetch {} ({why})", target.url),
            kind: ToolKind::Fetch,
            input: serde_json::json!({"url": target.url}),
            locations: Vec::new(),
            offer_always,
            choices: Vec::new(),
        };
        let answer = self.turn.asker.ask(&question, self.turn.cancel);
        if offer_always {
            lock(self.turn.settings).memory.record_host(&target.host, answer);
        }
        match answer {
            _ if answer.allows() => Ok(()),
            Answer::Cancelled if self.turn.cancel.is_cancelled() => Err(CANCELLED_RESULT.into()),
            _ => Err(permission::DENIED.to_string()),
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
    title: String,
    kind: ToolKind,
    input: Value,
    locations: Vec<(std::path::PathBuf, Option<u32>)>,
) {
    turn.sink.emit(AgentEvent::ToolCall(ToolCallStart {
        id: id.to_string(),
        title,
        kind,
        input,
        locations,
        parent: None,
    }));
}

/// The result is recorded before the client hears of it, so that a crash never loses a
/// result the client saw.
fn fail(turn: &Turn, id: &str, call: &ToolUse, message: String) -> ChatMessage {
    let message = truncate_middle(&message, MAX_TOOL_OUTPUT_CHARS);
    let result = ChatMessage::ToolResult {
        call_id: call.id.clone(),
        content: message.clone(),
        is_error: true,
        images: Vec::new(),
    };
    turn.recorder.message(&result);
    let raw = serde_json::json!({ "error": message });
    turn.sink.emit(AgentEvent::ToolDone(ToolCallEnd {
        id: id.to_string(),
        ok: false,
        text: message,
        raw,
        diff: None,
        terminal: None,
    }));
    result
}

fn succeed(turn: &Turn, id: &str, call: &ToolUse, output: ToolOutput) -> ChatMessage {
    let text = truncate_middle(&output.text, MAX_TOOL_OUTPUT_CHARS);
    let result = ChatMessage::ToolResult {
        call_id: call.id.clone(),
        content: text.clone(),
        is_error: false,
        images: output.images,
    };
    turn.recorder.message(&result);
    turn.sink.emit(AgentEvent::ToolDone(ToolCallEnd {
        id: id.to_string(),
        ok: true,
        text,
        raw: output.raw,
        diff: output.diff,
        terminal: output.terminal,
    }));
    if let Some(plan) = output.plan {
        turn.sink.emit(AgentEvent::Plan(plan));
    }
    if let Some(mode) = output.mode.and_then(permission::Mode::from_id) {
        let model = {
            let mut settings = lock(turn.settings);
            settings.mode = mode;
            settings.model.clone()
        };
        turn.recorder.mode(mode.id());
        let change = SettingsChange { mode: mode.id().to_string(), mode_changed: true, model };
        turn.sink.emit(AgentEvent::Settings(change));
    }
    result
}
