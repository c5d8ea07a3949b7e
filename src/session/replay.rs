//! Replay for `session/load`: the stored conversation as the events a live turn produced
//! (user text, thoughts, replies, each tool call and its final result), so a client can
//! rebuild its view. Titles and kinds come from the tools, as they did live.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::agent::event::{AgentEvent, ToolCallEnd, ToolCallStart};
use crate::cancel::CancelToken;
use crate::history::ChatMessage;
use crate::tools::{PlanStep, Registry, ToolContext, ToolKind};

/// The events that replay `all`, each message under its id in `message_ids` (one each).
pub fn events(
    all: &[ChatMessage],
    message_ids: &[String],
    tools: &Registry,
    cwd: &Path,
    config_dir: &Path,
) -> Vec<AgentEvent> {
    let cancel = CancelToken::new();
    let progress = |_: String| {};
    let jobs = crate::child::Jobs::default();
    let ctx = ToolContext {
        images: false,
        cwd,
        extra: &[],
        cancel: &cancel,
        config_dir,
        progress: &progress,
        delegate: None,
        targets: &[],
        network: &crate::tools::NoNetwork,
        jobs: &jobs,
        files: &crate::tools::NoClientTools,
        terminal: &|_: &str| {},
        prepared: None,
        skills: &crate::tools::NoSkills,
        sandbox: crate::sandbox::Run::Confined(crate::sandbox::Profile::Sealed),
        approved: &[],
        plan_file: None,
    };
    let mut out = Vec::new();
    // Each call's replay id, and the plan it set (shown again after its result).
    let mut ids: HashMap<&str, (String, Option<Vec<PlanStep>>)> = HashMap::new();
    for (index, message) in all.iter().enumerate() {
        let id = || {
            let id = message_ids.get(index).cloned();
            AgentEvent::MessageStart(id.unwrap_or_else(|| super::record::message_id(index)))
        };
        match message {
            ChatMessage::User { text, .. } => {
                out.push(id());
                out.push(AgentEvent::UserText(text.clone()));
            }
            ChatMessage::Assistant { text, thinking, tool_calls, .. } => {
                out.push(id());
                if !thinking.is_empty() {
                    out.push(AgentEvent::Thought(thinking.clone()));
                }
                if !text.is_empty() {
                    out.push(AgentEvent::Text(text.clone()));
                }
                for call in tool_calls {
                    let id = format!("replay-{index}-{}", call.id);
                    let input = serde_json::from_str::<Value>(&call.arguments)
                        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                    let plan = (call.name == "update_plan")
                        .then(|| crate::tools::plan_of(&input).ok())
                        .flatten();
                    let start = match tools.get(&call.name) {
                        Some(tool) => {
                            let invocation = crate::gate::describe(tool, &input, &ctx);
                            let kind = tool.kind();
                            ToolCallStart::announced(
                                id.clone(),
                                &call.name,
                                kind,
                                input,
                                Some(&invocation),
                            )
                        }
                        None => ToolCallStart::announced(
                            id.clone(),
                            &call.name,
                            ToolKind::Other,
                            input,
                            None,
                        ),
                    };
                    out.push(AgentEvent::ToolCall(start));
                    ids.insert(call.id.as_str(), (id, plan));
                }
            }
            ChatMessage::ToolResult { call_id, content, is_error, .. } => {
                if let Some((id, plan)) = ids.remove(call_id.as_str()) {
                    out.push(AgentEvent::ToolDone(ToolCallEnd {
                        id,
                        ok: !is_error,
                        text: content.clone(),
                        raw: Value::Null,
                        diff: None,
                        terminal: None,
                        hooks: Vec::new(),
                        redacted: Default::default(),
                    }));
                    if let Some(plan) = plan.filter(|_| !is_error) {
                        out.push(AgentEvent::Plan(plan));
                    }
                }
            }
        }
    }
    out
}
