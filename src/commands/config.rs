//! `iac-code config path|show|set|unset|approve` for people and scripts: where the
//! settings file is, which provider settings, permission rules, hooks and skills are in
//! force and where each comes from, editing it one key at a time (a value of `-` is read
//! from stdin, so a
//! key stays out of shell history), and approving the project's `.iac-code/settings.json`.

use std::io::{Read, Write};

use serde_json::{Value, json};

use crate::cli::ConfigCommand;
use crate::config::hooks;
use crate::config::manage::{self, Change};
use crate::config::permissions::{self, ProjectSettings};
use crate::config::{Config, ProcessEnv};
use crate::error::{Error, Result};
use crate::sys;

/// Runs the command; returns the exit code.
pub fn run(command: &ConfigCommand) -> Result<u8> {
    match run_inner(command) {
        Err(Error::Stream(err)) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        other => other,
    }
}

#[expect(clippy::too_many_lines, reason = "one arm per `config` subcommand")]
fn run_inner(command: &ConfigCommand) -> Result<u8> {
    let env = ProcessEnv;
    let mut out = sys::stdout().lock();
    match command {
        ConfigCommand::Path => {
            let path = manage::settings_path(&env)?;
            writeln!(out, "{}", path.display()).map_err(Error::Stream)?;
        }
        ConfigCommand::Show { json } => {
            let shown = manage::show(&env)?;
            let config = Config::from_env(&env)?;
            let cwd = std::env::current_dir().map_err(Error::Stream)?;
            let project =
                permissions::project_settings(&cwd, &config.config_dir).map_err(Error::Config)?;
            let rules = shown_rules(&config, project.as_ref());
            let hooks = shown_hooks(&config, project.as_ref())?;
            if *json {
                let mut map: serde_json::Map<String, Value> = shown
                    .iter()
                    .map(|s| {
                        let entry =
                            json!({"value": s.value, "source": s.source, "variable": s.variable});
                        (s.key.to_string(), entry)
                    })
                    .collect();
                let rules: Vec<Value> = rules
                    .iter()
                    .map(|r| {
                        json!({"verdict": r.verdict, "rule": r.text, "source": r.source,
                                    "applies": r.applies})
                    })
                    .collect();
                let project = project
                    .as_ref()
                    .map(|p| json!({"path": p.path.display().to_string(), "approved": p.approved}));
                map.insert(permissions::KEY.into(), json!({"rules": rules, "project": project}));
                let hooks: Vec<Value> = hooks
                    .iter()
                    .map(|h| {
                        json!({"event": h.event, "matcher": h.matcher, "command": h.command,
                               "timeout": h.timeout, "source": h.source, "applies": h.applies})
                    })
                    .collect();
                map.insert(hooks::KEY.into(), Value::Array(hooks));
                let skills = super::skills::in_force(&cwd, &config.config_dir);
                let skills: Vec<Value> = skills
                    .into_iter()
                    .map(|(name, source, used)| json!({"name": name, "source": source, "used": used}))
                    .collect();
                map.insert("skills".into(), Value::Array(skills));
                writeln!(out, "{}", Value::Object(map)).map_err(Error::Stream)?;
            } else {
                for s in &shown {
                    let value = s.value.as_deref().unwrap_or("-").replace(['\t', '\n', '\r'], " ");
                    writeln!(out, "{}\t{value}\t{}", s.key, s.source).map_err(Error::Stream)?;
                }
                for r in &rules {
                    let text = r.text.replace(['\t', '\n', '\r'], " ");
                    let note = match (r.applies, r.project) {
                        (false, _) => " (not approved: iac-code config approve)",
                        (true, true) if r.verdict == "allow" => " (approved)",
                        _ => "",
                    };
                    writeln!(out, "{}.{}\t{text}\t{}{note}", permissions::KEY, r.verdict, r.source)
                        .map_err(Error::Stream)?;
                }
                for h in &hooks {
                    let what = format!("{} → {} (timeout {} s)", h.matcher, h.command, h.timeout)
                        .replace(['\t', '\n', '\r'], " ");
                    let note =
                        if h.applies { "" } else { " (not approved: iac-code config approve)" };
                    writeln!(out, "{}.{}\t{what}\t{}{note}", hooks::KEY, h.event, h.source)
                        .map_err(Error::Stream)?;
                }
                for (name, source, used) in super::skills::in_force(&cwd, &config.config_dir) {
                    let note = if used { "" } else { " (not approved: asked at the next turn)" };
                    writeln!(out, "skills.{name}\t{source}{note}").map_err(Error::Stream)?;
                }
            }
        }
        ConfigCommand::Approve => {
            let dir = crate::config::config_dir(&env)?;
            let cwd = std::env::current_dir().map_err(Error::Stream)?;
            // A malformed hooks section is refused before anything is approved.
            hooks::project_hooks(&cwd, &dir).map_err(Error::Config)?;
            // The project files its hooks run, as they are now, first: past the bounds
            // nothing is approved (kept alone, they approve nothing).
            hooks::approve_runs(&cwd, &dir).map_err(Error::Config)?;
            let approved = permissions::approve_project(&cwd, &dir)?;
            for rule in approved.rules.rules() {
                writeln!(out, "{}\t{}", rule.verdict.name(), rule.text).map_err(Error::Stream)?;
            }
            for hook in
                hooks::of_project_file(&approved.text, &approved.path).map_err(Error::Config)?
            {
                let (event, matcher) = (hook.event.name(), &hook.matcher_text);
                writeln!(out, "hook\t{event}\t{matcher}\t{}", hook.command.replace('\n', " "))
                    .map_err(Error::Stream)?;
            }
            crate::logging::stderr_line(&format!(
                "approved {}: its allow rules and hooks apply from the next prompt here (a \
                 change to the file needs approving again)",
                approved.path.display()
            ));
        }
        ConfigCommand::Set { provider, key, value } => {
            let value = if value == "-" { read_stdin()? } else { value.clone() };
            manage::edit(&env, provider.as_deref(), key, Change::Set(&value))?;
        }
        ConfigCommand::Unset { provider, key } => {
            manage::edit(&env, provider.as_deref(), key, Change::Unset)?;
        }
    }
    out.flush().map_err(Error::Stream)?;
    Ok(0)
}

/// The value from stdin, without its final line break.
fn read_stdin() -> Result<String> {
    let mut text = String::new();
    std::io::stdin().lock().read_to_string(&mut text).map_err(Error::Stream)?;
    let text = text.strip_suffix('\n').unwrap_or(&text);
    Ok(text.strip_suffix('\r').unwrap_or(text).to_string())
}

/// One rule in force, for `show`.
struct ShownRule {
    verdict: &'static str,
    text: String,
    source: String,
    /// Whether it is of the project in the current directory.
    project: bool,
    /// Whether it applies now (a project's allow rule waits for approval).
    applies: bool,
}

/// The rules of the settings, variables and project in force, in that order.
fn shown_rules(config: &Config, project: Option<&ProjectSettings>) -> Vec<ShownRule> {
    let own = config.permissions.rules().iter().map(|rule| (rule, false, true));
    let project = project.into_iter().flat_map(|p| {
        p.rules
            .rules()
            .iter()
            .map(|rule| (rule, true, p.approved || rule.verdict != crate::rules::Verdict::Allow))
    });
    own.chain(project)
        .map(|(rule, project, applies)| ShownRule {
            verdict: rule.verdict.name(),
            text: rule.text.clone(),
            source: rule.source.to_string(),
            project,
            applies,
        })
        .collect()
}

/// One hook in force, for `show`.
struct ShownHook {
    event: &'static str,
    matcher: String,
    command: String,
    /// In seconds.
    timeout: f64,
    source: String,
    /// Whether it runs now (a project's waits for approval).
    applies: bool,
}

/// The hooks of the settings and of the project in force, in that order. `Err`: the
/// project's `hooks` is malformed.
fn shown_hooks(config: &Config, project: Option<&ProjectSettings>) -> Result<Vec<ShownHook>> {
    let project_hooks = match project {
        Some(p) => hooks::of_project_file(&p.text, &p.path).map_err(Error::Config)?,
        None => Vec::new(),
    };
    let approved = project.is_some_and(|p| p.approved);
    let own = config.hooks.iter().map(|hook| (hook, true));
    let shown =
        own.chain(project_hooks.iter().map(|hook| (hook, approved))).map(|(hook, applies)| {
            ShownHook {
                event: hook.event.name(),
                matcher: hook.matcher_text.clone(),
                command: hook.command.clone(),
                timeout: hook.timeout.as_secs_f64(),
                source: hook.source.to_string(),
                applies,
            }
        });
    Ok(shown.collect())
}
