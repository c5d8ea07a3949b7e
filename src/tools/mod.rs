//! The `Tool` trait, the registry, and what tools return. One tool per file. Tools never
//! import `agent` or `acp`; they see a `ToolContext` and return `ToolOutput`/`ToolError`.

pub mod address;
mod agent;
mod ask_user;
mod bash;
mod edit_file;
mod exit_plan_mode;
mod external;
mod form;
mod gate;
mod glob;
mod grep;
mod html;
mod invocation;
pub(crate) mod limits;
mod list_files;
mod open;
pub mod paths;
mod process;
mod read_file;
mod read_memory;
pub(crate) mod run;
mod skill;
mod state_files;
mod target;
mod terminal;
mod update_plan;
mod walk;
mod web_fetch;
mod write_file;
mod write_memory;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::cancel::CancelToken;

pub use address::internal_reason;
pub use agent::{Delegate, SubAgentReport, SubAgentRequest, SubAgentType};
pub use external::{ExternalTools, NoExternalTools, ReadOnlyTools};
pub use gate::{
    Choice, ChoiceKind, ClientTools, Elicitation, Elicited, HostReach, NetworkGate, NoClientTools,
    NoNetwork, TerminalCommand, TerminalRun,
};
pub use invocation::{Command, Gate, Invocation};
pub use limits::{MAX_TOOL_OUTPUT_CHARS, truncate_middle};
pub use process::{is_bash, shell, shell_args};
pub use skill::{NoSkills, SkillBook};
pub use target::{Target, judge, judge_within};
pub use update_plan::plan_of;

/// How a tool call is shown to a client (mirrors ACP's ToolKind without importing it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    Read,
    /// Changes files.
    Edit,
    /// Searches.
    Search,
    /// Runs commands.
    Execute,
    /// Fetches from the network.
    Fetch,
    /// Thinks or plans, touching nothing.
    Think,
    /// Switches the session's mode.
    SwitchMode,
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
    /// A tool of an MCP server: asks whatever it claims (allow_always remembered per tool);
    /// in plan mode only a `read_only` one (annotated `readOnlyHint`) may run, asked every
    /// time.
    Mcp {
        /// Annotated `readOnlyHint: true` by its server.
        read_only: bool,
    },
}

impl Access {
    /// Whether read-only sub-agents (explore, plan) may have it.
    pub fn read_only(self) -> bool {
        matches!(self, Access::Read | Access::Mcp { read_only: true })
    }
}

/// What a tool gets to work with.
pub struct ToolContext<'a> {
    /// The session's working directory (absolute, canonical).
    pub cwd: &'a Path,
    /// The session's additional directories (canonical): paths in them are judged as
    /// inside the cwd.
    pub extra: &'a [PathBuf],
    /// Cancellation of the running turn.
    pub cancel: &'a CancelToken,
    /// The configuration directory (a sensitive path).
    pub config_dir: &'a Path,
    /// Shows live output of a running call to the client (the text replaces the previous
    /// one). Callers keep the rate bounded.
    pub progress: &'a dyn Fn(String),
    /// Runs a sub-agent; `None` inside a sub-agent (no nesting).
    pub delegate: Option<&'a dyn Delegate>,
    /// The paths this call was judged on by the permission gate (from `describe`): file
    /// tools open exactly these, or refuse.
    pub targets: &'a [Target],
    /// Asks, while the call runs, about a network target that could not be judged before
    /// (a `web_fetch` host or redirect hop).
    pub network: &'a dyn NetworkGate,
    /// Processes a call left running, killed when the session ends.
    pub jobs: &'a crate::child::Jobs,
    /// The client's file system and terminals, when it offers them.
    pub files: &'a dyn ClientTools,
    /// Shows the client's terminal a call runs in (its id), in place of live output.
    pub terminal: &'a dyn Fn(&str),
    /// Whether the model accepts images (a tool may then return some).
    pub images: bool,
    /// What the gate approved in place of the call's own command (`apply <saved plan>`,
    /// made before the question): the call runs exactly this, or nothing.
    pub prepared: Option<&'a str>,
    /// The skills the turn may load (`skill`).
    pub skills: &'a dyn SkillBook,
    /// How a command of this call runs (the gate's decision): in which sandbox, or outside
    /// it because a person allowed this very call.
    pub sandbox: crate::sandbox::Run,
    /// What an approval covers in the session (hook scripts and their directories, skill
    /// folders, what `.mcp.json` starts): read-only inside the sandbox.
    pub approved: &'a [PathBuf],
    /// The saved plan the gate showed, which `prepared` applies: readable inside the
    /// sandbox although it lies in our (hidden) configuration directory.
    pub plan_file: Option<&'a Path>,
}

/// One entry of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanStep {
    pub content: String,
    /// `high`, `medium` or `low`.
    pub priority: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
}

/// A file change, for clients that render diffs.
#[derive(Debug, Clone)]
pub struct FileDiff {
    pub path: PathBuf,
    /// Previous content; `None` for a new file.
    pub old_text: Option<String>,
    pub new_text: String,
}

/// A successful tool result.
#[derive(Debug, Clone, Default)]
pub struct ToolOutput {
    /// Text for the model (and shown to the user).
    pub text: String,
    /// Structured result for clients (`rawOutput`).
    pub raw: Value,
    /// The change made, if the tool edits a file.
    pub diff: Option<FileDiff>,
    /// The whole plan, when the call set it (`update_plan`).
    pub plan: Option<Vec<PlanStep>>,
    /// The permission mode to switch to, when the user chose one (`exit_plan_mode`).
    pub mode: Option<&'static str>,
    /// The client terminal the call ran in (`bash` through the client).
    pub terminal: Option<String>,
    /// Images for the model (only when `ToolContext::images` said it takes them).
    pub images: Vec<crate::history::Image>,
    /// A question nobody could answer while it ran (`ask_user`, no forms): shown as the
    /// agent's message, and the turn ends so that the answer comes as the next prompt.
    pub ask: Option<String>,
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
    /// Snake-case name, equal to the file name (an MCP tool: `mcp__<server>__<tool>`).
    fn name(&self) -> &str;
    /// Description for the model.
    fn description(&self) -> &str;
    /// JSON schema of the arguments.
    fn schema(&self) -> Value;
    /// How clients show it.
    fn kind(&self) -> ToolKind;
    /// What it may do.
    fn access(&self) -> Access;
    /// Whether a question about it may offer "always" (per tool, for the session).
    fn offers_always(&self) -> bool {
        true
    }
    /// What an "always" answer about it is remembered under: its name, unless the name
    /// may move to another tool (an MCP tool's does when its server's list changes).
    fn memory_key(&self) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Borrowed(self.name())
    }
    /// Title and locations of a call, computed before it runs (never fails).
    fn describe(&self, args: &Value, ctx: &ToolContext) -> Invocation;
    /// The shell command a call runs (`bash`), which the gate judges (`gate::describe`)
    /// and, for a terraform apply or destroy, plans before it asks; `None` for a tool
    /// whose call is judged by its paths alone.
    fn command<'a>(&self, _args: &'a Value) -> Option<Command<'a>> {
        None
    }
    /// Runs the call.
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

/// Tools a sub-agent never gets.
const PARENT_ONLY: [&str; 5] = ["agent", "exit_plan_mode", "update_plan", "skill", "ask_user"];

/// The tools offered to the model.
#[derive(Clone)]
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
}

impl Registry {
    /// Every built-in tool.
    pub fn builtin() -> Registry {
        Registry {
            tools: vec![
                Arc::new(read_file::ReadFile),
                Arc::new(list_files::ListFiles),
                Arc::new(glob::Glob),
                Arc::new(grep::Grep),
                Arc::new(write_file::WriteFile),
                Arc::new(edit_file::EditFile),
                Arc::new(bash::Bash),
                Arc::new(web_fetch::WebFetch),
                Arc::new(agent::Agent),
                Arc::new(update_plan::UpdatePlan),
                Arc::new(read_memory::ReadMemory),
                Arc::new(write_memory::WriteMemory),
                Arc::new(skill::Skill),
                Arc::new(ask_user::AskUser),
                // Last: offered only in plan mode (`agent::offered_tools`).
                Arc::new(exit_plan_mode::ExitPlanMode),
            ],
        }
    }

    /// The tools a sub-agent of `kind` gets: never `agent`; only readers unless
    /// general-purpose.
    pub fn for_sub_agent(&self, kind: SubAgentType) -> Registry {
        let tools = self
            .tools
            .iter()
            // Their plans, modes, skills and questions are the parent's business.
            .filter(|t| !PARENT_ONLY.contains(&t.name()))
            .filter(|t| kind == SubAgentType::GeneralPurpose || t.access().read_only())
            .cloned()
            .collect();
        Registry { tools }
    }

    /// Looks a tool up by name.
    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools.iter().find(|t| t.name() == name).map(|t| t.as_ref())
    }

    /// Looks a tool up by name, as a shared handle.
    pub fn get_arc(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name).cloned()
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
        return Invocation::plain(verb);
    };
    let path = paths::resolve(ctx.cwd, raw);
    let shown = paths::display_relative(&path, ctx.cwd);
    judged(format!("{verb} {shown}"), path, line, ctx)
}

/// An invocation touching `path`, judged on where it really points.
pub(crate) fn judged(
    title: String,
    path: PathBuf,
    line: Option<u32>,
    ctx: &ToolContext,
) -> Invocation {
    let target = judge_within(&path, ctx.cwd, ctx.extra, ctx.config_dir);
    Invocation {
        title,
        locations: vec![(path, line)],
        outside_cwd: !target.inside,
        sensitive: target.sensitive.clone(),
        targets: vec![target],
        gate: Gate::default(),
    }
}

#[cfg(test)]
mod tests {
    //! The catalog of built-in tools: names, files, rules' list, descriptions and schemas.

    use super::*;

    #[test]
    fn catalog_is_well_formed() {
        let registry = Registry::builtin();
        let mut names = std::collections::HashSet::new();
        for tool in registry.iter() {
            let name = tool.name();
            assert!(names.insert(name), "duplicate tool {name}");
            assert!(name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{name}");
            // `rules` sits below `tools` and keeps its own list of the names a rule may use.
            assert!(crate::rules::BUILTIN_TOOLS.contains(&name), "{name}: not in rules' list");
            let file = format!("{}/src/tools/{name}.rs", env!("CARGO_MANIFEST_DIR"));
            assert!(Path::new(&file).exists(), "{name} must live in {file}");
            assert!(!tool.description().is_empty() && tool.description().len() <= 1024);
            let schema = tool.schema();
            if let Err(err) = jsonschema::meta::validate(&schema) {
                panic!("{name}: its schema is not a valid JSON Schema: {err}");
            }
            assert!(jsonschema::validator_for(&schema).is_ok(), "{name}");
            assert_eq!(schema["type"], "object", "{name}");
            let props = schema["properties"].as_object().expect("properties");
            for req in schema["required"].as_array().into_iter().flatten() {
                assert!(props.contains_key(req.as_str().expect("a string")), "{name}: {req}");
            }
            for (prop, spec) in props {
                assert!(spec["description"].is_string(), "{name}.{prop} has no description");
            }
        }
    }
}
