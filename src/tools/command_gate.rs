//! What the permission gate knows of a `bash` command: its tier, prefixes, lines for the
//! rules and the paths it names (judged like the file tools' paths) from `infra::classify`;
//! then, before asking, what it acts on (`infra::scope`) and, for a lone terraform apply or
//! destroy, the plan itself (`plan.rs`), judged with a manifest applied by kubectl or
//! helm by the team's policies (`policy_gate.rs`).

use std::path::PathBuf;
use std::time::Duration;

use super::policy_gate::{self, Judged};
use super::{Invocation, ToolContext, ToolError};
use crate::infra::{self, PathUse, Tier};

/// What the permission gate knows of a call besides its paths: a command's tier and
/// prefixes, what it writes and runs, what the question shows.
#[derive(Debug, Clone, Default)]
pub struct Gate {
    /// A command's tier (`bash`); `None` for other tools.
    pub tier: Option<crate::infra::Tier>,
    /// Why the tier is what it is (for the question's title).
    pub reasons: Vec<String>,
    /// What an "always" answer remembers (`terraform fmt`); `None`: not offered.
    pub prefixes: Option<Vec<String>>,
    /// Each command as one line, for the team's rules.
    pub lines: Vec<String>,
    /// The commands with hidden parts as patterns, for the team's deny and ask rules.
    pub patterns: Vec<String>,
    /// The raw command when it was not understood whole, for the team's deny rules.
    pub opaque: Option<String>,
    /// Its mutations only write files (accept_edits may run it inside the project).
    pub file_only: bool,
    /// Files it writes (remembered as unreviewed when no person answered).
    pub written: Vec<PathBuf>,
    /// Directories whose files it runs as code.
    pub runs_code_in: Vec<PathBuf>,
    /// Why the tool refuses the call in every mode.
    pub refused: Option<String>,
    /// Shown with the question (Markdown): a plan's summary, what the command acts on.
    pub content: Vec<String>,
    /// What runs if the call is allowed, in place of its own command (`prepare`).
    pub prepared: Option<String>,
    /// Scratch files of the call (a saved plan), removed when it ends.
    pub scratch: Vec<PathBuf>,
    /// A lone terraform apply or destroy, planned by `prepare`.
    pub terraform: Option<crate::infra::TfCall>,
    /// The saved plan shown in the question, byte for byte (`verify`).
    pub shown_plan: Option<(PathBuf, Vec<u8>)>,
    /// The highest tier of the infrastructure clients of a command understood whole whose
    /// other commands only read (`infra::Classified::cloud`): what the sandbox may give
    /// the network and the credentials.
    pub cloud: Option<Tier>,
    /// The command was understood whole (nothing opaque, no hidden program).
    pub whole: bool,
    /// Added to the call's result (the team's policies' warnings).
    pub notes: Vec<String>,
}

impl Gate {
    /// Before the call runs: the saved plan on disk is still, byte for byte, the one the
    /// question showed (a process of the session could have replaced it meanwhile).
    pub fn verify(&self) -> Result<(), String> {
        let Some((path, shown)) = &self.shown_plan else { return Ok(()) };
        match std::fs::read(path) {
            Ok(now) if now == *shown => Ok(()),
            _ => Err("The saved plan changed on disk after it was shown: nothing was applied. \
                      Run the command again to see a new plan."
                .to_string()),
        }
    }
}

/// Paths of a command shown as locations at most (all are judged).
const MAX_LOCATIONS: usize = 20;

/// The environment a command will run in, for what the classifier reads (HOME, …).
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Classifies `command` and judges the paths it names.
pub(super) fn describe(title: String, command: &str, ctx: &ToolContext) -> Invocation {
    let mut c = infra::classify(command, ctx.cwd, &env);
    if !super::process::is_bash() && bash_only(command) {
        // The parser reads bash; /bin/sh (dash) would read this differently.
        c.tier = c.tier.max(Tier::Mutate);
        c.prefixes = None;
        c.opaque = true;
        c.reasons.push("bash-only syntax run by /bin/sh (no bash on this host)".into());
    }
    let mut invocation = Invocation::plain(title);
    let mut written = Vec::new();
    for (path, how) in &c.paths {
        let mut target = super::judge_within(path, ctx.cwd, ctx.extra, ctx.config_dir);
        if *how == PathUse::Write {
            target = target.writing();
            written.push(target.real.clone().unwrap_or_else(|| path.clone()));
        }
        if invocation.locations.len() < MAX_LOCATIONS {
            invocation.locations.push((path.clone(), None));
        }
        invocation.targets.push(target);
    }
    invocation.outside_cwd = invocation.targets.iter().any(|t| !t.inside);
    // A command that prints secrets (state, tokens, decrypted values) asks like a read of
    // a sensitive file: every time, never "always".
    invocation.sensitive =
        c.secret.clone().or_else(|| invocation.targets.iter().find_map(|t| t.sensitive.clone()));
    invocation.gate = Gate {
        tier: Some(c.tier),
        reasons: c.reasons,
        prefixes: c.prefixes,
        lines: c.lines,
        patterns: c.patterns,
        opaque: c.opaque.then(|| command.to_string()),
        file_only: c.file_only,
        written,
        runs_code_in: c.runs_code_in,
        terraform: c.terraform,
        cloud: c.cloud,
        whole: !c.opaque,
        ..Gate::default()
    };
    invocation
}

/// Whether `command` holds syntax bash and `/bin/sh` (dash) read differently.
fn bash_only(command: &str) -> bool {
    ["$'", "&>", "[[", "((", "<<<", "<(", ">(", "${", "|&", "function "]
        .iter()
        .any(|token| command.contains(token))
}

/// Before a question about a mutation: what it acts on, and a terraform apply's or
/// destroy's plan, computed now so the question can show it and the call can apply
/// exactly it.
pub(super) fn prepare(
    command: &str,
    invocation: &mut Invocation,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<(), ToolError> {
    let gate = &mut invocation.gate;
    if gate.tier.is_none_or(|t| t < Tier::Mutate) {
        return Ok(());
    }
    let script = crate::shell::parse(command);
    let scope = infra::scope::scope(&script, ctx.cwd, &env);
    let Some(tf) = gate.terraform.clone() else {
        if !scope.is_empty() {
            gate.content.push(acts_on(&scope));
        }
        let mut judged = Judged::default();
        policy_gate::judge_manifests(&script, &mut judged, timeout, ctx);
        lay(gate, judged);
        return Ok(());
    };
    if !tf.unknown.is_empty() {
        gate.reasons.push(format!(
            "its plan cannot be shown first: options the gate cannot carry into a plan ({})",
            tf.unknown.join(" ")
        ));
        if !scope.is_empty() {
            gate.content.push(acts_on(&scope));
        }
        let mut judged = Judged::default();
        policy_gate::unjudged(&mut judged, ctx);
        lay(gate, judged);
        return Ok(());
    }
    let planned = super::plan::plan(&tf, timeout, ctx)?;
    let tier = planned.summary.tier();
    gate.tier = Some(tier);
    gate.reasons = reasons_of(&planned.summary, tf.destroy);
    gate.content.push(planned.summary.render(&scope));
    gate.prepared = Some(planned.apply);
    gate.scratch = planned.scratch;
    gate.shown_plan = Some(planned.shown);
    gate.terraform = None;
    // The plan file is ours: the model's own files are not what runs.
    gate.runs_code_in = vec![tf.dir];
    let json = String::from_utf8_lossy(&planned.json);
    let mut judged = Judged::default();
    policy_gate::judge(&[json.into_owned()], "the plan", &mut judged, ctx);
    lay(gate, judged);
    Ok(())
}

/// What the policies said, into the gate: a refusal, what the question shows, what the
/// result adds.
fn lay(gate: &mut Gate, judged: Judged) {
    if judged.refused.is_some() {
        gate.refused = judged.refused;
    }
    gate.content.extend(judged.content);
    gate.notes.extend(judged.notes);
}

/// Why a planned apply is at its tier, for the question's title.
fn reasons_of(summary: &infra::plan::PlanSummary, destroy: bool) -> Vec<String> {
    let verb = if destroy { "terraform destroy" } else { "terraform apply" };
    if summary.destroy + summary.replace == 0 {
        return vec![format!("{verb}: {}", summary.headline())];
    }
    vec![format!("{verb} deletes or replaces infrastructure: {}", summary.headline())]
}

/// The scope lines as a Markdown list.
fn acts_on(scope: &[String]) -> String {
    let mut text = String::from("**Acts on**\n");
    for line in scope {
        text.push_str(&format!("- {line}\n"));
    }
    text
}
