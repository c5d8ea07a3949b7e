//! `write_memory`: saves one topic of the project's memory (`<name>.md` and its line in
//! `MEMORY.md`), replacing a topic of the same name. Asks like an edit (accept_edits and
//! bypass allow it); a call whose text looks like it holds a secret, or whose arguments are
//! not acceptable, is refused before anything is asked or written.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Access, FileDiff, Invocation, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use crate::memory::{Kind, Store, Topic};

pub struct WriteMemory;

#[derive(Deserialize)]
struct Args {
    name: String,
    content: String,
    #[serde(rename = "type")]
    kind: String,
    description: String,
}

/// The topic a call writes, checked; `Err` is what the model is told.
fn topic_of(args: &Value) -> Result<Topic, String> {
    let args: Args = serde_json::from_value(args.clone())
        .map_err(|err| format!("invalid arguments for write_memory: {err}"))?;
    let kind = Kind::parse(&args.kind).ok_or_else(|| {
        let kinds: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
        format!("type must be one of {}, not {:?}", kinds.join(", "), args.kind)
    })?;
    let topic = Topic {
        name: args.name.trim().to_string(),
        kind,
        description: args.description,
        content: args.content,
    };
    crate::memory::check(&topic).map_err(|err| err.to_string())?;
    Ok(topic)
}

impl Tool for WriteMemory {
    fn name(&self) -> &'static str {
        "write_memory"
    }
    fn description(&self) -> &'static str {
        "Save a topic to this project's memory, which later sessions see in their system \
         prompt (the index) and read with read_memory. Save what will still matter next time: \
         durable facts about the project (layout, environments, state backends, conventions, \
         decisions), the user's preferences, their feedback on your work, where things live. \
         Not what the code or git history already says, not the task in progress, and never \
         a secret (a write that looks like one is refused): name where a secret lives, not \
         its value. Writing an existing name replaces that topic: read it first and merge."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The topic's name: 1-64 of a-z, 0-9, '_' and '-' (for example terraform-state)."},
                "type": {"type": "string", "enum": ["user", "project", "feedback", "reference"], "description": "user: who the user is and how they work; project: facts about the project; feedback: what the user corrected or confirmed; reference: where things live outside the project."},
                "description": {"type": "string", "description": "One line saying what the topic holds, shown in the index."},
                "content": {"type": "string", "description": "The topic's text (Markdown, at most 64 KiB)."}
            },
            "required": ["name", "type", "description", "content"]
        })
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }
    fn access(&self) -> Access {
        Access::Write
    }
    fn describe(&self, args: &Value, ctx: &ToolContext) -> Invocation {
        match topic_of(args) {
            Ok(topic) => {
                let title = format!("Remember {} ({})", topic.name, topic.kind.as_str());
                let mut invocation = Invocation::plain(title);
                let path =
                    Store::of(ctx.config_dir, ctx.cwd).dir().join(format!("{}.md", topic.name));
                invocation.locations.push((path, None));
                invocation
            }
            Err(why) => {
                let mut invocation = Invocation::plain("Remember");
                invocation.gate.refused = Some(why);
                invocation
            }
        }
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let topic = topic_of(args).map_err(ToolError::Model)?;
        let store = Store::of(ctx.config_dir, ctx.cwd);
        let written = store
            .write(&topic)
            .map_err(|err| ToolError::Model(format!("memory not written: {err}")))?;
        let verb = if written.old.is_some() { "Replaced" } else { "Saved" };
        let text = format!(
            "{verb} memory topic {} in {}. Its line in the index:\n{}",
            topic.name,
            store.dir().display(),
            written.line
        );
        let raw = json!({"name": topic.name, "type": topic.kind.as_str(), "path": written.path, "created": written.old.is_none()});
        let diff = FileDiff { path: written.path, old_text: written.old, new_text: written.new };
        Ok(ToolOutput { text, raw, diff: Some(diff), ..ToolOutput::default() })
    }
}
