//! `write_file`: creates or overwrites a file atomically (temp file, fsync, rename in the
//! verified parent directory), making parent directories and keeping an existing file's
//! permissions.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Access, FileDiff, Invocation, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use super::{describe_path, parse_args, paths};

pub struct WriteFile;

#[derive(Deserialize)]
struct Args {
    #[serde(alias = "file_path")]
    path: String,
    content: String,
}

impl Tool for WriteFile {
    fn name(&self) -> &'static str {
        "write_file"
    }
    fn description(&self) -> &'static str {
        "Write content to a file. Creates the file if it doesn't exist, or overwrites it if it \
         does. Creates parent directories as needed. Use edit_file for making targeted changes \
         to existing files."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The path to write the file to. Always emit this field FIRST in the JSON arguments, before 'content'."},
                "content": {"type": "string", "description": "The content to write to the file."}
            },
            "required": ["path", "content"]
        })
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }
    fn access(&self) -> Access {
        Access::Write
    }
    fn describe(&self, args: &Value, ctx: &ToolContext) -> Invocation {
        let mut invocation = describe_path("Write", args, ctx, None).writing();
        super::state_files::refuse(&mut invocation, ctx.config_dir);
        invocation
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        let path = paths::resolve(ctx.cwd, &args.path);
        let previous = super::open::write_all(ctx, &path, &args.content)?;
        let old_text = previous.map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        let lines = args.content.lines().count();
        let verb = if old_text.is_some() { "overwrote" } else { "created" };
        let text = format!("Successfully wrote {lines} lines to {} ({verb})", path.display());
        let raw = json!({"path": path, "lines": lines, "bytes": args.content.len(), "created": old_text.is_none()});
        let diff = FileDiff { path, old_text, new_text: args.content };
        Ok(ToolOutput { text, raw, diff: Some(diff), ..ToolOutput::default() })
    }
}
