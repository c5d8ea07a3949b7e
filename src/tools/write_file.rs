//! `write_file`: creates or overwrites a file atomically (temp file, fsync, rename), making
//! parent directories and keeping an existing file's permissions.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

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
        describe_path("Write", args, ctx, None)
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        let path = paths::resolve(ctx.cwd, &args.path);
        match fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                return Err(ToolError::Model(format!("{} is a directory", path.display())));
            }
            Ok(meta) if !meta.is_file() => {
                let msg = format!("{} is not a regular file; not written", path.display());
                return Err(ToolError::Model(msg));
            }
            _ => {}
        }
        let old_text = match fs::read(&path) {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(_) => None,
        };
        write_atomic(&path, args.content.as_bytes())?;
        let lines = args.content.lines().count();
        let verb = if old_text.is_some() { "overwrote" } else { "created" };
        let text = format!("Successfully wrote {lines} lines to {} ({verb})", path.display());
        let raw = json!({"path": path, "lines": lines, "bytes": args.content.len(), "created": old_text.is_none()});
        let diff = FileDiff { path, old_text, new_text: args.content };
        Ok(ToolOutput { text, raw, diff: Some(diff) })
    }
}

/// Replaces `path` with `contents` so that a crash leaves either the old or the new file,
/// never half of one. Parent directories are created; an existing file keeps its mode.
pub(crate) fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), ToolError> {
    // Write through a symlink to its target (the permission check judged the target),
    // instead of replacing the link with a file.
    let resolved = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(path).ok(),
        _ => None,
    };
    let path = resolved.as_deref().unwrap_or(path);
    let fail = |what: &str, err: std::io::Error| {
        ToolError::Model(format!("cannot write {}: {what}: {err}", path.display()))
    };
    let parent = path.parent().ok_or_else(|| ToolError::Model("no parent directory".into()))?;
    fs::create_dir_all(parent).map_err(|e| fail("creating parent directories", e))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = parent.join(format!(".{name}.iac-code-{}.tmp", uuid::Uuid::new_v4().simple()));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(contents)?;
        if let Ok(meta) = fs::metadata(path) {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        // Make the rename itself durable.
        File::open(parent).and_then(|d| d.sync_all())
    })();
    if let Err(err) = result {
        let _ = fs::remove_file(&tmp);
        return Err(fail("writing", err));
    }
    Ok(())
}
