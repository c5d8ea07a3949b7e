//! `read_memory`: the project's memory. No argument: the index (`MEMORY.md`, one line per
//! topic); a `name`: that topic. Read-only and never asks: the memory is the agent's own,
//! under the config dir, and is never a target of the gate.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Access, Invocation, Tool, ToolContext, ToolError, ToolKind, ToolOutput, parse_args};
use crate::memory::Store;

pub struct ReadMemory;

#[derive(Deserialize)]
struct Args {
    #[serde(default)]
    name: Option<String>,
}

impl Tool for ReadMemory {
    fn name(&self) -> &'static str {
        "read_memory"
    }
    fn description(&self) -> &'static str {
        "Read this project's memory, kept between sessions. Without a name: the index \
         (MEMORY.md), one line per topic with its type and description. With a name: that \
         topic's text. Read a topic before you rely on it or rewrite it."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "A topic's name as the index lists it (without .md). Leave it out to read the index."}
            }
        })
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }
    fn access(&self) -> Access {
        Access::Read
    }
    fn describe(&self, args: &Value, _ctx: &ToolContext) -> Invocation {
        match args.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()) {
            Some(name) => {
                Invocation::plain(format!("Read memory: {}", crate::text::clip(name, 64)))
            }
            None => Invocation::plain("Read the memory index"),
        }
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        let store = Store::of(ctx.config_dir, ctx.cwd);
        let failed = |err: crate::error::Error| ToolError::Model(format!("memory not read: {err}"));
        let name = args.name.filter(|n| !n.trim().is_empty());
        let text = match &name {
            None => match store.index().map_err(failed)? {
                Some(index) => index,
                None => "Nothing is remembered for this project yet. Save durable facts, the \
                         user's preferences and feedback with write_memory."
                    .to_string(),
            },
            Some(name) => match store.topic(name.trim()).map_err(failed)? {
                Some(topic) => topic,
                None => {
                    return Err(ToolError::Model(format!(
                        "no memory topic named {name:?}: read_memory without a name lists them"
                    )));
                }
            },
        };
        let text = super::truncate_middle(&text, super::MAX_TOOL_OUTPUT_CHARS);
        let raw = json!({"name": name, "dir": store.dir()});
        Ok(ToolOutput { text, raw, ..ToolOutput::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Registry, SubAgentType};

    #[test]
    fn sub_agents_that_only_read_get_read_memory_only() {
        let registry = Registry::builtin();
        for kind in [SubAgentType::Explore, SubAgentType::Plan] {
            let tools = registry.for_sub_agent(kind);
            assert!(tools.get("read_memory").is_some(), "{kind:?}");
            assert!(tools.get("write_memory").is_none(), "{kind:?}");
        }
        let general = registry.for_sub_agent(SubAgentType::GeneralPurpose);
        assert!(general.get("read_memory").is_some() && general.get("write_memory").is_some());
    }
}
