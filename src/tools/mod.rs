//! The `Tool` trait, the registry, and what tools return. One tool per file. Tools never
//! import `agent` or `acp`; they see a `ToolContext` and return `ToolOutput`/`ToolError`.

mod edit_file;
mod limits;
mod list_files;
pub mod paths;
mod read_file;
mod write_file;

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::cancel::CancelToken;

pub use limits::{MAX_TOOL_OUTPUT_CHARS, truncate_middle};

/// How a tool call is shown to a client (mirrors ACP's ToolKind without importing it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// Reads files.
    Read,
    /// Changes files.
    Edit,
    /// Searches.
    Search,
    /// Runs commands.
    Execute,
    /// Fetches from the network.
    Fetch,
    /// Anything else.
    Other,
}

/// What a tool may do, which decides whether it needs permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Only reads: runs without asking (inside the cwd).
    Read,
    /// Changes files: asks unless the mode allows edits.
    Write,
    /// Runs programs: asks.
    Execute,
}

/// What a tool gets to work with.
pub struct ToolContext<'a> {
    /// The session's working directory (absolute, canonical).
    pub cwd: &'a Path,
    /// Cancellation of the running turn.
    pub cancel: &'a CancelToken,
}

/// How a particular call will be presented before it runs.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// Human title, e.g. "Read main.tf".
    pub title: String,
    /// Absolute paths the call touches, with an optional line.
    pub locations: Vec<(PathBuf, Option<u32>)>,
    /// Whether a touched path lies outside the session cwd (judged on the real path).
    pub outside_cwd: bool,
}

/// A file change, for clients that render diffs.
#[derive(Debug, Clone)]
pub struct FileDiff {
    /// Absolute path.
    pub path: PathBuf,
    /// Previous content; `None` for a new file.
    pub old_text: Option<String>,
    /// New content.
    pub new_text: String,
}

/// A successful tool result.
#[derive(Debug, Clone)]
pub struct ToolOutput {
    /// Text for the model (and shown to the user).
    pub text: String,
    /// Structured result for clients (`rawOutput`).
    pub raw: Value,
    /// The change made, if the tool edits a file.
    pub diff: Option<FileDiff>,
}

/// A failed tool call.
#[derive(Debug, Clone)]
pub enum ToolError {
    /// Tell the model; it can recover (bad arguments, missing file, ...).
    Model(String),
    /// Abort the turn: the server itself is broken.
    Fatal(String),
}

/// One tool.
pub trait Tool: Send + Sync {
    /// Snake-case name, equal to the file name.
    fn name(&self) -> &'static str;
    /// Description for the model.
    fn description(&self) -> &'static str;
    /// JSON schema of the arguments.
    fn schema(&self) -> Value;
    /// How clients show it.
    fn kind(&self) -> ToolKind;
    /// What it may do.
    fn access(&self) -> Access;
    /// Title and locations of a call, computed before it runs (never fails).
    fn describe(&self, args: &Value, ctx: &ToolContext) -> Invocation;
    /// Runs the call.
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

/// The tools offered to the model.
pub struct Registry {
    tools: Vec<Box<dyn Tool>>,
}

impl Registry {
    /// Every built-in tool.
    pub fn builtin() -> Registry {
        Registry {
            tools: vec![
                Box::new(read_file::ReadFile),
                Box::new(list_files::ListFiles),
                Box::new(write_file::WriteFile),
                Box::new(edit_file::EditFile),
            ],
        }
    }

    /// Looks a tool up by name.
    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools.iter().find(|t| t.name() == name).map(|t| t.as_ref())
    }

    /// All tools, in a stable order.
    pub fn iter(&self) -> impl Iterator<Item = &dyn Tool> {
        self.tools.iter().map(|t| t.as_ref())
    }
}

/// Decodes a tool's arguments, turning serde's complaint into a message for the model.
pub(crate) fn parse_args<T: DeserializeOwned>(tool: &str, args: &Value) -> Result<T, ToolError> {
    serde_json::from_value(args.clone())
        .map_err(|err| ToolError::Model(format!("invalid arguments for {tool}: {err}")))
}

/// The `path` argument of a call, if it has one (for `describe`).
pub(crate) fn path_arg(args: &Value) -> Option<&str> {
    args.get("path").or_else(|| args.get("file_path")).and_then(Value::as_str)
}

/// Standard `describe` for a tool that touches one path.
pub(crate) fn describe_path(
    verb: &str,
    args: &Value,
    ctx: &ToolContext,
    line: Option<u32>,
) -> Invocation {
    let Some(raw) = path_arg(args) else {
        return Invocation { title: verb.to_string(), locations: Vec::new(), outside_cwd: false };
    };
    let path = paths::resolve(ctx.cwd, raw);
    let outside_cwd = !paths::is_inside(&paths::real(&path), ctx.cwd);
    let shown = paths::display_relative(&path, ctx.cwd);
    Invocation { title: format!("{verb} {shown}"), locations: vec![(path, line)], outside_cwd }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_is_well_formed() {
        let registry = Registry::builtin();
        let mut names = std::collections::HashSet::new();
        for tool in registry.iter() {
            let name = tool.name();
            assert!(names.insert(name), "duplicate tool {name}");
            assert!(name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{name}");
            let file = format!("{}/src/tools/{name}.rs", env!("CARGO_MANIFEST_DIR"));
            assert!(Path::new(&file).exists(), "{name} must live in {file}");
            assert!(!tool.description().is_empty() && tool.description().len() <= 1024);
            let schema = tool.schema();
            assert_eq!(schema["type"], "object", "{name}");
            let props = schema["properties"].as_object().expect("properties");
            for req in schema["required"].as_array().into_iter().flatten() {
                assert!(props.contains_key(req.as_str().unwrap()), "{name}: {req}");
            }
        }
    }
}
