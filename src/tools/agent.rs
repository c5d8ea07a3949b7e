//! `agent`: delegates a task to a sub-agent with its own history and a narrower tool set
//! (no nested `agent`; `explore` and `plan` are read-only). The loop itself lives in
//! `agent::sub_agent`, reached through `ToolContext::delegate` (the `Delegate` trait and the
//! request and report types live here).

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Access, Invocation, Tool, ToolContext, ToolError};
use super::{ToolKind, ToolOutput, parse_args};

pub struct Agent;

#[derive(Deserialize)]
struct Args {
    prompt: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    subagent_type: Option<String>,
    #[serde(default)]
    run_in_background: Option<bool>,
}

impl Tool for Agent {
    fn name(&self) -> &'static str {
        "agent"
    }
    fn description(&self) -> &'static str {
        "Launch a sub-agent to handle a self-contained task; it starts with no knowledge of \
         this conversation, so give it everything it needs in the prompt. It returns its final \
         answer and a summary of what it did.\n\nAvailable agent types:\n  - general-purpose: \
         complex, multi-step tasks that need research, code changes, or several operations.\n  \
         - explore: quickly find files, search code, or answer questions about the codebase. \
         Read-only; cannot modify files.\n  - plan: plan an implementation, review \
         architecture, or design a solution. Read-only, no execution."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "prompt": {"type": "string", "description": "The task for the sub-agent to perform."},
                "description": {"type": "string", "description": "Short (3-5 word) description of the task."},
                "subagent_type": {"type": "string", "enum": ["general-purpose", "explore", "plan"], "description": "The type of specialized agent to use. Defaults to general-purpose."},
                "run_in_background": {"type": "boolean", "description": "Not supported: the sub-agent always runs to its end before the call returns."}
            },
            "required": ["prompt", "description"]
        })
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }
    fn access(&self) -> Access {
        Access::Execute
    }
    fn describe(&self, args: &Value, _ctx: &ToolContext) -> Invocation {
        let kind = args.get("subagent_type").and_then(Value::as_str).unwrap_or("general-purpose");
        let what = args
            .get("description")
            .and_then(Value::as_str)
            .or_else(|| args.get("prompt").and_then(Value::as_str))
            .unwrap_or("");
        let what = crate::text::one_line(what, " ", 80);
        Invocation::plain(format!("Agent ({kind}): {what}"))
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        let Some(delegate) = ctx.delegate else {
            return Err(ToolError::Model(
                "a sub-agent cannot start another sub-agent; do the work yourself".to_string(),
            ));
        };
        let kind = match args.subagent_type.as_deref().unwrap_or("general-purpose") {
            "general-purpose" | "general" => SubAgentType::GeneralPurpose,
            "explore" | "Explore" => SubAgentType::Explore,
            "plan" | "Plan" => SubAgentType::Plan,
            other => {
                return Err(ToolError::Model(format!(
                    "unknown subagent_type '{other}'; use general-purpose, explore or plan"
                )));
            }
        };
        if args.prompt.trim().is_empty() {
            return Err(ToolError::Model("prompt is empty".to_string()));
        }
        let description = args.description.unwrap_or_else(|| kind.id().to_string());
        let request = SubAgentRequest { kind, prompt: args.prompt, description };
        let report = delegate.run(request)?;
        let mut calls: Vec<String> =
            report.tool_calls.iter().map(|(name, n)| format!("{name} ×{n}")).collect();
        if calls.is_empty() {
            calls.push("none".to_string());
        }
        let failed = match report.failed_calls {
            0 => String::new(),
            n => format!(", {n} failed or denied"),
        };
        let answer = if report.text.trim().is_empty() {
            "(the sub-agent gave no final answer)".to_string()
        } else {
            report.text.trim().to_string()
        };
        let mut text = format!(
            "{answer}\n\n---\nSub-agent ({}) summary: stopped with {}, {} LLM requests, tool \
             calls: {}{failed}; tokens {} in / {} out.",
            kind.id(),
            report.stop,
            report.requests,
            calls.join(", "),
            report.tokens.0,
            report.tokens.1,
        );
        if args.run_in_background == Some(true) {
            text.push_str(" (run_in_background is not supported; it ran in the foreground.)");
        }
        let raw = json!({
            "subagentType": kind.id(),
            "stopReason": report.stop,
            "requests": report.requests,
            "toolCalls": report.tool_calls.iter().map(|(n, c)| json!({"tool": n, "count": c})).collect::<Vec<_>>(),
            "failedCalls": report.failed_calls,
            "inputTokens": report.tokens.0,
            "outputTokens": report.tokens.1,
        });
        Ok(ToolOutput { text, raw, diff: None, ..ToolOutput::default() })
    }
}

/// The kinds of sub-agent the `agent` tool can start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubAgentType {
    /// Every tool but `agent`.
    GeneralPurpose,
    /// Read-only tools, to find things.
    Explore,
    /// Read-only tools, to design a change.
    Plan,
}

impl SubAgentType {
    /// The wire name.
    pub fn id(self) -> &'static str {
        match self {
            SubAgentType::GeneralPurpose => "general-purpose",
            SubAgentType::Explore => "explore",
            SubAgentType::Plan => "plan",
        }
    }
}

/// A sub-agent task.
#[derive(Debug, Clone)]
pub struct SubAgentRequest {
    pub kind: SubAgentType,
    /// The task.
    pub prompt: String,
    /// A short description (for titles).
    pub description: String,
}

/// What a sub-agent did.
#[derive(Debug, Clone)]
pub struct SubAgentReport {
    /// Its final answer.
    pub text: String,
    /// Why it stopped (`end_turn`, `max_turn_requests`, ...).
    pub stop: &'static str,
    /// LLM requests made.
    pub requests: u32,
    /// Tool calls made, by tool name, in first-use order.
    pub tool_calls: Vec<(String, u32)>,
    /// Tool calls that failed or were denied.
    pub failed_calls: u32,
    /// Tokens used (input, output).
    pub tokens: (u64, u64),
}

/// Runs sub-agents for the `agent` tool; implemented by the agent loop, so that tools never
/// import `agent`. The sub-agent's text streams into the calling tool call's progress.
pub trait Delegate {
    /// Runs a sub-agent to its end. Blocks; honours the turn's cancel token.
    fn run(&self, request: SubAgentRequest) -> Result<SubAgentReport, ToolError>;
}
