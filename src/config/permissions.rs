//! Where permission rules come from, each kept with its source: the `permissions` object
//! of the user's `settings.json`, `IAC_CODE_ALLOWED_TOOLS` and `IAC_CODE_DISALLOWED_TOOLS`,
//! `--allowed-tools` and `--disallowed-tools`, and a project's `.iac-code/settings.json`.
//! A bad rule is `Error::Config` (exit 2 at start) naming the file, variable or flag and
//! the rule. A project's deny and ask rules apply at once (they only tighten); its allow
//! rules only once the user approved the file's exact content (`iac-code config approve`),
//! and so do its hooks (`config/hooks.rs`).
//!
//! ```json
//! {"permissions": {"allow": ["bash(terraform plan*)", "write_file(*.tf)"],
//!                  "ask": ["bash(terraform apply*)"], "deny": ["bash(rm -rf*)"]}}
//! ```

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::Env;
use super::approval::{Approvals, read_project_file};
use crate::error::{Error, Result};
use crate::rules::{Rule, RuleSet, Source, Verdict, split_list};

/// The settings key that holds the rules.
pub const KEY: &str = "permissions";
/// A project's settings file, below its root.
pub const PROJECT_FILE: &str = ".iac-code/settings.json";
/// Where approved project settings are kept, in the config dir.
pub const APPROVALS_FILE: &str = "project-approvals.json";
const APPROVALS: Approvals = Approvals::new(APPROVALS_FILE);
/// The keys a project's settings file holds: the rules, and the hooks `config/hooks.rs`
/// reads (its `KEY`; named here so that this file imports nothing of it).
pub(super) const PROJECT_KEYS: &[&str] = &[KEY, "hooks", crate::policy::KEY];
/// The variable of allow rules.
pub const ALLOWED_VAR: &str = "IAC_CODE_ALLOWED_TOOLS";
/// The variable of deny rules.
pub const DISALLOWED_VAR: &str = "IAC_CODE_DISALLOWED_TOOLS";

/// The rules of a settings file's `permissions` object (`value`), read from `path`, each
/// with `source`: `{"allow": [...], "ask": [...], "deny": [...]}`, nothing else.
pub(super) fn from_settings(
    value: &Value,
    path: &Path,
    source: &Source,
) -> Result<RuleSet, String> {
    let shown = path.display();
    let Value::Object(lists) = value else {
        return Err(format!("{shown}: {KEY} must be an object with allow, ask and deny lists"));
    };
    let mut rules = Vec::new();
    for (key, list) in lists {
        let verdict = match key.as_str() {
            "allow" => Verdict::Allow,
            "ask" => Verdict::Ask,
            "deny" => Verdict::Deny,
            _ => {
                return Err(format!(
                    "{shown}: unknown key {KEY}.{key} (expected allow, ask, deny)"
                ));
            }
        };
        let Value::Array(items) = list else {
            return Err(format!("{shown}: {KEY}.{key} must be a list of rules"));
        };
        for (n, item) in items.iter().enumerate() {
            let Value::String(text) = item else {
                return Err(format!(
                    "{shown}: {KEY}.{key}[{n}] must be a string (a rule such as bash(make test))"
                ));
            };
            let rule = Rule::parse(text, verdict, source.clone())
                .map_err(|why| format!("{shown}: {KEY}.{key}: {why}"))?;
            rules.push(rule);
        }
    }
    Ok(RuleSet::new(rules))
}

/// The rules of `IAC_CODE_ALLOWED_TOOLS` (allow) and `IAC_CODE_DISALLOWED_TOOLS` (deny):
/// comma-separated lists, split outside parentheses.
pub(super) fn from_env(env: &dyn Env) -> Result<RuleSet> {
    let mut rules = Vec::new();
    for (var, verdict) in [(ALLOWED_VAR, Verdict::Allow), (DISALLOWED_VAR, Verdict::Deny)] {
        if let Some(text) = env.get(var) {
            rules.extend(list(&text, verdict, Source::Env(var))?);
        }
    }
    Ok(RuleSet::new(rules))
}

/// The rules of `--allowed-tools` (allow) and `--disallowed-tools` (deny), each value a
/// comma-separated list.
pub(super) fn from_flags(allowed: &[String], disallowed: &[String]) -> Result<RuleSet> {
    let mut rules = Vec::new();
    for (values, flag, verdict) in [
        (allowed, "--allowed-tools", Verdict::Allow),
        (disallowed, "--disallowed-tools", Verdict::Deny),
    ] {
        for text in values {
            rules.extend(list(text, verdict, Source::Flag(flag))?);
        }
    }
    Ok(RuleSet::new(rules))
}

/// The rules of one comma-separated list, from the flag or variable `source` names.
fn list(text: &str, verdict: Verdict, source: Source) -> Result<Vec<Rule>> {
    split_list(text)
        .into_iter()
        .map(|rule| {
            Rule::parse(rule, verdict, source.clone())
                .map_err(|why| Error::Config(format!("{source}: {why}")))
        })
        .collect()
}

/// The rules of the project in a directory that apply now.
#[derive(Debug, Clone, Default)]
pub struct ProjectRules {
    /// Its deny and ask rules, and its allow rules once the file is approved.
    pub rules: RuleSet,
    /// Allow rules left out because the file (as it is now) was not approved.
    pub unapproved_allows: usize,
    /// The project settings file's real path, when there is one.
    pub path: Option<PathBuf>,
}

/// A project's `.iac-code/settings.json` as read now.
#[derive(Debug, Clone)]
pub struct ProjectSettings {
    /// Its real path (the key of its approval).
    pub path: PathBuf,
    /// Its content.
    pub text: String,
    /// Every rule in it, allow rules included.
    pub rules: RuleSet,
    /// Whether exactly this content was approved.
    pub approved: bool,
}

/// The rules of the project settings in `cwd` that apply now (see [`ProjectRules`]). `Err`
/// says why the file cannot be used (a link, not JSON, a bad rule).
pub fn project_rules(cwd: &Path, config_dir: &Path) -> Result<ProjectRules, String> {
    let Some(settings) = project_settings(cwd, config_dir)? else {
        return Ok(ProjectRules::default());
    };
    let (applied, unapproved): (Vec<Rule>, Vec<Rule>) = settings
        .rules
        .rules()
        .iter()
        .cloned()
        .partition(|rule| rule.verdict != Verdict::Allow || settings.approved);
    Ok(ProjectRules {
        rules: RuleSet::new(applied),
        unapproved_allows: unapproved.len(),
        path: Some(settings.path),
    })
}

/// The project settings of `cwd`, if there are: the nearest `.iac-code` from `cwd` up to
/// its git repository's root (never the user's own configuration directory), holding a
/// regular file (not a link) in a real directory (not a link either), whose `permissions`
/// are read like the user's. Other keys are ignored with a warning.
pub fn project_settings(cwd: &Path, config_dir: &Path) -> Result<Option<ProjectSettings>, String> {
    let Ok(cwd) = std::fs::canonicalize(cwd) else { return Ok(None) };
    let (dir_name, file_name) = PROJECT_FILE.split_once('/').unwrap_or((PROJECT_FILE, ""));
    let own = std::fs::canonicalize(config_dir).ok();
    let project = super::project::Project::of(&cwd);
    let found = project.dirs.iter().rev().map(|d| d.join(dir_name)).find(|dir| {
        let link = std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink());
        let mine = !link && std::fs::canonicalize(dir).ok() == own;
        link || (!mine && std::fs::symlink_metadata(dir.join(file_name)).is_ok())
    });
    let Some(dir) = found else { return Ok(None) };
    match std::fs::symlink_metadata(&dir) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(format!(
                "{} is a symbolic link: a project's settings are never read through a link",
                dir.display()
            ));
        }
        Ok(meta) if meta.is_dir() => {}
        _ => return Ok(None),
    }
    let path = dir.join(file_name);
    let Some(text) = read_project_file(&path)? else { return Ok(None) };
    let rules = project_rules_of(&text, &path)?;
    let approved = APPROVALS.approved(config_dir, &path, &text);
    Ok(Some(ProjectSettings { path, text, rules, approved }))
}

/// The rules of a project's settings file, `text` read from `path`: its `permissions`,
/// read like the user's; `hooks` is `config/hooks.rs`'s; other keys are ignored with a
/// warning.
pub(super) fn project_rules_of(text: &str, path: &Path) -> Result<RuleSet, String> {
    let shown = path.display();
    let root: Map<String, Value> = match serde_json::from_str(text) {
        Ok(Value::Object(root)) => root,
        Ok(_) => return Err(format!("{shown}: expected a JSON object")),
        Err(err) => return Err(format!("{shown}: not valid JSON: {err}")),
    };
    let read = |k: &&str| PROJECT_KEYS.contains(k);
    let ignored: Vec<&str> = root.keys().map(String::as_str).filter(|k| !read(k)).collect();
    if !ignored.is_empty() {
        log::warn!(
            "{shown}: only {KEY}, hooks and policy are read from a project's settings; ignored: {}",
            ignored.join(", ")
        );
    }
    match root.get(KEY) {
        Some(value) => from_settings(value, path, &Source::Project(path.to_path_buf())),
        None => Ok(RuleSet::default()),
    }
}

/// Approves the project settings in `cwd` as they are now, and returns them: a usage
/// error when there are none, a configuration error when they cannot be used.
pub fn approve_project(cwd: &Path, config_dir: &Path) -> Result<ProjectSettings> {
    let settings = project_settings(cwd, config_dir).map_err(Error::Config)?.ok_or_else(|| {
        Error::Usage(format!("no {PROJECT_FILE} in {}: nothing to approve", cwd.display()))
    })?;
    APPROVALS
        .approve(config_dir, &settings.path, &settings.text)
        .map_err(|source| Error::Io { path: APPROVALS.path(config_dir), source })?;
    Ok(ProjectSettings { approved: true, ..settings })
}

#[cfg(test)]
#[path = "permissions_tests.rs"]
mod tests;
