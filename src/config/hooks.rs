//! The `hooks` of `settings.json` (the user's, and a project's `.iac-code/settings.json`
//! once its exact content is approved): commands a team runs at five points of a session,
//! `PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `Stop` and `SessionStart`. Each event
//! holds a list of `{matcher, command, timeout}`, or Claude Code's nested form
//! `{matcher, hooks: [{type: "command", command, timeout}]}`. A tool event's matcher is
//! written in the rule syntax of the permission rules (`bash(terraform apply*)`,
//! `write_file(*.tf)`, alternatives split by `|` outside parentheses), and each
//! alternative is compiled as a `rules::Rule`: hooks and rules read a call one way. `*`,
//! `""` or no matcher: every call. Anything malformed is an error naming the file and the
//! entry, never skipped.
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "bash(terraform apply*)",
//!                            "command": "./ci-only.sh", "timeout": 10}]}}
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::approval::{HOOKS, Runs, Standing};
pub use super::hook_runs::ProjectCheck;
use super::permissions::{ProjectSettings, project_settings};
use crate::rules::{Rule, Source, Subject, Verdict};

/// The settings key that holds the hooks.
pub const KEY: &str = "hooks";
/// How long a hook may run when its entry names no timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest timeout an entry may name, in seconds.
pub const MAX_TIMEOUT_SECS: f64 = 600.0;
/// The sessions a `SessionStart` matcher may name.
pub const SOURCES: &[&str] = &["startup", "resume"];

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Before a tool call's permission decision; it may block, ask or allow.
    PreToolUse,
    /// After a tool call ran; what it says goes to the model with the result.
    PostToolUse,
    /// Before a prompt reaches the model; it may refuse it.
    UserPromptSubmit,
    /// When the model ends its turn; it may make the turn go on.
    Stop,
    /// When a session is created or loaded; what it says goes into the system prompt.
    SessionStart,
}

impl Event {
    /// Every event, in the order they are listed.
    pub const ALL: [Event; 5] = [
        Event::PreToolUse,
        Event::PostToolUse,
        Event::UserPromptSubmit,
        Event::Stop,
        Event::SessionStart,
    ];

    /// Its name in the settings and in a hook's input (`hook_event_name`).
    pub fn name(self) -> &'static str {
        match self {
            Event::PreToolUse => "PreToolUse",
            Event::PostToolUse => "PostToolUse",
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::Stop => "Stop",
            Event::SessionStart => "SessionStart",
        }
    }

    /// The event named `name`.
    pub fn from_name(name: &str) -> Option<Event> {
        Event::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether it is about one tool call (its matcher is rules).
    pub fn on_tools(self) -> bool {
        matches!(self, Event::PreToolUse | Event::PostToolUse)
    }
}

/// Which calls (or sessions) a hook is for.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Every one (no matcher, `""`, `*`).
    All,
    /// A tool call any of these rules matches (as a deny rule would: one command or path).
    Rules(Vec<Rule>),
    /// `SessionStart`: sessions started this way (`startup`, `resume`).
    Sources(Vec<String>),
}

/// One hook as configured.
#[derive(Debug, Clone)]
pub struct HookSpec {
    pub event: Event,
    pub matcher: Matcher,
    /// The matcher as written (`*` when there was none).
    pub matcher_text: String,
    /// The shell command.
    pub command: String,
    /// How long it may run before it is killed with everything it started.
    pub timeout: Duration,
    /// Where it was written.
    pub source: Source,
}

impl HookSpec {
    /// Whether this hook is for the tool call `subject`.
    pub fn matches_call(&self, subject: &Subject) -> bool {
        match &self.matcher {
            Matcher::All => true,
            Matcher::Rules(rules) => rules.iter().any(|rule| rule.matches(subject)),
            Matcher::Sources(_) => false,
        }
    }

    /// Whether this hook is for a session started as `source` (`startup`, `resume`).
    pub fn matches_source(&self, source: &str) -> bool {
        match &self.matcher {
            Matcher::All => true,
            Matcher::Sources(sources) => sources.iter().any(|s| s == source),
            Matcher::Rules(_) => false,
        }
    }
}

/// The hooks of a settings file's `hooks` object (`value`), read from `path`, each with
/// `source`; `Err` names the file and the entry, and says what to write.
pub fn from_settings(value: &Value, path: &Path, source: &Source) -> Result<Vec<HookSpec>, String> {
    let shown = path.display();
    let Value::Object(events) = value else {
        return Err(format!("{shown}: {KEY} must be an object keyed by event (PreToolUse, ...)"));
    };
    let mut hooks = Vec::new();
    for (name, list) in events {
        let Some(event) = Event::from_name(name) else {
            let known: Vec<&str> = Event::ALL.iter().map(|e| e.name()).collect();
            return Err(format!(
                "{shown}: unknown hook event {KEY}.{name} (expected {})",
                known.join(", ")
            ));
        };
        let Value::Array(entries) = list else {
            return Err(format!("{shown}: {KEY}.{name} must be a list of hooks"));
        };
        for (n, entry) in entries.iter().enumerate() {
            let at = format!("{shown}: {KEY}.{name}[{n}]");
            entry_hooks(event, entry, source, &mut hooks).map_err(|why| format!("{at}{why}"))?;
        }
    }
    Ok(hooks)
}

/// The hooks of one entry, flat or nested; `Err` starts with the key at fault (`.matcher:
/// …`) or with `: ` for the entry as a whole.
fn entry_hooks(
    event: Event,
    entry: &Value,
    source: &Source,
    out: &mut Vec<HookSpec>,
) -> Result<(), String> {
    let Value::Object(entry) = entry else {
        return Err(
            ": must be an object such as {\"matcher\": \"bash\", \"command\": \"...\"}".to_string()
        );
    };
    let text = match entry.get("matcher") {
        None | Some(Value::Null) => "",
        Some(Value::String(text)) => text.trim(),
        Some(_) => return Err(".matcher: must be a string".to_string()),
    };
    let matcher = matcher(event, text, source).map_err(|why| format!(".matcher: {why}"))?;
    let matcher_text = if text.is_empty() { "*".to_string() } else { text.to_string() };
    let commands: Vec<(String, &Map<String, Value>)> = match entry.get("hooks") {
        Some(Value::Array(nested)) => {
            only_keys(entry, &["matcher", "hooks"], "")?;
            let mut found = Vec::new();
            for (n, hook) in nested.iter().enumerate() {
                let Value::Object(hook) = hook else {
                    return Err(format!(".hooks[{n}]: must be an object with a command"));
                };
                found.push((format!(".hooks[{n}]"), hook));
            }
            if found.is_empty() {
                return Err(".hooks: an empty list (remove the entry, or add a command)".into());
            }
            found
        }
        Some(_) => return Err(".hooks: must be a list of {type, command, timeout}".to_string()),
        None => vec![(String::new(), entry)],
    };
    for (at, hook) in commands {
        let keys: &[&str] = if at.is_empty() {
            &["matcher", "type", "command", "timeout"]
        } else {
            &["type", "command", "timeout"]
        };
        only_keys(hook, keys, &at)?;
        match hook.get("type") {
            None => {}
            Some(Value::String(kind)) if kind == "command" => {}
            Some(other) => {
                return Err(format!(
                    "{at}.type: {other} is not supported (only \"command\" hooks run here)"
                ));
            }
        }
        let command = match hook.get("command") {
            Some(Value::String(command)) if !command.trim().is_empty() => command.clone(),
            Some(Value::String(_)) => return Err(format!("{at}.command: an empty command")),
            Some(_) => return Err(format!("{at}.command: must be a string (a shell command)")),
            None => return Err(format!("{at}: no command (write \"command\": \"...\")")),
        };
        let timeout = timeout(hook.get("timeout")).map_err(|why| format!("{at}.timeout: {why}"))?;
        out.push(HookSpec {
            event,
            matcher: matcher.clone(),
            matcher_text: matcher_text.clone(),
            command,
            timeout,
            source: source.clone(),
        });
    }
    Ok(())
}

/// `Err` names the first key of `object` not in `keys`.
fn only_keys(object: &Map<String, Value>, keys: &[&str], at: &str) -> Result<(), String> {
    match object.keys().find(|k| !keys.contains(&k.as_str())) {
        None => Ok(()),
        Some(key) => Err(format!("{at}: unknown key '{key}' (expected {})", keys.join(", "))),
    }
}

/// A matcher as written (trimmed) for `event`.
fn matcher(event: Event, text: &str, source: &Source) -> Result<Matcher, String> {
    if text.is_empty() || text == "*" {
        return Ok(Matcher::All);
    }
    let alternatives = split_alternatives(text);
    if alternatives.is_empty() {
        return Err(format!("'{text}' names nothing: write * for every call"));
    }
    match event {
        Event::PreToolUse | Event::PostToolUse => alternatives
            .into_iter()
            .map(|alt| Rule::parse(alt, Verdict::Deny, source.clone()))
            .collect::<Result<Vec<Rule>, String>>()
            .map(Matcher::Rules),
        Event::SessionStart => {
            for alt in &alternatives {
                if !SOURCES.contains(alt) {
                    return Err(format!(
                        "'{alt}': a SessionStart matcher names how the session started ({})",
                        SOURCES.join(", ")
                    ));
                }
            }
            Ok(Matcher::Sources(alternatives.into_iter().map(str::to_string).collect()))
        }
        Event::UserPromptSubmit | Event::Stop => Err(format!(
            "'{text}': {} hooks take no matcher (leave it out, or write *)",
            event.name()
        )),
    }
}

/// The alternatives of a matcher (`bash(terraform apply*)|write_file`): split on `|`
/// outside parentheses, each trimmed, empty ones left out.
fn split_alternatives(text: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            '|' if depth == 0 => {
                out.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(text[start..].trim());
    out.retain(|alt| !alt.is_empty());
    out
}

/// A timeout in seconds (a number over 0, at most `MAX_TIMEOUT_SECS`); none: the default.
fn timeout(value: Option<&Value>) -> Result<Duration, String> {
    let Some(value) = value.filter(|v| !v.is_null()) else { return Ok(DEFAULT_TIMEOUT) };
    match value.as_f64() {
        Some(secs) if secs > 0.0 && secs <= MAX_TIMEOUT_SECS => Ok(Duration::from_secs_f64(secs)),
        _ => Err(format!("{value}: expected seconds over 0 and at most {MAX_TIMEOUT_SECS}")),
    }
}

/// The hooks of a project's settings file, `text` read from `path` (none when it has no
/// `hooks`).
pub fn of_project_file(text: &str, path: &Path) -> Result<Vec<HookSpec>, String> {
    let shown = path.display();
    let root: Map<String, Value> = match serde_json::from_str(text) {
        Ok(Value::Object(root)) => root,
        Ok(_) => return Err(format!("{shown}: expected a JSON object")),
        Err(err) => return Err(format!("{shown}: not valid JSON: {err}")),
    };
    match root.get(KEY) {
        Some(value) => from_settings(value, path, &Source::Project(path.to_path_buf())),
        None => Ok(Vec::new()),
    }
}

/// The hooks of the project in a directory that run now.
#[derive(Debug, Clone, Default)]
pub struct ProjectHooks {
    /// Its hooks, when exactly this content of the file was approved, with the project
    /// files they run as they were then; else none.
    pub hooks: Vec<HookSpec>,
    /// Hooks left out because the file (as it is now) was not approved.
    pub unapproved: usize,
    /// The project files they run that changed since the approval (then none run).
    pub changed: Vec<String>,
    /// The project settings file's real path, when there is one.
    pub path: Option<PathBuf>,
    /// What the approved hooks run, as approved: checked again before each run (`hooks`).
    pub check: Option<ProjectCheck>,
}

/// The hooks of the project settings in `cwd` that run now: all of them once the file's
/// exact content is approved, none before. `Err`: the file cannot be used (a link, not
/// JSON, a bad rule or hook), approved or not.
pub fn project_hooks(cwd: &Path, config_dir: &Path) -> Result<ProjectHooks, String> {
    let Some(settings) = project_settings(cwd, config_dir)? else {
        return Ok(ProjectHooks::default());
    };
    let hooks = of_project_file(&settings.text, &settings.path)?;
    let runs = runs(&settings, &hooks);
    let standing = match (settings.approved, super::hook_runs::over_bounds(&runs)) {
        // Past the bounds: never run, whatever was approved.
        (_, Some(why)) => Standing::Changed(vec![why]),
        (true, None) => HOOKS.standing(config_dir, &settings.path, &settings.text, &runs),
        (false, None) => Standing::Unapproved,
    };
    let unapproved = ProjectHooks {
        unapproved: hooks.len(),
        hooks: Vec::new(),
        changed: Vec::new(),
        path: Some(settings.path.clone()),
        check: None,
    };
    Ok(match standing {
        Standing::Approved => {
            let commands = hooks.iter().map(|h| h.command.clone()).collect();
            let check = ProjectCheck::new(&settings.path, root(&settings), commands, runs);
            ProjectHooks { unapproved: 0, hooks, check: Some(check), ..unapproved }
        }
        Standing::Changed(changed) => ProjectHooks { changed, ..unapproved },
        Standing::Unapproved => unapproved,
    })
}

/// Keeps what the project's hooks in `cwd` run as approved (with the settings file itself:
/// `permissions::approve_project`). `Err`: why the file cannot be used or kept, or what the
/// hooks run is past the bounds (`hook_runs::over_bounds`).
pub fn approve_runs(cwd: &Path, config_dir: &Path) -> Result<(), String> {
    let Some(settings) = project_settings(cwd, config_dir)? else { return Ok(()) };
    let hooks = of_project_file(&settings.text, &settings.path)?;
    let runs = runs(&settings, &hooks);
    if let Some(why) = super::hook_runs::over_bounds(&runs) {
        return Err(format!("{}: its hooks cannot be approved: {why}", settings.path.display()));
    }
    HOOKS
        .approve_running(config_dir, &settings.path, &settings.text, &runs)
        .map_err(|err| format!("{}: {err}", HOOKS.path(config_dir).display()))
}

/// What `hooks` of the project `settings` run from the project (the directory holding its
/// `.iac-code`).
fn runs(settings: &ProjectSettings, hooks: &[HookSpec]) -> Runs {
    super::hook_runs::runs_of(hooks.iter().map(|h| h.command.as_str()), root(settings))
}

/// The project of `settings`: the directory holding its `.iac-code`.
fn root(settings: &ProjectSettings) -> &Path {
    settings.path.parent().and_then(Path::parent).unwrap_or(Path::new("/"))
}

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod tests;
