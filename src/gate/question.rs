//! The question the gate puts to a person about one call, and its wording: the title
//! names the call and why it is asked (a destroy's starts with a warning no client can
//! miss), and says when the sandbox cannot hold the command.

use serde_json::Value;

use super::unreviewed::Found;
use super::{Question, Rule};
use crate::infra::Tier;
use crate::rules::Verdict;
use crate::tools::{Invocation, Tool, ToolContext};

/// Why the sandbox cannot hold this call's command, for a question's title.
pub(super) fn unavailable(ctx: &ToolContext) -> String {
    if ctx.files.terminals() {
        return "it runs in the client's terminal, outside the sandbox".to_string();
    }
    let why =
        crate::child::sandbox().why_not().unwrap_or_else(|| "the sandbox is unavailable".into());
    format!("asked because {why}")
}

pub(super) fn question_of(
    id: &str,
    tool: &dyn Tool,
    args: &Value,
    invocation: &Invocation,
    title: String,
    offer_always: bool,
) -> Question {
    Question {
        tool_call_id: id.to_string(),
        tool: tool.name().to_string(),
        title,
        kind: tool.kind(),
        input: args.clone(),
        locations: invocation.locations.clone(),
        offer_always,
        remembers: None,
        content: Vec::new(),
        tier: None,
        choices: Vec::new(),
    }
}

/// The question's title: the call, then why it is asked. A destroy-tier command's title
/// starts with a warning no client can miss.
pub(super) fn title_of(
    invocation: &Invocation,
    rule: &Rule,
    hook: &Rule,
    found: &Found,
    cwd: &std::path::Path,
) -> String {
    let gate = &invocation.gate;
    let mut reasons: Vec<String> = invocation.targets.iter().flat_map(|t| t.reasons()).collect();
    if invocation.targets.is_empty() && invocation.outside_cwd {
        reasons.push("outside the project".to_string());
    }
    if let Some(why) = &invocation.sensitive
        && !reasons.contains(why)
    {
        reasons.push(why.clone());
    }
    reasons.dedup();
    if let Some((Verdict::Ask, rule)) = rule {
        reasons.push(format!("the permission rule {rule} asks"));
    }
    if let Some((Verdict::Ask, hook)) = hook {
        reasons.push(format!("asked by {hook}"));
    }
    if !found.is_empty() {
        reasons.push(found.describe(cwd));
    }
    if gate.tier == Some(Tier::Destroy) {
        let why: Vec<String> = gate.reasons.iter().chain(&reasons).cloned().collect();
        return format!("⚠ DESTRUCTIVE: {} ({})", invocation.title, why.join("; "));
    }
    if gate.tier.is_some_and(|t| t >= Tier::Mutate) && gate.reasons.iter().any(|r| !r.is_empty()) {
        reasons.splice(0..0, gate.reasons.iter().cloned());
    }
    if reasons.is_empty() {
        return invocation.title.clone();
    }
    format!("{} ({})", invocation.title, reasons.join("; "))
}
