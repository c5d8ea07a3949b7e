//! Hooks: commands of the team's (the user's `settings.json`, an approved project's
//! `.iac-code/settings.json`; read by `config/hooks.rs`) that run at five points of a
//! session and may stop what happens next. `Hooks` holds those in force for one prompt;
//! `run` starts the hooks of one event that match, one after the other, and gives a
//! `Report` that the agent loop (`PreToolUse`, `PostToolUse`, `Stop`) and the session
//! (`UserPromptSubmit`, `SessionStart`) act on. `wire.rs` is the stdin document,
//! `verdict.rs` what a run means (pure), `run.rs` the run itself (through `child`).
//!
//! Never imports `agent`, `session` or `acp`: what a block does is theirs to decide.

pub mod run;
pub mod verdict;
pub mod wire;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cancel::CancelToken;
pub use crate::config::hooks::{Event, HookSpec, ProjectCheck};
use crate::rules::{Source, Verdict};
use verdict::Outcome;
use wire::{About, Common};

/// Characters of a hook's command shown in a line or a reason.
const SHOWN_COMMAND_CHARS: usize = 60;

/// The hooks in force for one session, and what their input says of it.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    specs: Vec<HookSpec>,
    session_id: String,
    cwd: PathBuf,
    transcript: Option<String>,
    /// What the project's hooks among `specs` run, as approved: looked at again before
    /// each run of them.
    project: Option<ProjectCheck>,
}

impl Hooks {
    /// `specs` for the session `session_id` in `cwd` (its journal at `transcript`, if it
    /// is a file).
    pub fn new(
        specs: Vec<HookSpec>,
        session_id: &str,
        cwd: &Path,
        transcript: Option<&Path>,
    ) -> Hooks {
        Hooks {
            specs,
            session_id: session_id.to_string(),
            cwd: cwd.to_path_buf(),
            transcript: transcript.map(|p| p.display().to_string()),
            project: None,
        }
    }

    /// With the check of what the project's hooks run (`None`: there are none).
    pub fn with_project(mut self, check: Option<ProjectCheck>) -> Hooks {
        self.project = check;
        self
    }

    /// What the approval of the project's hooks covers (their scripts and the scripts'
    /// directories); empty without project hooks.
    pub fn covered(&self) -> Vec<PathBuf> {
        self.project.as_ref().map(ProjectCheck::covered).unwrap_or_default()
    }

    /// Every hook in force.
    pub fn specs(&self) -> &[HookSpec] {
        &self.specs
    }

    /// Whether any hook is for `event`.
    pub fn any(&self, event: Event) -> bool {
        self.specs.iter().any(|spec| spec.event == event)
    }

    /// Runs, one after the other, the hooks of `about`'s event that `wanted` picks, in the
    /// session's mode `mode`, until one blocks or denies (every `PostToolUse` hook runs)
    /// or the turn is cancelled.
    pub fn run(
        &self,
        about: &About,
        mode: Option<&str>,
        wanted: impl Fn(&HookSpec) -> bool,
        cancel: &CancelToken,
    ) -> Report {
        let event = about.event();
        let mut report = Report::default();
        let picked = |s: &&HookSpec| s.event == event && wanted(s);
        // What a project's hook runs may have changed since the prompt began (a write of
        // this very turn): then none of the project's runs.
        if self.specs.iter().filter(picked).any(|s| from_project(&s)) {
            report.withheld = self.project.as_ref().and_then(ProjectCheck::withheld);
            if self.project.is_none() {
                report.withheld = Some("the project's hooks were not approved".to_string());
            }
        }
        let withheld = report.withheld.is_some();
        if let Some(why) = &report.withheld {
            log::warn!("{} hooks: {why}", event.name());
        }
        let mut matching =
            self.specs.iter().filter(picked).filter(|s| !(withheld && from_project(s))).peekable();
        if matching.peek().is_none() {
            return report;
        }
        let cwd = self.cwd.to_string_lossy();
        let common = Common {
            session_id: &self.session_id,
            transcript_path: self.transcript.as_deref(),
            cwd: &cwd,
            permission_mode: mode,
        };
        let input = wire::document(&common, about);
        for spec in matching {
            let done = run::run(&spec.command, &self.cwd, &input, spec.timeout, cancel);
            let outcome = verdict::judge(event, &done.end, &done.stdout, &done.stderr);
            let ran = Ran { event, command: shown(&spec.command), outcome, elapsed: done.elapsed };
            log::info!("{} (from {})", ran.line(), spec.source);
            let stop = ran.outcome == Outcome::Cancelled
                || (event != Event::PostToolUse && ran.outcome.stops());
            report.ran.push(ran);
            if stop {
                break;
            }
        }
        report
    }
}

/// Whether `spec` is a project's hook (approved with what it runs).
fn from_project(spec: &&HookSpec) -> bool {
    matches!(spec.source, Source::Project(_))
}

/// A command on one line, clipped, for lines and reasons.
fn shown(command: &str) -> String {
    crate::text::one_line(command, " ", SHOWN_COMMAND_CHARS)
}

/// One hook that ran.
#[derive(Debug, Clone)]
pub struct Ran {
    pub event: Event,
    /// Its command, as shown.
    pub command: String,
    pub outcome: Outcome,
    pub elapsed: Duration,
}

impl Ran {
    /// Who said it: "the PreToolUse hook `./guard.sh`".
    pub fn who(&self) -> String {
        format!("the {} hook `{}`", self.event.name(), self.command)
    }

    /// What the client is shown of it: one short line.
    pub fn line(&self) -> String {
        let what = match &self.outcome {
            Outcome::Go { .. } => "ok".to_string(),
            Outcome::Block { .. } => "blocked".to_string(),
            Outcome::Decide { verdict: Verdict::Deny, .. } => "denied".to_string(),
            Outcome::Decide { verdict: Verdict::Ask, .. } => "asks".to_string(),
            Outcome::Decide { verdict: Verdict::Allow, .. } => "allows".to_string(),
            Outcome::Warn { warning } => crate::text::clip(warning, 120),
            Outcome::Cancelled => "cancelled".to_string(),
        };
        let ms = self.elapsed.as_millis();
        format!("hook {} `{}`: {what} ({ms} ms)", self.event.name(), self.command)
    }
}

/// What the hooks of one event said.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Each hook that ran, in order.
    pub ran: Vec<Ran>,
    /// Why the project's hooks of this event did not run, when they did not.
    pub withheld: Option<String>,
}

impl Report {
    /// Whether no hook ran.
    pub fn is_empty(&self) -> bool {
        self.ran.is_empty() && self.withheld.is_none()
    }

    /// One line per hook that ran, for the client.
    pub fn lines(&self) -> Vec<String> {
        self.ran.iter().map(Ran::line).collect()
    }

    /// The warnings for the client: hooks that failed, timed out or said something
    /// unreadable (everything went on without them).
    pub fn warnings(&self) -> Vec<String> {
        let warned = self.ran.iter().filter_map(|ran| match &ran.outcome {
            Outcome::Warn { warning } => Some(format!("⚠ {}: {warning}; went on.", ran.who())),
            _ => None,
        });
        let withheld = self.withheld.iter().map(|why| format!("⚠ {why}."));
        withheld.chain(warned).collect()
    }

    /// Whether the turn was cancelled while a hook ran.
    pub fn cancelled(&self) -> bool {
        self.ran.iter().any(|ran| ran.outcome == Outcome::Cancelled)
    }

    /// The first block, as "the <event> hook `<command>`: <reason>".
    pub fn block(&self) -> Option<String> {
        self.ran.iter().find_map(|ran| match &ran.outcome {
            Outcome::Block { reason } => Some(format!("{}: {reason}", ran.who())),
            _ => None,
        })
    }

    /// `PreToolUse`: what the hooks say to the permission gate, with who said it and why:
    /// a block or a deny over an ask over an allow.
    pub fn decision(&self) -> Option<(Verdict, String)> {
        let said = self.ran.iter().filter_map(|ran| match &ran.outcome {
            Outcome::Block { reason } => Some((Verdict::Deny, format!("{}: {reason}", ran.who()))),
            Outcome::Decide { verdict, reason } => {
                let why = reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
                Some((*verdict, format!("{}{why}", ran.who())))
            }
            _ => None,
        });
        said.max_by_key(|(verdict, _)| *verdict)
    }

    /// What the hooks tell the model, each part labelled with its hook: what they said on
    /// going on, and why they blocked (`PostToolUse`: the call already ran).
    pub fn context(&self) -> Option<String> {
        let parts: Vec<String> = self
            .ran
            .iter()
            .filter_map(|ran| match &ran.outcome {
                Outcome::Go { context: Some(text) } => {
                    Some(format!("[{} says]\n{text}", ran.who()))
                }
                Outcome::Block { reason } => Some(format!("[{} objects]\n{reason}", ran.who())),
                _ => None,
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(outcome: Outcome) -> Ran {
        let command = "./guard.sh".to_string();
        Ran { event: Event::PreToolUse, command, outcome, elapsed: Duration::from_millis(7) }
    }

    #[test]
    fn a_report_puts_deny_over_ask_over_allow() {
        let allow = ran(Outcome::Decide { verdict: Verdict::Allow, reason: None });
        let ask = ran(Outcome::Decide { verdict: Verdict::Ask, reason: Some("prod".into()) });
        let block = ran(Outcome::Block { reason: "not in CI".into() });
        let report = Report { withheld: None, ran: vec![allow.clone(), ask.clone()] };
        let said = report.decision().unwrap();
        assert_eq!(said, (Verdict::Ask, "the PreToolUse hook `./guard.sh`: prod".into()));
        let report = Report { withheld: None, ran: vec![allow.clone(), block, ask] };
        let said = report.decision().unwrap();
        assert_eq!(said, (Verdict::Deny, "the PreToolUse hook `./guard.sh`: not in CI".into()));
        assert_eq!(report.block().unwrap(), "the PreToolUse hook `./guard.sh`: not in CI");
        let report = Report { withheld: None, ran: vec![allow] };
        assert_eq!(report.decision().unwrap().1, "the PreToolUse hook `./guard.sh`");
        assert_eq!(Report::default().decision(), None);
    }

    #[test]
    fn lines_warnings_and_context_say_which_hook() {
        let warn = ran(Outcome::Warn { warning: "exit 1: boom".into() });
        let context = ran(Outcome::Go { context: Some("formatted".into()) });
        let block = ran(Outcome::Block { reason: "lint".into() });
        let report =
            Report { withheld: None, ran: vec![warn, context, ran(Outcome::Go { context: None })] };
        assert_eq!(
            report.lines(),
            [
                "hook PreToolUse `./guard.sh`: exit 1: boom (7 ms)",
                "hook PreToolUse `./guard.sh`: ok (7 ms)",
                "hook PreToolUse `./guard.sh`: ok (7 ms)"
            ]
        );
        assert_eq!(
            report.warnings(),
            ["⚠ the PreToolUse hook `./guard.sh`: exit 1: boom; went on."]
        );
        assert_eq!(report.context().unwrap(), "[the PreToolUse hook `./guard.sh` says]\nformatted");
        assert!(!report.cancelled() && report.block().is_none());
        let report = Report {
            withheld: None,
            ran: vec![ran(Outcome::Go { context: Some("a".into()) }), block],
        };
        let expected = "[the PreToolUse hook `./guard.sh` says]\na\n\n\
                        [the PreToolUse hook `./guard.sh` objects]\nlint";
        assert_eq!(report.context().unwrap(), expected);
        assert_eq!(shown("a\nb   c"), "a b   c");
    }
}
