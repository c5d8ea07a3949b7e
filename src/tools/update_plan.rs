//! `update_plan`: the model's plan for multi-step work, always the whole list. Read-only and
//! never asks; each call shows the plan to the client (a `plan` update), and a loaded
//! session shows it again from the journalled call.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Access, Invocation, PlanStep, Tool, ToolContext, ToolError, ToolKind, ToolOutput};

pub struct UpdatePlan;

/// Entries a plan holds at most.
const MAX_ENTRIES: usize = 50;

#[derive(Deserialize)]
struct Args {
    #[serde(alias = "plan", alias = "steps")]
    entries: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    #[serde(alias = "step", alias = "text")]
    content: String,
    #[serde(default)]
    priority: Option<String>,
    #[serde(default)]
    status: Option<String>,
}

/// The plan a call's arguments set, checked: every entry has content, a priority (`high`,
/// `medium` by default, `low`) and a status (`pending` by default, `in_progress`,
/// `completed`).
pub fn plan_of(args: &Value) -> Result<Vec<PlanStep>, String> {
    let args: Args = serde_json::from_value(args.clone())
        .map_err(|err| format!("invalid arguments for update_plan: {err}"))?;
    if args.entries.len() > MAX_ENTRIES {
        return Err(format!("a plan holds at most {MAX_ENTRIES} entries"));
    }
    args.entries
        .into_iter()
        .enumerate()
        .map(|(i, entry)| {
            let content = entry.content.trim().to_string();
            if content.is_empty() {
                return Err(format!("entry {} has no content", i + 1));
            }
            let priority =
                one_of(entry.priority, "medium", &["high", "medium", "low"], "priority")?;
            let status = one_of(
                entry.status,
                "pending",
                &["pending", "in_progress", "completed"],
                "status",
            )?;
            Ok(PlanStep { content, priority, status })
        })
        .collect()
}

fn one_of(
    value: Option<String>,
    default: &str,
    allowed: &[&str],
    what: &str,
) -> Result<String, String> {
    let value = value.map(|v| v.trim().to_ascii_lowercase().replace(['-', ' '], "_"));
    let value = value.filter(|v| !v.is_empty()).unwrap_or_else(|| default.to_string());
    if allowed.contains(&value.as_str()) {
        Ok(value)
    } else {
        Err(format!("{what} must be one of {}, not '{value}'", allowed.join(", ")))
    }
}

impl Tool for UpdatePlan {
    fn name(&self) -> &'static str {
        "update_plan"
    }
    fn description(&self) -> &'static str {
        "Keep a plan for multi-step work (for example: terraform plan, review the changes, \
         terraform apply) and show it to the user. Send the whole list every time, with each \
         entry's status; mark an entry in_progress before you start it and completed when it \
         is done. Touches nothing and never asks."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "entries": {
                    "type": "array",
                    "description": "The whole plan, in order.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "description": "What to do, in a short sentence."},
                            "priority": {"type": "string", "enum": ["high", "medium", "low"], "description": "How much it matters. Defaults to medium."},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"], "description": "Where it stands. Defaults to pending."}
                        },
                        "required": ["content"]
                    }
                }
            },
            "required": ["entries"]
        })
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }
    fn access(&self) -> Access {
        Access::Read
    }
    fn describe(&self, args: &Value, _ctx: &ToolContext) -> Invocation {
        let n = args.get("entries").and_then(Value::as_array).map_or(0, Vec::len);
        Invocation::plain(format!("Update the plan ({n} steps)"))
    }
    fn run(&self, args: &Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let plan = plan_of(args).map_err(ToolError::Model)?;
        let done = plan.iter().filter(|s| s.status == "completed").count();
        let text = format!("Plan updated: {} steps, {done} completed.", plan.len());
        let raw = json!({"entries": plan.len(), "completed": done});
        Ok(ToolOutput { text, raw, plan: Some(plan), ..ToolOutput::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_are_checked_and_defaulted() {
        let plan = plan_of(&json!({"entries": [
            {"content": "terraform plan", "status": "completed", "priority": "high"},
            {"content": "review", "status": "in-progress"},
            {"step": "apply"}
        ]}))
        .unwrap();
        assert_eq!(plan[1].status, "in_progress");
        assert_eq!(
            plan[2],
            PlanStep {
                content: "apply".into(),
                priority: "medium".into(),
                status: "pending".into()
            }
        );
        assert!(plan_of(&json!({"entries": [{"content": " "}]})).is_err());
        assert!(plan_of(&json!({"entries": [{"content": "x", "status": "maybe"}]})).is_err());
        assert!(plan_of(&json!({"nothing": []})).is_err());
    }
}
