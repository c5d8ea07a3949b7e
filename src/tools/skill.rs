//! `skill`: loads an Agent Skill for the rest of the turn: its body, wrapped with its folder
//! and the list of its files. Read-only, never asks. The skills themselves come through
//! `SkillBook` (implemented by `skills::Active`), so tools never import `skills`; a skill
//! loaded already in this turn is not loaded twice.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Access, Invocation, Tool, ToolContext, ToolError, ToolKind, ToolOutput, parse_args};
use crate::rules::Subject;

/// The skills one turn may load, and what the loaded ones allow.
pub trait SkillBook: Send + Sync {
    /// Loads `name` for this turn; the text for the model (a short note when it was loaded
    /// already), or why not (naming the skills there are).
    fn load(&self, name: &str, arguments: Option<&str>) -> Result<String, String>;
    /// The folders of the skills loaded in this turn: readable without asking.
    fn readable(&self) -> Vec<PathBuf>;
    /// Why a call is refused while the loaded skills are active (their `allowed-tools`
    /// narrow what may be called), if it is.
    fn refuses(&self, subject: &Subject) -> Option<String>;
}

/// No skills (sub-agents of tests, replays).
pub struct NoSkills;

impl SkillBook for NoSkills {
    fn load(&self, name: &str, _: Option<&str>) -> Result<String, String> {
        Err(format!("no skill named '{name}': there are no skills here"))
    }
    fn readable(&self) -> Vec<PathBuf> {
        Vec::new()
    }
    fn refuses(&self, _: &Subject) -> Option<String> {
        None
    }
}

pub struct Skill;

#[derive(Deserialize)]
struct Args {
    #[serde(alias = "skill")]
    name: String,
    #[serde(default, alias = "args")]
    arguments: Option<String>,
}

impl Tool for Skill {
    fn name(&self) -> &str {
        "skill"
    }
    fn description(&self) -> &str {
        "Load a skill listed under Skills in the system prompt: returns its instructions, \
         its folder, and the files in it. Load a skill when the task matches its \
         description, before starting, then follow it."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The skill's name, as listed"},
                "arguments": {"type": "string", "description": "What to apply it to (optional)"}
            },
            "required": ["name"]
        })
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }
    fn access(&self) -> Access {
        Access::Read
    }
    fn offers_always(&self) -> bool {
        false
    }
    fn describe(&self, args: &Value, _: &ToolContext) -> Invocation {
        let name = args.get("name").or_else(|| args.get("skill")).and_then(Value::as_str);
        Invocation::plain(format!("Skill {}", name.unwrap_or("?")))
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        let text = ctx
            .skills
            .load(args.name.trim(), args.arguments.as_deref())
            .map_err(ToolError::Model)?;
        let raw = json!({ "skill": args.name.trim() });
        Ok(ToolOutput { text, raw, ..ToolOutput::default() })
    }
}
