//! Sub-agents for the `agent` tool: a fresh history, a narrower tool set, its own request
//! limit, the parent's provider, permission memory, asker and cancel token. Its tool calls
//! reach the client like the parent's (tagged with the parent call in `_meta`), its
//! questions too; its reply text streams into the `agent` call's progress, not into the
//! parent's message.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::event::{AgentEvent, EventSink};
use super::{Calls, Client, Model, Record, StopReason, Turn, run_turn, tool_defs};
use crate::config::Limits;
use crate::history::ChatMessage;
use crate::tools::{
    Delegate, ExternalTools, ReadOnlyTools, SubAgentReport, SubAgentRequest, SubAgentType,
    ToolError,
};

/// LLM requests one sub-agent may make at most.
const MAX_SUB_AGENT_REQUESTS: u32 = 40;
/// How often the sub-agent's text is shown at most.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
/// Characters of the sub-agent's latest text shown live.
const LIVE_CHARS: usize = 2000;

/// The `Delegate` of one `agent` tool call.
pub(super) struct SubAgents<'a> {
    /// The turn that made the call.
    pub parent: &'a Turn<'a>,
    /// The `agent` tool call's id.
    pub call_id: &'a str,
}

impl Delegate for SubAgents<'_> {
    fn run(&self, request: SubAgentRequest) -> Result<SubAgentReport, ToolError> {
        let parent = self.parent;
        let tools = parent.calls.tools.for_sub_agent(request.kind);
        let defs = tool_defs(&tools);
        // The parent's MCP tools under the parent's gate; read-only kinds get read-only ones.
        let read_only = ReadOnlyTools(parent.calls.external);
        let external: &dyn ExternalTools = match request.kind {
            SubAgentType::GeneralPurpose => parent.calls.external,
            SubAgentType::Explore | SubAgentType::Plan => &read_only,
        };
        let mcp = external.current();
        let names: Vec<&str> =
            tools.iter().map(|t| t.name()).chain(mcp.iter().map(|t| t.name())).collect();
        let system = format!(
            "{}\n\n# You are a sub-agent\n{}\nYou were started by another agent for one task \
             and cannot talk to the user: work autonomously, then end with a final answer \
             that gives the calling agent everything it needs (findings, file paths, what \
             you changed). In this task you only have these tools: {}.",
            parent.model.system_prompt,
            role(request.kind),
            names.join(", ")
        );
        let sink = SubSink {
            parent: parent.client.sink,
            call_id: self.call_id.to_string(),
            label: request.description.clone(),
            live: Mutex::new(Live { text: String::new(), last: None }),
        };
        let limits = Limits {
            max_turn_requests: parent.limits.max_turn_requests.min(MAX_SUB_AGENT_REQUESTS),
            ..parent.limits
        };
        let own_sub_usage = Mutex::new(super::TurnUsage::default());
        let turn = Turn {
            model: Model { system_prompt: &system, tool_defs: &defs, ..parent.model },
            calls: Calls { tools: &tools, external, ..parent.calls },
            client: Client { sink: &sink, steering: &super::NoSteering, ..parent.client },
            record: Record {
                recorder: &UsageOnly(parent.record.recorder),
                sub_usage: &own_sub_usage,
                ..parent.record
            },
            limits,
            nested: true,
            ..*parent
        };
        let mut history = Vec::new();
        let outcome = match run_turn(&turn, &mut history, request.prompt, Vec::new()) {
            Ok(outcome) => outcome,
            Err(failure) => {
                crate::sync::lock(parent.record.sub_usage).add(failure.usage);
                return Err(ToolError::Model(format!("the sub-agent failed: {}", failure.message)));
            }
        };
        crate::sync::lock(parent.record.sub_usage).add(outcome.usage);
        if outcome.stop == StopReason::Cancelled {
            return Err(ToolError::Model(super::CANCELLED_RESULT.to_string()));
        }
        Ok(report(&history, outcome.stop, outcome.usage))
    }
}

/// A sub-agent's record: its history is its own, but what its calls cost is the session's.
struct UsageOnly<'a>(&'a dyn super::Recorder);

impl super::Recorder for UsageOnly<'_> {
    fn message(&self, _: &ChatMessage) {}
    fn rewind(&self, _: usize) {}
    fn compacted(&self, _: &str, _: usize, _: u64, _: u64) {}
    fn usage(&self, model: &str, call: &super::TurnUsage) -> super::TurnUsage {
        self.0.usage(model, call)
    }
}

fn role(kind: SubAgentType) -> &'static str {
    match kind {
        SubAgentType::GeneralPurpose => {
            "Carry out the task completely, using the tools you need, and verify the result."
        }
        SubAgentType::Explore => {
            "Find things fast: locate files, search code and configuration, and answer the \
             question precisely with paths and line numbers. You are read-only."
        }
        SubAgentType::Plan => {
            "Design, do not build: study the code, then give a concrete step-by-step plan with \
             the files to change and the risks. You are read-only and cannot run commands."
        }
    }
}

fn report(history: &[ChatMessage], stop: StopReason, usage: super::TurnUsage) -> SubAgentReport {
    let mut tool_calls: Vec<(String, u32)> = Vec::new();
    let mut requests = 0;
    let mut failed_calls = 0;
    let mut text = String::new();
    for message in history {
        match message {
            ChatMessage::Assistant { text: t, tool_calls: calls, .. } => {
                requests += 1;
                text = t.clone();
                for call in calls {
                    match tool_calls.iter_mut().find(|(name, _)| *name == call.name) {
                        Some((_, n)) => *n += 1,
                        None => tool_calls.push((call.name.clone(), 1)),
                    }
                }
            }
            ChatMessage::ToolResult { is_error: true, .. } => failed_calls += 1,
            ChatMessage::ToolResult { .. } | ChatMessage::User { .. } => {}
        }
    }
    let stop = match stop {
        StopReason::EndTurn => "end_turn",
        StopReason::MaxTokens => "max_tokens",
        StopReason::MaxTurnRequests => "max_turn_requests",
        StopReason::Refusal => "refusal",
        StopReason::Cancelled => "cancelled",
    };
    SubAgentReport {
        text,
        stop,
        requests,
        tool_calls,
        failed_calls,
        tokens: (usage.input, usage.output),
    }
}

struct Live {
    text: String,
    last: Option<Instant>,
}

/// Forwards a sub-agent's tool calls to the parent's sink and turns its text into progress
/// of the `agent` call.
struct SubSink<'a> {
    parent: &'a dyn EventSink,
    call_id: String,
    label: String,
    live: Mutex<Live>,
}

impl EventSink for SubSink<'_> {
    fn emit(&self, event: AgentEvent) {
        match event {
            AgentEvent::Text(text) | AgentEvent::Notice(text) => {
                let shown = {
                    let mut live = crate::sync::lock(&self.live);
                    live.text.push_str(&text);
                    let due = live.last.is_none_or(|t| t.elapsed() >= PROGRESS_EVERY);
                    if !due {
                        return;
                    }
                    live.last = Some(Instant::now());
                    let total = live.text.chars().count();
                    live.text.chars().skip(total.saturating_sub(LIVE_CHARS)).collect::<String>()
                };
                self.parent
                    .emit(AgentEvent::ToolProgress { id: self.call_id.clone(), text: shown });
            }
            AgentEvent::ToolCall(mut call) => {
                call.title = format!("{} › {}", self.label, call.title);
                call.parent = Some(self.call_id.clone());
                crate::sync::lock(&self.live).text.clear();
                self.parent.emit(AgentEvent::ToolCall(call));
            }
            AgentEvent::ToolRunning { .. }
            | AgentEvent::ToolProgress { .. }
            | AgentEvent::ToolTerminal { .. }
            | AgentEvent::ToolTier { .. }
            | AgentEvent::ToolHooks { .. }
            | AgentEvent::ToolDone(_) => self.parent.emit(event),
            // The sub-agent's reasoning and context use are its own business.
            AgentEvent::Thought(_)
            | AgentEvent::MessageStart(_)
            | AgentEvent::Usage(_)
            | AgentEvent::UserText(_)
            | AgentEvent::Plan(_)
            | AgentEvent::SessionInfo { .. }
            | AgentEvent::Settings(_)
            | AgentEvent::Commands(_) => {}
        }
    }
}
