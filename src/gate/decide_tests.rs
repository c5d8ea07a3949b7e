//! The decision table, row by row: modes × tiers × rules × reach × "always".

use super::*;
use crate::config::WebFetch;
use crate::gate::{Answer, decide_network};

const IN: Reach = Reach { outside_cwd: false, sensitive: false };
const OUT: Reach = Reach { outside_cwd: true, sensitive: false };
const SECRET: Reach = Reach { outside_cwd: false, sensitive: true };
const ALL: [Mode; 4] = Mode::ALL;
const ASK: Decision = Decision::Ask { offer_always: true };
const STICKY: Decision = Decision::Ask { offer_always: false };

fn tool(name: &str, access: Access, reach: Reach) -> Decision {
    decide(Mode::Default, &Always::default(), &Call::of(name, access, reach))
}

fn bash<'a>(tier: Tier, prefixes: Option<&'a [String]>) -> Call<'a> {
    Call { tier: Some(tier), prefixes, ..Call::of("bash", Access::Execute, IN) }
}

fn denied(d: &Decision) -> bool {
    matches!(d, Decision::Deny(_))
}

#[test]
fn destroy_asks_every_time_in_every_mode_and_plan_mode_refuses_it() {
    let p = vec!["terraform destroy".to_string()];
    let mut always = Always::default();
    always.record("bash", Answer::AllowAlways);
    always.record_prefixes(&p, Answer::AllowAlways);
    let call = bash(Tier::Destroy, Some(&p));
    for mode in [Mode::Default, Mode::AcceptEdits, Mode::BypassPermissions] {
        assert_eq!(decide(mode, &always, &call), STICKY, "{mode:?}");
    }
    assert!(denied(&decide(Mode::Plan, &always, &call)));
    // An allow rule is the one way it runs without a person; a deny rule wins over it all.
    let allowed = Call { rule: Some((Verdict::Allow, "bash(terraform destroy*)")), ..call };
    for mode in [Mode::Default, Mode::AcceptEdits, Mode::BypassPermissions] {
        assert_eq!(decide(mode, &always, &allowed), Decision::Allow, "{mode:?}");
    }
    let ask = Call { rule: Some((Verdict::Ask, "bash(terraform *)")), ..call };
    assert_eq!(decide(Mode::BypassPermissions, &always, &ask), STICKY);
}

#[test]
fn deny_rules_hold_in_every_mode() {
    let always = Always::default();
    let rule = Some((Verdict::Deny, "bash(git push*)"));
    for tier in [Tier::Read, Tier::Plan, Tier::Mutate, Tier::Destroy] {
        let call = Call { rule, ..bash(tier, None) };
        for mode in ALL {
            assert!(denied(&decide(mode, &always, &call)), "{mode:?} {tier:?}");
        }
    }
    let write = Call { rule, ..Call::of("write_file", Access::Write, IN) };
    assert!(denied(&decide(Mode::BypassPermissions, &always, &write)));
}

#[test]
fn read_and_plan_tiers_run_unasked_in_every_mode_mutations_follow_the_mode() {
    let always = Always::default();
    let p = vec!["terraform fmt".to_string()];
    for mode in ALL {
        assert_eq!(decide(mode, &always, &bash(Tier::Read, None)), Decision::Allow, "{mode:?}");
        assert_eq!(decide(mode, &always, &bash(Tier::Plan, None)), Decision::Allow, "{mode:?}");
    }
    let mutate = bash(Tier::Mutate, Some(&p));
    assert_eq!(decide(Mode::Default, &always, &mutate), ASK);
    assert_eq!(decide(Mode::AcceptEdits, &always, &mutate), ASK, "not file-only");
    assert!(denied(&decide(Mode::Plan, &always, &mutate)));
    assert_eq!(decide(Mode::BypassPermissions, &always, &mutate), Decision::Allow);
    let file_only = Call { file_only: true, ..mutate };
    assert_eq!(decide(Mode::AcceptEdits, &always, &file_only), Decision::Allow);
    assert_eq!(decide(Mode::Default, &always, &file_only), ASK);
    let no_prefix = bash(Tier::Mutate, None);
    assert_eq!(decide(Mode::Default, &always, &no_prefix), STICKY, "no always to offer");
}

#[test]
fn always_remembers_prefixes_never_bash_as_a_whole() {
    let mut always = Always::default();
    let fmt = vec!["terraform fmt".to_string()];
    always.record_prefixes(&fmt, Answer::AllowAlways);
    assert_eq!(decide(Mode::Default, &always, &bash(Tier::Mutate, Some(&fmt))), Decision::Allow);
    let push = vec!["git push".to_string()];
    assert_eq!(decide(Mode::Default, &always, &bash(Tier::Mutate, Some(&push))), ASK);
    let both = vec!["terraform fmt".to_string(), "git push".to_string()];
    assert_eq!(decide(Mode::Default, &always, &bash(Tier::Mutate, Some(&both))), ASK);
    assert_eq!(decide(Mode::Default, &always, &bash(Tier::Destroy, Some(&fmt))), STICKY);
    always.record_prefixes(&push, Answer::RejectAlways);
    assert!(denied(&decide(Mode::Default, &always, &bash(Tier::Mutate, Some(&both)))));
}

#[test]
fn unreviewed_code_and_paths_ask_without_always_unless_bypassed() {
    let always = Always::default();
    let plan = Call { unreviewed: true, ..bash(Tier::Plan, None) };
    for mode in [Mode::Default, Mode::AcceptEdits, Mode::Plan] {
        assert_eq!(decide(mode, &always, &plan), STICKY, "{mode:?}");
    }
    assert_eq!(decide(Mode::BypassPermissions, &always, &plan), Decision::Allow);
    let read_out = Call { reach: OUT, ..bash(Tier::Read, None) };
    assert_eq!(decide(Mode::Plan, &always, &read_out), STICKY);
    let read_secret = Call { reach: SECRET, ..bash(Tier::Read, None) };
    let allow = Some((Verdict::Allow, "bash(cat *)"));
    assert_eq!(decide(Mode::Default, &always, &Call { rule: allow, ..read_secret }), STICKY);
}

#[test]
fn refusals_win_over_everything() {
    let always = Always::default();
    let call = Call {
        refused: Some("state files are written by terraform only"),
        rule: Some((Verdict::Allow, "write_file(*)")),
        ..Call::of("write_file", Access::Write, IN)
    };
    for mode in ALL {
        assert!(denied(&decide(mode, &always, &call)), "{mode:?}");
    }
}

#[test]
fn rules_allow_and_ask_for_other_tools() {
    let always = Always::default();
    let allow = Call {
        rule: Some((Verdict::Allow, "write_file(*.tf)")),
        ..Call::of("write_file", Access::Write, IN)
    };
    assert_eq!(decide(Mode::Default, &always, &allow), Decision::Allow);
    assert!(denied(&decide(Mode::Plan, &always, &allow)), "plan mode stays read-only");
    let ask =
        Call { rule: Some((Verdict::Ask, "read_file")), ..Call::of("read_file", Access::Read, IN) };
    assert_eq!(decide(Mode::Default, &always, &ask), STICKY);
}

#[test]
fn sensitive_paths_always_ask_without_always() {
    let mut m = Always::default();
    m.record("read_file", Answer::AllowAlways);
    m.record("write_file", Answer::AllowAlways);
    let d = |mode, tool, access, reach| decide(mode, &m, &Call::of(tool, access, reach));
    assert_eq!(d(Mode::Default, "read_file", Access::Read, SECRET), STICKY);
    assert_eq!(d(Mode::AcceptEdits, "write_file", Access::Write, SECRET), STICKY);
    assert_eq!(d(Mode::Plan, "grep", Access::Read, SECRET), STICKY);
    assert_eq!(d(Mode::AcceptEdits, "edit_file", Access::Write, OUT), STICKY);
}

#[test]
fn modes_change_decisions() {
    let m = Always::default();
    let d = |mode, tool, access, reach| decide(mode, &m, &Call::of(tool, access, reach));
    assert_eq!(tool("read_file", Access::Read, IN), Decision::Allow);
    assert_eq!(tool("write_file", Access::Write, IN), ASK);
    assert_eq!(d(Mode::AcceptEdits, "write_file", Access::Write, IN), Decision::Allow);
    assert!(denied(&d(Mode::Plan, "write_file", Access::Write, IN)));
    assert_eq!(d(Mode::Plan, "read_file", Access::Read, IN), Decision::Allow);
    assert_eq!(d(Mode::BypassPermissions, "write_file", Access::Write, OUT), Decision::Allow);
    assert_eq!(tool("read_file", Access::Read, OUT), STICKY);
}

#[test]
fn mcp_tools_always_ask_and_plan_mode_runs_only_read_only_ones() {
    let mut m = Always::default();
    let writer = Access::Mcp { read_only: false };
    let reader = Access::Mcp { read_only: true };
    let d = |m: &Always, mode, name, access| decide(mode, m, &Call::of(name, access, IN));
    for mode in [Mode::Default, Mode::AcceptEdits] {
        assert_eq!(d(&m, mode, "mcp__s__w", writer), ASK);
        assert_eq!(d(&m, mode, "mcp__s__r", reader), ASK, "annotations are claims");
    }
    assert!(denied(&d(&m, Mode::Plan, "mcp__s__w", writer)));
    assert_eq!(d(&m, Mode::Plan, "mcp__s__r", reader), STICKY);
    assert_eq!(d(&m, Mode::BypassPermissions, "mcp__s__w", writer), Decision::Allow);
    m.record("mcp__s__w", Answer::AllowAlways);
    m.record("mcp__s__r", Answer::AllowAlways);
    assert_eq!(d(&m, Mode::Default, "mcp__s__w", writer), Decision::Allow);
    assert_eq!(d(&m, Mode::Plan, "mcp__s__r", reader), STICKY, "no always in plan");
    m.record("mcp__s__w", Answer::RejectAlways);
    assert_eq!(d(&m, Mode::Default, "mcp__s__w", writer), Decision::Deny(DENIED.into()));
}

#[test]
fn always_answers_are_remembered_per_tool() {
    let mut m = Always::default();
    m.record("write_file", Answer::AllowAlways);
    let d =
        |m: &Always, name, reach| decide(Mode::Default, m, &Call::of(name, Access::Write, reach));
    assert_eq!(d(&m, "write_file", IN), Decision::Allow);
    assert_eq!(d(&m, "edit_file", IN), ASK);
    assert_eq!(d(&m, "write_file", OUT), STICKY);
    m.record("write_file", Answer::RejectAlways);
    assert_eq!(d(&m, "write_file", IN), Decision::Deny(DENIED.to_string()));
}

#[test]
fn internal_targets_ask_every_time_and_plan_mode_refuses_them() {
    let mut m = Always::default();
    m.record_host("127.0.0.1", Answer::AllowAlways);
    assert!(denied(&decide_network(
        Mode::BypassPermissions,
        &m,
        WebFetch::Deny,
        "127.0.0.1",
        Some("x")
    )));
    for policy in [WebFetch::Allow, WebFetch::Ask] {
        let d = |mode| decide_network(mode, &m, policy, "127.0.0.1", Some("loopback"));
        assert_eq!(d(Mode::Default), STICKY);
        assert_eq!(d(Mode::AcceptEdits), STICKY);
        assert!(denied(&d(Mode::Plan)));
        assert_eq!(d(Mode::BypassPermissions), Decision::Allow);
    }
}

#[test]
fn public_hosts_follow_the_policy() {
    let mut m = Always::default();
    let d = |m: &Always, policy, host| decide_network(Mode::Plan, m, policy, host, None);
    assert_eq!(d(&m, WebFetch::Allow, "example.com"), Decision::Allow);
    assert!(denied(&d(&m, WebFetch::Deny, "example.com")));
    assert_eq!(d(&m, WebFetch::Ask, "example.com"), ASK);
    m.record_host("Example.com", Answer::AllowAlways);
    assert_eq!(d(&m, WebFetch::Ask, "example.com"), Decision::Allow);
    assert_eq!(d(&m, WebFetch::Ask, "other.org"), ASK);
    m.record_host("other.org", Answer::RejectAlways);
    assert_eq!(d(&m, WebFetch::Ask, "other.org"), Decision::Deny(DENIED.to_string()));
}

const HOOK_DENY: Option<(Verdict, &str)> =
    Some((Verdict::Deny, "the PreToolUse hook `g`: CI only"));
const HOOK_ASK: Option<(Verdict, &str)> = Some((Verdict::Ask, "the PreToolUse hook `g`"));
const HOOK_ALLOW: Option<(Verdict, &str)> = Some((Verdict::Allow, "the PreToolUse hook `g`"));

#[test]
fn a_hook_that_blocks_holds_in_every_mode_and_names_itself() {
    let always = Always::default();
    let p = vec!["terraform apply".to_string()];
    for call in [
        bash(Tier::Read, None),
        bash(Tier::Mutate, Some(&p)),
        bash(Tier::Destroy, None),
        Call { rule: Some((Verdict::Allow, "bash(terraform *)")), ..bash(Tier::Destroy, None) },
        Call::of("write_file", Access::Write, IN),
    ] {
        let call = Call { hook: HOOK_DENY, ..call };
        for mode in ALL {
            let decided = decide(mode, &always, &call);
            assert!(denied(&decided), "{mode:?} {call:?}");
            if mode != Mode::Plan || call.tier == Some(Tier::Read) {
                let expected = "Blocked by the PreToolUse hook `g`: CI only";
                assert_eq!(decided, Decision::Deny(expected.into()), "{mode:?}");
            }
        }
    }
}

#[test]
fn a_hook_that_asks_asks_even_where_the_mode_would_not() {
    let mut always = Always::default();
    let p = vec!["terraform fmt".to_string()];
    always.record_prefixes(&p, Answer::AllowAlways);
    always.record("write_file", Answer::AllowAlways);
    for call in [
        bash(Tier::Read, None),
        bash(Tier::Mutate, Some(&p)),
        Call {
            rule: Some((Verdict::Allow, "write_file")),
            ..Call::of("write_file", Access::Write, IN)
        },
    ] {
        let call = Call { hook: HOOK_ASK, ..call };
        for mode in [Mode::Default, Mode::AcceptEdits, Mode::BypassPermissions] {
            assert_eq!(decide(mode, &always, &call), STICKY, "{mode:?} {call:?}");
        }
    }
    let change = Call { hook: HOOK_ASK, ..bash(Tier::Mutate, Some(&p)) };
    assert!(denied(&decide(Mode::Plan, &always, &change)), "plan mode still refuses");
}

#[test]
fn a_hooks_allow_skips_only_the_modes_ordinary_question() {
    let mut always = Always::default();
    let p = vec!["terraform apply".to_string()];
    fn allowed(call: Call) -> Call {
        Call { hook: HOOK_ALLOW, ..call }
    }
    // What it lifts: the question a mutation or a write asks by default.
    assert_eq!(
        decide(Mode::Default, &always, &allowed(bash(Tier::Mutate, Some(&p)))),
        Decision::Allow
    );
    let write = allowed(Call::of("write_file", Access::Write, IN));
    assert_eq!(decide(Mode::Default, &always, &write), Decision::Allow);
    // What it never lifts: a deny rule, an ask rule, a destroy, a refusal, plan mode,
    // a sensitive or outside path, unreviewed code, an "always reject".
    let deny_rule =
        Call { rule: Some((Verdict::Deny, "bash(terraform *)")), ..bash(Tier::Mutate, None) };
    let ask_rule =
        Call { rule: Some((Verdict::Ask, "bash(terraform *)")), ..bash(Tier::Mutate, None) };
    let refused = Call { refused: Some("state"), ..Call::of("write_file", Access::Write, IN) };
    let unreviewed = Call { unreviewed: true, ..bash(Tier::Plan, None) };
    for mode in [Mode::Default, Mode::AcceptEdits] {
        assert!(denied(&decide(mode, &always, &allowed(deny_rule))), "{mode:?}");
        assert!(denied(&decide(mode, &always, &allowed(refused))), "{mode:?}");
        assert_eq!(decide(mode, &always, &allowed(ask_rule)), STICKY, "{mode:?}");
        assert_eq!(decide(mode, &always, &allowed(bash(Tier::Destroy, None))), STICKY, "{mode:?}");
        assert_eq!(decide(mode, &always, &allowed(unreviewed)), STICKY, "{mode:?}");
        for reach in [OUT, SECRET] {
            let call = allowed(Call::of("read_file", Access::Read, reach));
            assert_eq!(decide(mode, &always, &call), STICKY, "{mode:?} {reach:?}");
        }
    }
    assert_eq!(
        decide(Mode::BypassPermissions, &always, &allowed(bash(Tier::Destroy, None))),
        STICKY
    );
    assert!(denied(&decide(Mode::Plan, &always, &allowed(bash(Tier::Mutate, Some(&p))))));
    always.record_prefixes(&p, Answer::RejectAlways);
    assert!(denied(&decide(Mode::Default, &always, &allowed(bash(Tier::Mutate, Some(&p))))));
}

fn unconfined(call: Call<'_>) -> Call<'_> {
    Call { unconfined: true, ..call }
}

#[test]
fn without_the_sandbox_what_would_run_unasked_is_asked_in_every_mode() {
    let p = vec!["make test".to_string()];
    let mut always = Always::default();
    always.record_prefixes(&p, Answer::AllowAlways);
    let allow_rule =
        Call { rule: Some((Verdict::Allow, "bash(make *)")), ..bash(Tier::Mutate, None) };
    for mode in ALL {
        // Read and plan tiers, an "always" answer, an allow rule, bypass: each asks, never
        // "always".
        for call in [bash(Tier::Plan, None), bash(Tier::Mutate, Some(&p)), allow_rule] {
            let d = decide(mode, &always, &unconfined(call));
            assert!(d == STICKY || denied(&d), "{mode:?} {call:?}: {d:?}");
        }
        // What is refused stays refused.
        let deny = Call { rule: Some((Verdict::Deny, "bash(make *)")), ..bash(Tier::Mutate, None) };
        assert!(denied(&decide(mode, &always, &unconfined(deny))), "{mode:?}");
    }
    assert_eq!(
        decide(Mode::BypassPermissions, &always, &unconfined(bash(Tier::Mutate, None))),
        STICKY
    );
    assert_eq!(decide(Mode::Default, &always, &unconfined(bash(Tier::Plan, None))), STICKY);
    // The same calls with the sandbox run as before.
    assert_eq!(
        decide(Mode::BypassPermissions, &always, &bash(Tier::Mutate, None)),
        Decision::Allow
    );
    assert_eq!(decide(Mode::Default, &always, &bash(Tier::Plan, None)), Decision::Allow);
}

#[test]
fn a_call_that_gets_a_secrets_value_is_asked_in_every_mode_whatever_the_rules_allow() {
    let p = vec!["curl".to_string()];
    let mut always = Always::default();
    always.record_prefixes(&p, Answer::AllowAlways);
    let rule = Some((Verdict::Allow, "bash(curl *)"));
    for tier in [Tier::Read, Tier::Mutate, Tier::Destroy] {
        let call = Call { restores: true, rule, ..bash(tier, Some(&p)) };
        for mode in [Mode::Default, Mode::AcceptEdits, Mode::BypassPermissions] {
            assert_eq!(decide(mode, &always, &call), STICKY, "{tier:?} {mode:?}");
        }
    }
    // Plan mode refuses what changes something, value or not; a read still asks.
    let write = Call { restores: true, ..bash(Tier::Mutate, Some(&p)) };
    assert!(denied(&decide(Mode::Plan, &always, &write)));
    let read = Call { restores: true, ..bash(Tier::Read, Some(&p)) };
    assert_eq!(decide(Mode::Plan, &always, &read), STICKY);
    // A deny rule still wins.
    let deny = Call { restores: true, rule: Some((Verdict::Deny, "bash(curl *)")), ..read };
    assert!(denied(&decide(Mode::Default, &always, &deny)));
}
