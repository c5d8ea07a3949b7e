//! One call's way through the gate: the team's rules, what its `PreToolUse` hooks said,
//! the files written without review, the plan a terraform apply shows first
//! (`judge::prepare`), the decision (`decide.rs`), the question when one is needed, and
//! the sandbox a command then runs in (`sandbox_of`): none when a person allowed this
//! very call, else a sealed one, or one with the network and the credentials for an
//! infrastructure client judged whole. Where the sandbox cannot be built, what would have
//! relied on it is asked. Runs on the prompt thread between the call's announcement and
//! its run.

use serde_json::Value;

use super::question::{question_of, title_of, unavailable};
use super::{
    Always, Answer, CANCELLED_RESULT, Call, DENIED, Decision, Found, Host, Mode, Question, Reach,
    Rule,
};
use crate::infra::Tier;
use crate::rules::Verdict;
use crate::sandbox::{Profile, Run, State};
use crate::tools::{Access, Invocation, Tool, ToolContext};

/// How a call passed the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Passed {
    /// A person said yes now, or said "always" before.
    ByPerson,
    /// Nobody was asked (the tier, the mode or a rule let it run): what it writes is
    /// unreviewed.
    Unasked,
}

/// The team's rules' verdict on a call, with the rule as shown to the model.
fn verdict(host: &impl Host, tool: &str, invocation: &Invocation, cwd: &std::path::Path) -> Rule {
    super::with_subject(tool, invocation, cwd, |subject| {
        let said = host.rules().verdict(subject);
        said.map(|(v, rule)| (v, format!("`{}` ({})", rule.text, rule.source)))
    })
}

/// The decision for a call as it stands; `confinable`: the sandbox can hold a command.
fn decision(
    host: &impl Host,
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
        restores: !gate.restores.is_empty(),
    };
    host.standing(|s| super::decide(*s.mode, s.always, &call))
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
fn sandbox_of(host: &impl Host, invocation: &Invocation, rule: &Rule, confinable: bool) -> Run {
    if !confinable {
        return Run::Unavailable;
    }
    let gate = &invocation.gate;
    let remembered = |prefixes: &Vec<String>| {
        !prefixes.is_empty() && host.standing(|s| s.always.allows_prefixes(prefixes))
    };
    let standing = host.standing(|s| *s.mode == Mode::BypassPermissions)
        || matches!(rule, Some((Verdict::Allow, _)))
        || gate.prefixes.as_ref().is_some_and(remembered);
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
pub fn pass(
    host: &impl Host,
    id: &str,
    tool: &dyn Tool,
    args: &Value,
    invocation: &mut Invocation,
    ctx: &ToolContext,
    hook: Rule,
) -> Result<(Passed, Run), String> {
    let rule = verdict(host, tool.name(), invocation, ctx.cwd);
    let confinable = confinable(ctx);
    let below = |invocation: &Invocation| {
        host.standing(|s| s.unreviewed.below(&invocation.gate.runs_code_in))
    };
    // Refusals need no preparation: a denied destroy is never planned.
    let found = below(invocation);
    if let Decision::Deny(why) = decision(host, tool, invocation, &rule, &hook, &found, confinable)
    {
        return Err(why);
    }
    // A plan runs the project's code: unreviewed code is asked about before it runs, and
    // so is any plan where the sandbox cannot hold it.
    let bypass = host.standing(|s| *s.mode == Mode::BypassPermissions);
    let unreviewed = !found.is_empty() && !bypass;
    // In bypass mode nobody reviews the code a plan would run: code that can start
    // programs or bring code from elsewhere never runs with the user's credentials.
    let unseen = |invocation: &Invocation, found: &Found| {
        (bypass && !found.is_empty()).then(|| runs_programs(invocation, found)).flatten()
    };
    if invocation.gate.terraform.is_some()
        && let Some(why) = unseen(invocation, &found)
    {
        return Err(unseen_code(&found, &why, ctx));
    }
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
        answer(host, &question)?;
        host.standing(|s| s.unreviewed.accept(&found));
    }
    let before = invocation.gate.tier;
    if let Some(command) = tool.command(args) {
        let timeout = command.timeout?;
        super::judge::prepare(command.text, invocation, timeout, ctx).map_err(|err| match err {
            crate::tools::ToolError::Model(message) | crate::tools::ToolError::Fatal(message) => {
                message
            }
        })?;
    }
    if let Some(tier) = invocation.gate.tier.filter(|t| Some(*t) != before) {
        host.retiered(id, tier);
    }
    let found = below(invocation);
    let offer_always = match decision(host, tool, invocation, &rule, &hook, &found, confinable) {
        Decision::Allow => {
            let always = host.standing(|s| allowed_always(s.always, tool, invocation));
            let passed = if always { Passed::ByPerson } else { Passed::Unasked };
            // Code nobody reviewed that can start programs runs sealed: no network, no
            // credentials, no state.
            let sandbox = match sandbox_of(host, invocation, &rule, confinable) {
                Run::Confined(_) if unseen(invocation, &found).is_some() => {
                    Run::Confined(Profile::Sealed)
                }
                sandbox => sandbox,
            };
            return Ok((passed, sandbox));
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
    question.content = invocation.gate.content.iter().map(|c| host.redact(c)).collect();
    if invocation.gate.tier.is_some() {
        // What a yes means, in words: the command then runs as the user.
        question.content.push(format!("**If allowed, it runs {}.**", Run::Approved.words()));
    }
    question.tier = invocation.gate.tier;
    if offer_always && let Some(prefixes) = &invocation.gate.prefixes {
        let named: Vec<String> = prefixes.iter().map(|p| format!("`{p}`")).collect();
        question.remembers = Some(format!("{} commands", named.join(", ")));
    }
    let chosen = host.asker().ask(&question, host.cancel());
    host.standing(|s| {
        match (&invocation.gate.tier, &invocation.gate.prefixes) {
            (Some(_), Some(prefixes)) if offer_always => s.always.record_prefixes(prefixes, chosen),
            (Some(_), _) => {}
            (None, _) => s.always.record(&tool.memory_key(), chosen),
        }
        if chosen.allows() {
            // What a secret's value went into was not seen as it is written: it stays
            // unreviewed (a value may hold code).
            if invocation.gate.restores.is_empty() {
                s.unreviewed.reviewed(&written(tool, invocation));
            } else {
                s.unreviewed.wrote(written(tool, invocation));
            }
            s.unreviewed.accept(&found);
        }
    });
    outcome(host, chosen).map(|()| (Passed::ByPerson, Run::Approved))
}

/// Why the unreviewed code below the call's directories can start programs or bring code
/// from elsewhere. For terraform (every command of the call terraform, tofu or terragrunt,
/// after any `cd`): the terraform files written unreviewed, or every one there when a tool
/// that may have written anything ran unasked. For anything else (a playbook, a Makefile,
/// a script): any code written unreviewed, since running it is what the command does.
fn runs_programs(invocation: &Invocation, found: &Found) -> Option<String> {
    let terraform = !invocation.gate.lines.is_empty()
        && invocation.gate.lines.iter().all(|line| {
            let program = line.split(' ').next().unwrap_or("");
            let program = program.rsplit('/').next().unwrap_or(program);
            matches!(program, "terraform" | "tofu" | "terragrunt" | "cd")
        });
    if !terraform {
        return Some("it runs that code".to_string());
    }
    let files = found.tools.is_empty().then_some(found.files.as_slice());
    crate::infra::runs_programs(&invocation.gate.runs_code_in, files)
}

/// Why a terraform apply or destroy over such code does not run in bypass mode.
fn unseen_code(found: &Found, why: &str, ctx: &ToolContext) -> String {
    format!(
        "Refused: {} ({why}), and terraform would run it with the user's credentials while \
         nobody is asked (bypass mode). Nothing ran. Ask the user to review the change (in \
         another mode the gate asks).",
        found.describe(ctx.cwd)
    )
}

/// Asks and waits; `Err` is what the model is told when the answer is not a yes.
fn answer(host: &impl Host, question: &Question) -> Result<(), String> {
    outcome(host, host.asker().ask(question, host.cancel()))
}

/// `Err` is what the model is told when the answer is not a yes.
fn outcome(host: &impl Host, answer: Answer) -> Result<(), String> {
    if answer.allows() {
        return Ok(());
    }
    if answer == Answer::Cancelled && host.cancel().is_cancelled() {
        return Err(CANCELLED_RESULT.to_string());
    }
    Err(DENIED.to_string())
}

/// The files a call writes, as far as they are known.
pub fn written(tool: &dyn Tool, invocation: &Invocation) -> Vec<std::path::PathBuf> {
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
pub fn ran_unasked(host: &impl Host, tool: &dyn Tool, invocation: &Invocation) {
    let gate = &invocation.gate;
    // What read and plan tiers write is terraform's own output (a plan file), not code.
    let wrote = gate.tier.is_none_or(|t| t >= Tier::Mutate).then(|| written(tool, invocation));
    let unknown = match (tool.access(), gate.tier) {
        (Access::Mcp { .. }, _) => Some(tool.name().to_string()),
        // A planned apply applies the gate's own plan: it writes state, not code.
        (_, Some(tier)) if tier >= Tier::Mutate && !gate.file_only && gate.prepared.is_none() => {
            Some(format!("bash `{}`", crate::text::clip(&gate.lines.join("; "), 60)))
        }
        _ => None,
    };
    host.standing(|s| {
        if let Some(wrote) = wrote {
            s.unreviewed.wrote(wrote);
        }
        if let Some(unknown) = unknown {
            s.unreviewed.wrote_unknown(&unknown);
        }
    });
}
