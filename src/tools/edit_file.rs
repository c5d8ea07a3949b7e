//! `edit_file`: exact search and replace. `old_string` must match exactly once unless
//! `replace_all`; the result carries a diff for editors.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Access, FileDiff, Invocation, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use super::{describe_path, parse_args, paths};

pub struct EditFile;

#[derive(Deserialize)]
struct Args {
    #[serde(alias = "file_path")]
    path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

impl Tool for EditFile {
    fn name(&self) -> &'static str {
        "edit_file"
    }
    fn description(&self) -> &'static str {
        "Make targeted edits to a file using search and replace. The old_string must match \
         exactly one location in the file (or set replace_all to replace every occurrence). \
         For creating new files, use write_file instead. Always read the file first to \
         understand its current content before editing."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The path to the file to edit. Always emit this field FIRST in the JSON arguments, before 'old_string' and 'new_string'."},
                "old_string": {"type": "string", "description": "The exact string to search for in the file. Must match exactly one location."},
                "new_string": {"type": "string", "description": "The string to replace old_string with."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence of old_string. Defaults to false."}
            },
            "required": ["path", "old_string", "new_string"]
        })
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }
    fn access(&self) -> Access {
        Access::Write
    }
    fn describe(&self, args: &Value, ctx: &ToolContext) -> Invocation {
        let mut invocation = describe_path("Edit", args, ctx, None).writing();
        super::state_files::refuse(&mut invocation, ctx.config_dir);
        invocation
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        let path = paths::resolve(ctx.cwd, &args.path);
        let shown = path.display();
        if args.old_string.is_empty() {
            return Err(ToolError::Model(
                "old_string must not be empty; use write_file to create a file".into(),
            ));
        }
        if args.old_string == args.new_string {
            return Err(ToolError::Model("old_string and new_string are identical".into()));
        }
        // What the editor has, unsaved changes included, when it offers its files.
        let bytes = super::open::read_for_edit(ctx, &path)?;
        let old_text = String::from_utf8(bytes)
            .map_err(|_| ToolError::Model(format!("{shown} is not valid UTF-8; not edited")))?;
        let count = old_text.matches(&args.old_string).count();
        match count {
            0 => return Err(ToolError::Model(format!("old_string was not found in {shown}"))),
            1 => {}
            n if !args.replace_all => {
                return Err(ToolError::Model(format!(
                    "old_string matches {n} places in {shown}; add surrounding context to make \
                     it unique, or set replace_all to true"
                )));
            }
            _ => {}
        }
        let new_text = old_text.replace(&args.old_string, &args.new_string);
        super::open::write_all(ctx, &path, &new_text)?;
        let plural = if count == 1 { "" } else { "s" };
        let text = format!("Edited {shown}: replaced {count} occurrence{plural}");
        let raw = json!({"path": path, "replacements": count});
        let diff = FileDiff { path, old_text: Some(old_text), new_text };
        Ok(ToolOutput { text, raw, diff: Some(diff), ..ToolOutput::default() })
    }
}
