//! The decision for one call: one table over the team's rules, the command's tier, the
//! session's mode, the "always" answers and where the call reaches. Pure.
//!
//! The order, first match wins:
//! 1. a tool that refuses the call in every mode (a state file written by a file tool): deny;
//! 2. a deny rule: deny, in every mode, bypass included;
//! 3. a `PreToolUse` hook that blocks or denies: deny, in every mode, bypass included;
//! 4. a call that gets the values of secrets the model named by placeholder: ask, never
//!    "always", in every mode, bypass included, whatever the rules allow (plan mode still
//!    refuses what changes something);
//! 5. destroy tier: plan mode denies; an allow rule allows (the one way it runs without a
//!    person); otherwise ask, every time, in every mode, bypass included, never "always";
//! 6. plan mode: anything that changes something is denied (read and plan tiers go on);
//! 7. an "always reject" answer: deny;
//! 8. an ask rule, or a hook that asks: ask, never "always", in every mode;
//! 9. bypass mode: allow;
//! 10. a path outside the project or a sensitive one, or project code written without
//!     review: ask, never "always";
//! 11. an allow rule, or a hook that allows: allow (a hook's allow thus skips only the
//!     mode's ordinary question, never a row above);
//! 12. the tier, the tool's access and the mode (read and plan tiers run; a mutation asks
//!     unless "always" was said for its prefixes, or accept_edits and it only writes files
//!     in the project).
//!
//! Then, over all of it: a command that would run without a person's answer while the OS
//! sandbox it relies on cannot be built (`unconfined`) is asked instead, never "always",
//! in every mode, bypass included.

use super::{Always, DENIED, Decision, Mode, Reach};
use crate::infra::Tier;
use crate::rules::Verdict;
use crate::tools::Access;

/// What is known of a call when it is judged.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// What "always" answers about the tool are remembered under.
    pub tool: &'a str,
    /// What the tool may do.
    pub access: Access,
    /// Where it reaches.
    pub reach: Reach,
    /// A command's tier (`bash`); `None` for other tools.
    pub tier: Option<Tier>,
    /// The prefixes an "always" answer about a command remembers; `None`: not offered.
    pub prefixes: Option<&'a [String]>,
    /// A command whose mutations only write files inside the project.
    pub file_only: bool,
    /// It would run project code written without a person's answer.
    pub unreviewed: bool,
    /// The team's rules' verdict, with the rule (as written and where it came from).
    pub rule: Option<(Verdict, &'a str)>,
    /// The tool refuses this call in every mode, and why.
    pub refused: Option<&'a str>,
    /// What the `PreToolUse` hooks said, with who said it and why ("the PreToolUse hook
    /// `./guard.sh`: not outside CI").
    pub hook: Option<(Verdict, &'a str)>,
    /// A command that would rely on the OS sandbox to run unasked, where the sandbox
    /// cannot be built (or is turned off): it is asked instead.
    pub unconfined: bool,
    /// The call gets the values of secrets the model named by placeholder.
    pub restores: bool,
}

impl<'a> Call<'a> {
    /// A call of `tool` that reaches `reach`, with nothing else known.
    pub fn of(tool: &'a str, access: Access, reach: Reach) -> Call<'a> {
        Call {
            tool,
            access,
            reach,
            tier: None,
            prefixes: None,
            file_only: false,
            unreviewed: false,
            rule: None,
            refused: None,
            hook: None,
            unconfined: false,
            restores: false,
        }
    }
}

/// Why plan mode refused a call.
fn plan_mode_refusal(tool: &str) -> Decision {
    Decision::Deny(format!(
        "Plan mode is read-only: {tool} was not run. Describe the change instead, or ask the \
         user to switch to another mode."
    ))
}

/// Decides for one call.
pub fn decide(mode: Mode, always: &Always, call: &Call) -> Decision {
    match table(mode, always, call) {
        Decision::Allow if call.unconfined => Decision::Ask { offer_always: false },
        decision => decision,
    }
}

/// The table of the header's rows 1 to 12.
fn table(mode: Mode, always: &Always, call: &Call) -> Decision {
    let sticky = Decision::Ask { offer_always: false };
    if let Some(why) = call.refused {
        return Decision::Deny(why.to_string());
    }
    if let Some((Verdict::Deny, rule)) = call.rule {
        return Decision::Deny(format!("Denied by the permission rule {rule}."));
    }
    if let Some((Verdict::Deny, hook)) = call.hook {
        return Decision::Deny(format!("Blocked by {hook}"));
    }
    let changes = match call.tier {
        Some(tier) => tier >= Tier::Mutate,
        None => !call.access.read_only(),
    };
    // A secret's value given to a tool: a person sees which, every time, in every mode
    // (an allow rule never names a value).
    if call.restores && !(mode == Mode::Plan && changes) {
        return sticky;
    }
    if call.tier == Some(Tier::Destroy) {
        return match (mode, call.rule) {
            (Mode::Plan, _) => plan_mode_refusal(call.tool),
            (_, Some((Verdict::Allow, _))) => Decision::Allow,
            _ => sticky,
        };
    }
    if mode == Mode::Plan && changes {
        return plan_mode_refusal(call.tool);
    }
    let prefixes = call.prefixes.unwrap_or(&[]);
    if always.rejects(call.tool) || (call.tier.is_some() && always.rejects_prefix(prefixes)) {
        return Decision::Deny(DENIED.to_string());
    }
    if matches!(call.rule, Some((Verdict::Ask, _))) || matches!(call.hook, Some((Verdict::Ask, _)))
    {
        return sticky;
    }
    if mode == Mode::BypassPermissions {
        return Decision::Allow;
    }
    // Leaving the project, touching secrets, or running code nobody saw is always a
    // question of its own: never "always", and asked even of read-only tools.
    if call.reach.outside_cwd || call.reach.sensitive || call.unreviewed {
        return sticky;
    }
    if matches!(call.rule, Some((Verdict::Allow, _)))
        || matches!(call.hook, Some((Verdict::Allow, _)))
    {
        return Decision::Allow;
    }
    // An MCP tool's annotations are the server's claim: in plan mode it asks every time.
    if mode == Mode::Plan && matches!(call.access, Access::Mcp { .. }) {
        return sticky;
    }
    if let Some(tier) = call.tier {
        return match tier {
            Tier::Read | Tier::Plan => Decision::Allow,
            _ if always.allows_prefixes(prefixes) => Decision::Allow,
            _ if mode == Mode::AcceptEdits && call.file_only => Decision::Allow,
            _ => Decision::Ask { offer_always: call.prefixes.is_some_and(|p| !p.is_empty()) },
        };
    }
    if always.allows(call.tool) {
        return Decision::Allow;
    }
    match (call.access, mode) {
        (Access::Mcp { .. }, _) => Decision::Ask { offer_always: true },
        (Access::Read, _) => Decision::Allow,
        (Access::Write, Mode::AcceptEdits) => Decision::Allow,
        (Access::Write | Access::Execute, _) => Decision::Ask { offer_always: true },
    }
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
