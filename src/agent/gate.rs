//! The permission gate of one tool call: the team's rules, what its `PreToolUse` hooks
//! said, the files written without review, the tool's own preparation (a terraform
//! apply's plan), the decision (`permission::decide`), the question when one is needed,
//! and the sandbox a command then runs in (`sandbox_of`): none when a person allowed this
//! very call, else a sealed one, or one with the network and the credentials for an
//! infrastructure client judged whole. Where the sandbox cannot be built, what would have
//! relied on it is asked. Runs on the prompt thread between the call's announcement and
//! its run.

use serde_json::Value;

use super::event::AgentEvent;
use super::{CANCELLED_RESULT, Turn};
use crate::infra::Tier;
use crate::permission::{self, Always, Answer, Call, Decision, Found, Mode, Question, Reach};
use crate::rules::Verdict;
use crate::sandbox::{Profile, Run, State};
use crate::sync::lock;
use crate::tools::{Access, Invocation, Tool, ToolContext, ToolError};

/// How a call passed the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Passed {
    /// A person said yes now, or said "always" before.
    ByPerson,
    /// Nobody was asked (the tier, the mode or a rule let it run): what it writes is
    /// unreviewed.
    Unasked,
}

/// The team's rules' verdict on a call, with the rule as shown to the model.
fn verdict(turn: &Turn, tool: &str, invocation: &Invocation, cwd: &std::path::Path) -> Rule {
    super::hooks::with_subject(tool, invocation, cwd, |subject| {
        let said = turn.rules.verdict(subject);
        said.map(|(v, rule)| (v, format!("`{}` ({})", rule.text, rule.source)))
    })
}

type Rule = Option<(Verdict, String)>;

/// The decision for a call as it stands; `confinable`: the sandbox can hold a command.
fn decision(
    turn: &Turn,
    tool: &dyn Tool,
    invocation: &Invocation,
    rule: &Rule,
    hook: &Rule,
    found: &Found,
    confinable: bool,
) -> Decision {
    let key = tool.memory_key();
    let gate = &invocation.gate;
    let call = Call {
        tool: &key,
        access: tool.access(),
        reach: Reach {
            outside_cwd: invocation.outside_cwd,
            sensitive: invocation.sensitive.is_some(),
        },
        tier: gate.tier,
        prefixes: gate.prefixes.as_deref(),
        file_only: gate.file_only,
        unreviewed: !found.is_empty(),
        rule: rule.as_ref().map(|(v, text)| (*v, text.as_str())),
        refused: gate.refused.as_deref(),
        hook: hook.as_ref().map(|(v, text)| (*v, text.as_str())),
        unconfined: !confinable && relies_on_sandbox(invocation),
    };
    let settings = lock(turn.settings);
    permission::decide(settings.mode, &settings.always, &call)
}

/// Whether a command would rely on the sandbox to run without a person's answer: every
/// command but a read the parser understood whole.
fn relies_on_sandbox(invocation: &Invocation) -> bool {
    let gate = &invocation.gate;
    gate.tier.is_some() && !(gate.tier == Some(Tier::Read) && gate.whole)
}

/// Whether commands of this call can be confined: the sandbox can be built here, and the
/// command runs here (not in the client's terminal, which it cannot reach).
fn confinable(ctx: &ToolContext) -> bool {
    crate::child::sandbox().usable() && !ctx.files.terminals()
}

/// The sandbox a command that runs without a person's answer to it gets: the network and
/// the credentials only for infrastructure clients judged whole (read and plan operations
/// always, with a copy of the state; a mutation where the mode, a rule or an "always"
/// answer lets it run unasked, with the state); everything else sealed.
fn sandbox_of(turn: &Turn, invocation: &Invocation, rule: &Rule, confinable: bool) -> Run {
    if !confinable {
        return Run::Unavailable;
    }
    let gate = &invocation.gate;
    let standing = lock(turn.settings).mode == Mode::BypassPermissions
        || matches!(rule, Some((Verdict::Allow, _)))
        || gate
            .prefixes
            .as_ref()
            .is_some_and(|p| !p.is_empty() && lock(turn.settings).always.allows_prefixes(p));
    Run::Confined(match gate.cloud {
        Some(tier) if tier <= Tier::Plan => Profile::Cloud(State::Scratch),
        Some(_) if standing => Profile::Cloud(State::Write),
        _ => Profile::Sealed,
    })
}

/// Whether an "always" answer given earlier lets the call run.
fn allowed_always(always: &Always, tool: &dyn Tool, invocation: &Invocation) -> bool {
    match (&invocation.gate.tier, &invocation.gate.prefixes) {
        (Some(_), Some(prefixes)) => always.allows_prefixes(prefixes),
        (Some(_), None) => false,
        (None, _) => always.allows(&tool.memory_key()),
    }
}

/// Passes the call through the gate, with what its `PreToolUse` hooks said (`hook`);
/// `Err` is what the model is told instead. With how it passed, the sandbox a command of
/// it runs in.
pub(super) fn pass(
    turn: &Turn,
    id: &str,
    tool: &dyn Tool,
    args: &Value,
    invocation: &mut Invocation,
    ctx: &ToolContext,
    hook: Rule,
) -> Result<(Passed, Run), String> {
    let rule = verdict(turn, tool.name(), invocation, ctx.cwd);
    let confinable = confinable(ctx);
    let below = |invocation: &Invocation| {
        lock(turn.settings).unreviewed.below(&invocation.gate.runs_code_in)
    };
    // Refusals need no preparation: a denied destroy is never planned.
    let found = below(invocation);
    if let Decision::Deny(why) = decision(turn, tool, invocation, &rule, &hook, &found, confinable)
    {
        return Err(why);
    }
    // A plan runs the project's code: unreviewed code is asked about before it runs, and
    // so is any plan where the sandbox cannot hold it.
    let bypass = lock(turn.settings).mode == Mode::BypassPermissions;
    let unreviewed = !found.is_empty() && !bypass;
    // (Plans run here, never in the client's terminal.)
    let plannable = crate::child::sandbox().usable();
    if invocation.gate.terraform.is_some() && (unreviewed || !plannable) {
        let why = match unreviewed {
            true => found.describe(ctx.cwd),
            false => unavailable(ctx),
        };
        let title = format!("Plan first: {} ({why})", invocation.title);
        let mut question = question_of(id, tool, args, invocation, title, false);
        question.tier = invocation.gate.tier;
        answer(turn, &question)?;
        lock(turn.settings).unreviewed.accept(&found);
    }
    let before = invocation.gate.tier;
    tool.prepare(args, invocation, ctx).map_err(|err| match err {
        ToolError::Model(message) | ToolError::Fatal(message) => message,
    })?;
    if let Some(tier) = invocation.gate.tier.filter(|t| Some(*t) != before) {
        turn.sink.emit(AgentEvent::ToolTier { id: id.to_string(), tier });
    }
    let found = below(invocation);
    let offer_always = match decision(turn, tool, invocation, &rule, &hook, &found, confinable) {
        Decision::Allow => {
            let always = allowed_always(&lock(turn.settings).always, tool, invocation);
            let passed = if always { Passed::ByPerson } else { Passed::Unasked };
            return Ok((passed, sandbox_of(turn, invocation, &rule, confinable)));
        }
        Decision::Deny(why) => return Err(why),
        Decision::Ask { offer_always } => offer_always && tool.offers_always(),
    };
    let mut title = title_of(invocation, &rule, &hook, &found, ctx.cwd);
    if !confinable && relies_on_sandbox(invocation) {
        title = format!("{title} [{}]", unavailable(ctx));
    }
    let mut question = question_of(id, tool, args, invocation, title, offer_always);
    // The plan shown may hold what terraform marks sensitive: the person sees placeholders.
    question.content = invocation.gate.content.iter().map(|c| turn.vault.redact(c).0).collect();
    if invocation.gate.tier.is_some() {
        // What a yes means, in words: the command then runs as the user.
        question.content.push(format!("**If allowed, it runs {}.**", Run::Approved.words()));
    }
    question.tier = invocation.gate.tier;
    if offer_always && let Some(prefixes) = &invocation.gate.prefixes {
        let named: Vec<String> = prefixes.iter().map(|p| format!("`{p}`")).collect();
        question.remembers = Some(format!("{} commands", named.join(", ")));
    }
    let chosen = turn.asker.ask(&question, turn.cancel);
    {
        let mut settings = lock(turn.settings);
        match (&invocation.gate.tier, &invocation.gate.prefixes) {
            (Some(_), Some(prefixes)) if offer_always => {
                settings.always.record_prefixes(prefixes, chosen);
            }
            (Some(_), _) => {}
            (None, _) => settings.always.record(&tool.memory_key(), chosen),
        }
        if chosen.allows() {
            settings.unreviewed.reviewed(&written(tool, invocation));
            settings.unreviewed.accept(&found);
        }
    }
    outcome(turn, chosen).map(|()| (Passed::ByPerson, Run::Approved))
}

/// Why the sandbox cannot hold this call's command, for a question's title.
fn unavailable(ctx: &ToolContext) -> String {
    if ctx.files.terminals() {
        return "it runs in the client's terminal, outside the sandbox".to_string();
    }
    let why =
        crate::child::sandbox().why_not().unwrap_or_else(|| "the sandbox is unavailable".into());
    format!("asked because {why}")
}

/// Asks and waits; `Err` is what the model is told when the answer is not a yes.
fn answer(turn: &Turn, question: &Question) -> Result<(), String> {
    outcome(turn, turn.asker.ask(question, turn.cancel))
}

/// `Err` is what the model is told when the answer is not a yes.
fn outcome(turn: &Turn, answer: Answer) -> Result<(), String> {
    if answer.allows() {
        return Ok(());
    }
    if answer == Answer::Cancelled && turn.cancel.is_cancelled() {
        return Err(CANCELLED_RESULT.to_string());
    }
    Err(permission::DENIED.to_string())
}

fn question_of(
    id: &str,
    tool: &dyn Tool,
    args: &Value,
    invocation: &Invocation,
    title: String,
    offer_always: bool,
) -> Question {
    Question {
        tool_call_id: id.to_string(),
        tool: tool.name().to_string(),
        title,
        kind: tool.kind(),
        input: args.clone(),
        locations: invocation.locations.clone(),
        offer_always,
        remembers: None,
        content: Vec::new(),
        tier: None,
        choices: Vec::new(),
    }
}

/// The question's title: the call, then why it is asked. A destroy-tier command's title
/// starts with a warning no client can miss.
fn title_of(
    invocation: &Invocation,
    rule: &Rule,
    hook: &Rule,
    found: &Found,
    cwd: &std::path::Path,
) -> String {
    let gate = &invocation.gate;
    let mut reasons: Vec<String> = invocation.targets.iter().flat_map(|t| t.reasons()).collect();
    if invocation.targets.is_empty() && invocation.outside_cwd {
        reasons.push("outside the project".to_string());
    }
    if let Some(why) = &invocation.sensitive
        && !reasons.contains(why)
    {
        reasons.push(why.clone());
    }
    reasons.dedup();
    if let Some((Verdict::Ask, rule)) = rule {
        reasons.push(format!("the permission rule {rule} asks"));
    }
    if let Some((Verdict::Ask, hook)) = hook {
        reasons.push(format!("asked by {hook}"));
    }
    if !found.is_empty() {
        reasons.push(found.describe(cwd));
    }
    if gate.tier == Some(Tier::Destroy) {
        let why: Vec<String> = gate.reasons.iter().chain(&reasons).cloned().collect();
        return format!("⚠ DESTRUCTIVE: {} ({})", invocation.title, why.join("; "));
    }
    if gate.tier.is_some_and(|t| t >= Tier::Mutate) && gate.reasons.iter().any(|r| !r.is_empty()) {
        reasons.splice(0..0, gate.reasons.iter().cloned());
    }
    if reasons.is_empty() {
        return invocation.title.clone();
    }
    format!("{} ({})", invocation.title, reasons.join("; "))
}

/// The files a call writes, as far as they are known.
pub(super) fn written(tool: &dyn Tool, invocation: &Invocation) -> Vec<std::path::PathBuf> {
    if invocation.gate.tier.is_some() {
        return invocation.gate.written.clone();
    }
    if tool.access() != Access::Write {
        return Vec::new();
    }
    invocation.targets.iter().map(|t| t.real.clone().unwrap_or_else(|| t.path.clone())).collect()
}

/// After a call that ran unasked: what it wrote is unreviewed, and a tool whose writes
/// nobody can list (an MCP tool, a command that is more than file writes) is named.
pub(super) fn ran_unasked(turn: &Turn, tool: &dyn Tool, invocation: &Invocation) {
    let mut settings = lock(turn.settings);
    let gate = &invocation.gate;
    // What read and plan tiers write is terraform's own output (a plan file), not code.
    if gate.tier.is_none_or(|t| t >= Tier::Mutate) {
        settings.unreviewed.wrote(written(tool, invocation));
    }
    let unknown = match (tool.access(), gate.tier) {
        (Access::Mcp { .. }, _) => Some(tool.name().to_string()),
        (_, Some(tier)) if tier >= Tier::Mutate && !gate.file_only => {
            Some(format!("bash `{}`", crate::text::clip(&gate.lines.join("; "), 60)))
        }
        _ => None,
    };
    if let Some(unknown) = unknown {
        settings.unreviewed.wrote_unknown(&unknown);
    }
}
