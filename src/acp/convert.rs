//! The one place internal agent events become ACP wire updates (sent by `sink::AcpSink`),
//! and the ACP side of the permission question: `Asker` over the `Outbox`. Every title
//! that leaves (a tool call's, a question's, an option's) is made a `text::Title` here,
//! whoever composed it.

use crossbeam_channel::select;
use serde_json::{Value, json};

use super::setup::Offer;
use super::types::{
    AvailableCommand, CommandInput, ContentBlock, PermissionOption, PermissionOutcome,
    PermissionToolCall, PlanEntry, RequestPermissionRequest, RequestPermissionResponse,
    SessionUpdate, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolKind,
};
use crate::agent::event::AgentEvent;
use crate::cancel::CancelToken;
use crate::gate::{Answer, Asker, Mode, Question};
use crate::infra::Tier;
use crate::jsonrpc::Outbox;
use crate::text::Title;
use crate::tools;

fn text(text: String) -> ContentBlock {
    ContentBlock::Text { text }
}

/// Converts one event; its chunks (user text, reply, reasoning) carry the message id
/// `message`. `None` for what is no update of its own (`MessageStart`).
#[expect(
    clippy::too_many_lines,
    reason = "one arm per agent event: the table of what each becomes on the wire"
)]
pub fn update_of(event: AgentEvent, offer: &Offer, message: &str) -> Option<SessionUpdate> {
    let message_id = Some(message.to_string());
    Some(match event {
        AgentEvent::MessageStart(_) => return None,
        AgentEvent::UserText(t) => SessionUpdate::UserMessageChunk { content: text(t), message_id },
        AgentEvent::Text(t) | AgentEvent::Notice(t) => {
            SessionUpdate::AgentMessageChunk { content: text(t), message_id }
        }
        AgentEvent::Thought(t) => SessionUpdate::AgentThoughtChunk { content: text(t), message_id },
        AgentEvent::ToolCall(call) => SessionUpdate::ToolCall {
            tool_call_id: call.id,
            title: Title::new(None, &call.title),
            kind: kind_of(call.kind),
            status: ToolCallStatus::Pending,
            raw_input: call.input,
            locations: locations(call.locations),
            meta: call_meta(call.parent, call.tier),
        },
        AgentEvent::ToolTier { id, tier } => SessionUpdate::ToolCallUpdate {
            tool_call_id: id,
            status: None,
            content: None,
            raw_output: None,
            meta: call_meta(None, Some(tier)),
        },
        AgentEvent::ToolRunning { id, sandbox } => SessionUpdate::ToolCallUpdate {
            tool_call_id: id,
            status: Some(ToolCallStatus::InProgress),
            content: None,
            raw_output: None,
            meta: sandbox.map(|run| json!({ "iacCode": { "sandbox": run.meta() } })),
        },
        AgentEvent::ToolTerminal { id, terminal } => SessionUpdate::ToolCallUpdate {
            tool_call_id: id,
            status: None,
            content: Some(vec![ToolCallContent::Terminal { terminal_id: terminal }]),
            raw_output: None,
            meta: None,
        },
        AgentEvent::ToolHooks { id, lines } => SessionUpdate::ToolCallUpdate {
            tool_call_id: id,
            status: None,
            content: Some(hook_lines(lines)),
            raw_output: None,
            meta: None,
        },
        AgentEvent::ToolProgress { id, text: live } => SessionUpdate::ToolCallUpdate {
            tool_call_id: id,
            status: None,
            content: Some(vec![ToolCallContent::Content { content: text(live) }]),
            raw_output: None,
            meta: None,
        },
        AgentEvent::ToolDone(end) => {
            let mut content = Vec::new();
            if let Some(terminal_id) = end.terminal {
                content.push(ToolCallContent::Terminal { terminal_id });
            }
            content.push(ToolCallContent::Content { content: text(end.text) });
            content.extend(hook_lines(end.hooks));
            if let Some(diff) = end.diff {
                content.push(ToolCallContent::Diff {
                    path: diff.path.display().to_string(),
                    old_text: diff.old_text,
                    new_text: diff.new_text,
                });
            }
            SessionUpdate::ToolCallUpdate {
                tool_call_id: end.id,
                status: Some(if end.ok {
                    ToolCallStatus::Completed
                } else {
                    ToolCallStatus::Failed
                }),
                content: Some(content),
                raw_output: Some(end.raw),
                meta: (end.redacted.count > 0).then(|| {
                    json!({ "iacCode": { "redacted": {
                        "count": end.redacted.count,
                        "kinds": end.redacted.kinds,
                    } } })
                }),
            }
        }
        AgentEvent::Usage(usage) => SessionUpdate::UsageUpdate {
            used: usage.used,
            size: usage.size,
            cost: usage.cost.amount().map(|(amount, currency)| super::types::Cost {
                amount,
                currency: currency.as_str().to_string(),
            }),
            meta: usage.estimated.then(|| json!({ "iacCode": { "estimated": true } })),
        },
        AgentEvent::Plan(steps) => SessionUpdate::Plan {
            entries: steps
                .into_iter()
                .map(|s| PlanEntry { content: s.content, priority: s.priority, status: s.status })
                .collect(),
        },
        AgentEvent::SessionInfo { title, updated_at } => {
            SessionUpdate::SessionInfoUpdate { title, updated_at, meta: None }
        }
        AgentEvent::Settings(change) => {
            let mode = Mode::from_id(&change.mode).unwrap_or(Mode::Default);
            SessionUpdate::ConfigOptionUpdate {
                config_options: super::setup::config_options(
                    mode,
                    &change.model,
                    change.thinking,
                    offer,
                ),
            }
        }
        AgentEvent::Commands(commands) => SessionUpdate::AvailableCommandsUpdate {
            available_commands: commands
                .into_iter()
                .map(|(name, description, hint)| AvailableCommand {
                    name,
                    description,
                    input: hint.map(|hint| CommandInput { hint }),
                })
                .collect(),
        },
    })
}

/// The lines of the hooks that ran for a tool call, one text block each.
fn hook_lines(lines: Vec<String>) -> Vec<ToolCallContent> {
    lines.into_iter().map(|line| ToolCallContent::Content { content: text(line) }).collect()
}

/// `_meta.iacCode` of a tool call: the sub-agent's call it belongs to, a command's tier.
fn call_meta(parent: Option<String>, tier: Option<Tier>) -> Option<Value> {
    let mut ours = serde_json::Map::new();
    if let Some(id) = parent {
        ours.insert("parentToolCallId".into(), Value::String(id));
    }
    if let Some(tier) = tier {
        ours.insert("tier".into(), Value::String(tier.id().into()));
    }
    (!ours.is_empty()).then(|| json!({ "iacCode": ours }))
}

fn kind_of(kind: tools::ToolKind) -> ToolKind {
    match kind {
        tools::ToolKind::Read => ToolKind::Read,
        tools::ToolKind::Edit => ToolKind::Edit,
        tools::ToolKind::Search => ToolKind::Search,
        tools::ToolKind::Execute => ToolKind::Execute,
        tools::ToolKind::Fetch => ToolKind::Fetch,
        tools::ToolKind::Think => ToolKind::Think,
        tools::ToolKind::SwitchMode => ToolKind::SwitchMode,
        tools::ToolKind::Other => ToolKind::Other,
    }
}

fn locations(list: Vec<(std::path::PathBuf, Option<u32>)>) -> Vec<ToolCallLocation> {
    list.into_iter()
        .map(|(path, line)| ToolCallLocation { path: path.display().to_string(), line })
        .collect()
}

/// Asks the client with `session/request_permission`; waits for the answer or a cancel.
pub struct AcpAsker {
    /// Where frames go.
    pub outbox: Outbox,
    pub session_id: String,
}

const OPTIONS: [(&str, Answer); 4] = [
    ("allow_once", Answer::AllowOnce),
    ("allow_always", Answer::AllowAlways),
    ("reject_once", Answer::RejectOnce),
    ("reject_always", Answer::RejectAlways),
];

impl Asker for AcpAsker {
    fn ask(&self, question: &Question, cancel: &CancelToken) -> Answer {
        let offered: Vec<(&'static str, Answer)> = if question.choices.is_empty() {
            OPTIONS
                .into_iter()
                .filter(|(_, a)| {
                    question.offer_always || matches!(a, Answer::AllowOnce | Answer::RejectOnce)
                })
                .collect()
        } else {
            question.choices.iter().map(|(id, _, answer)| (*id, *answer)).collect()
        };
        let options = offered
            .iter()
            .map(|(id, answer)| PermissionOption {
                option_id: id,
                name: Title::new(
                    None,
                    &question
                        .choices
                        .iter()
                        .find(|(choice, _, _)| choice == id)
                        .map_or_else(|| label(*answer, question), |(_, name, _)| name.clone()),
                ),
                kind: kind_of_answer(*answer),
            })
            .collect();
        let params = RequestPermissionRequest {
            session_id: &self.session_id,
            tool_call: PermissionToolCall {
                tool_call_id: question.tool_call_id.clone(),
                title: Title::new(None, &question.title),
                kind: kind_of(question.kind),
                status: ToolCallStatus::Pending,
                raw_input: question.input.clone(),
                locations: locations(question.locations.clone()),
                content: question
                    .content
                    .iter()
                    .map(|block| ToolCallContent::Content { content: text(block.clone()) })
                    .collect(),
                meta: call_meta(None, question.tier),
            },
            options,
        };
        let (id, reply) =
            self.outbox.request("session/request_permission", &params, Some(&self.session_id));
        select! {
            recv(reply) -> reply => match reply {
                Ok(Ok(result)) => answer_of(result, &offered),
                Ok(Err(error)) => {
                    log::warn!("permission request failed on the client: {}", error.message);
                    Answer::RejectOnce
                }
                // The connection is gone.
                Err(_) => Answer::Cancelled,
            },
            recv(cancel.channel()) -> _ => {
                self.outbox.forget(&id);
                // The client may close its dialog: nobody waits for the answer any more.
                let abandoned = serde_json::json!({ "requestId": id });
                self.outbox.notify("$/cancel_request", &abandoned, Some(&self.session_id));
                Answer::Cancelled
            }
        }
    }
}

fn label(answer: Answer, question: &Question) -> String {
    let tool = question.remembers.as_deref().unwrap_or(&question.tool);
    match answer {
        Answer::AllowOnce => "Allow once".to_string(),
        Answer::AllowAlways => format!("Always allow {tool} in this session"),
        Answer::RejectOnce => "Reject".to_string(),
        Answer::RejectAlways => format!("Always reject {tool} in this session"),
        Answer::Cancelled => "Cancel".to_string(),
    }
}

/// The option kind an answer stands for.
fn kind_of_answer(answer: Answer) -> &'static str {
    match answer {
        Answer::AllowOnce => "allow_once",
        Answer::AllowAlways => "allow_always",
        Answer::RejectAlways => "reject_always",
        Answer::RejectOnce | Answer::Cancelled => "reject_once",
    }
}

fn answer_of(result: Value, offered: &[(&'static str, Answer)]) -> Answer {
    match serde_json::from_value::<RequestPermissionResponse>(result) {
        Ok(RequestPermissionResponse { outcome: PermissionOutcome::Cancelled }) => {
            Answer::Cancelled
        }
        Ok(RequestPermissionResponse { outcome: PermissionOutcome::Selected { option_id } }) => {
            match offered.iter().find(|(id, _)| *id == option_id) {
                Some((_, answer)) => *answer,
                None => {
                    log::warn!("permission answer names an option we did not offer: {option_id}");
                    Answer::RejectOnce
                }
            }
        }
        Err(err) => {
            log::warn!("unreadable permission answer ({err}); treating it as a rejection");
            Answer::RejectOnce
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_answers_map_by_offered_option() {
        let offered = &OPTIONS[..];
        let sel = |id: &str| json!({"outcome": {"outcome": "selected", "optionId": id}});
        assert_eq!(answer_of(sel("allow_once"), offered), Answer::AllowOnce);
        assert_eq!(answer_of(sel("reject_always"), offered), Answer::RejectAlways);
        assert_eq!(answer_of(sel("bogus"), offered), Answer::RejectOnce);
        assert_eq!(
            answer_of(json!({"outcome": {"outcome": "cancelled"}}), offered),
            Answer::Cancelled
        );
        assert_eq!(answer_of(json!({"outcome": "allowed"}), offered), Answer::RejectOnce);
        assert_eq!(answer_of(Value::Null, offered), Answer::RejectOnce);
        let once_only = &[OPTIONS[0], OPTIONS[2]];
        assert_eq!(answer_of(sel("allow_always"), once_only), Answer::RejectOnce);
    }
}
