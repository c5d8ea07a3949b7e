//! `exit_plan_mode`: in plan mode, the model presents its plan and asks to leave. The user
//! picks: "Yes, and accept edits" (mode `accept_edits`), "Yes, ask before edits" (mode
//! `default`) or "No, keep planning". The mode chosen takes effect at once and the client is
//! told (`current_mode_update`). Offered to the model only in plan mode.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Access, Choice, ChoiceKind, Invocation, Tool, ToolContext, ToolError, ToolKind};
use super::{ToolOutput, parse_args};

pub struct ExitPlanMode;

#[derive(Deserialize)]
struct Args {
    plan: String,
}

const CHOICES: [Choice; 3] = [
    Choice { id: "accept_edits", name: "Yes, and accept edits", kind: ChoiceKind::AllowAlways },
    Choice { id: "default", name: "Yes, ask before edits", kind: ChoiceKind::AllowOnce },
    Choice { id: "plan", name: "No, keep planning", kind: ChoiceKind::Reject },
];

impl Tool for ExitPlanMode {
    fn name(&self) -> &'static str {
        "exit_plan_mode"
    }
    fn description(&self) -> &'static str {
        "In plan mode, when the plan is ready: present it (markdown) and ask the user to \
         leave plan mode and carry it out. The user may accept edits, ask before each edit, \
         or keep planning."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "plan": {"type": "string", "description": "The plan to carry out, in markdown."}
            },
            "required": ["plan"]
        })
    }
    fn kind(&self) -> ToolKind {
        ToolKind::SwitchMode
    }
    fn access(&self) -> Access {
        // It changes nothing itself: the question it puts is the permission.
        Access::Read
    }
    fn describe(&self, _args: &Value, _ctx: &ToolContext) -> Invocation {
        Invocation::plain("Ready to leave plan mode?")
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        if args.plan.trim().is_empty() {
            return Err(ToolError::Model("plan is empty: present the plan to carry out".into()));
        }
        let title = format!("Leave plan mode and carry out this plan?\n\n{}", args.plan.trim());
        let chosen = ctx.network.choose(&title, &CHOICES).map_err(ToolError::Model)?;
        let raw = json!({"mode": chosen.unwrap_or("plan")});
        let (text, mode) = match chosen {
            Some(mode @ ("accept_edits" | "default")) => (
                format!(
                    "The user approved the plan; the session is now in {mode} mode. Carry it out."
                ),
                Some(mode),
            ),
            _ => (
                "The user wants to keep planning: stay in plan mode, ask what to change, and \
                 present a revised plan."
                    .to_string(),
                None,
            ),
        };
        Ok(ToolOutput { text, raw, mode, ..ToolOutput::default() })
    }
}
