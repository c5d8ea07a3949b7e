//! Issue 32, item 1, black-box with a real terraform: every form the attacker review ran
//! unasked is now asked (or refused: by a deny rule, or, a terraform call the gate cannot
//! plan, by the policies in force) in default and in bypass mode, and after
//! the test rejects it the state still lists its resources. Reads that reach state without
//! naming it ask as `cat terraform.tfstate` does.

use serde_json::{Value, json};

use crate::infra::{applied, asked, bash, option_kinds, session, settings, state, terraform};
use crate::support::acp_client::Permission;
use crate::support::fake_llm::text_reply;
use crate::support::workspace::Workspace;
use crate::tools::tool_result;

/// The payload every hiding place carries.
const PAYLOAD: &str = "$(terraform destroy -auto-approve -input=false >/dev/null)";

/// Each form hides `PAYLOAD` where bash evaluates a value as arithmetic or as a name, or
/// hides what runs: `{p}` is the payload.
const FORMS: &[&str] = &[
    "x='a[{p}]'; echo ${b[x]}",
    "x='a[{p}]'; echo \"${b[$x]}\"",
    "x='a[{p}]'; echo ${#b[x]}",
    "x='a[{p}]'; s=abc; echo ${s:x:1}",
    "x='a[{p}]'; echo $[x]",
    "x='a[{p}]'; echo $((x + 1))",
    "x='a[{p}]'; (( x )); true",
    "x='a[{p}]'; let y=x; true",
    "x='a[{p}]'; [[ $x -eq 1 ]]; true",
    "x='a[{p}]'; [[ -v b[x] ]]; true",
    "x='a[{p}]'; test -v 'b[x]'; true",
    "x='a[{p}]'; declare -i n; n=x; true",
    "x='a[{p}]'; read -r 'b[x]' <<< v; true",
    "x='a[{p}]'; printf -v 'b[x]' %s v",
    "x='a[{p}]'; unset 'b[x]'",
    "x='a[{p}]'; git commit -q -m \"${b[x]}\"; true",
    "T=destroy; terraform $T -auto-approve -input=false",
    "t=terraform; $t destroy -auto-approve -input=false",
    "GIT_TRACE=terraform.tfstate git --version",
    "export GIT_TRACE_PACKET=terraform.tfstate; git --version",
];

/// `{p}` replaced by the payload.
fn form(template: &str) -> String {
    template.replace("{p}", PAYLOAD)
}

/// The forms whose terraform call the parser sees but the gate cannot plan: with the
/// bundled policies in force they are refused unasked (no plan, nothing to judge).
const UNPLANNED: &[&str] = &[
    "T=destroy; terraform $T -auto-approve -input=false",
    "t=terraform; $t destroy -auto-approve -input=false",
];

/// A question in `mode`, rejected: the call is asked once (no "always"), denied, and the
/// state keeps its three resources. An `UNPLANNED` form is refused without a question.
fn rejected(ws: &Workspace, n: usize, command: &str, mode: &str) {
    let script = vec![bash(&format!("h{n}"), command), text_reply("ok")];
    let (llm, mut acp, session) = session(ws, script, mode);
    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&session, "go");
    let requests = asked(&msgs);
    if UNPLANNED.contains(&command) {
        assert!(requests.is_empty(), "{mode}: {command}: refused unasked\n{}", acp.context());
        let told = tool_result(&llm, 1);
        assert!(told.contains("plan cannot be made first"), "{mode}: {command}: {told}");
        assert_eq!(state(ws).len(), 3, "{mode}: {command}: nothing was destroyed");
        return;
    }
    assert_eq!(requests.len(), 1, "{mode}: {command}: asks\n{}", acp.context());
    assert_eq!(option_kinds(requests[0]), ["allow_once", "reject_once"], "{mode}: {command}");
    assert_eq!(tool_result(&llm, 1), "Permission denied.", "{mode}: {command}");
    assert_eq!(state(ws).len(), 3, "{mode}: {command}: nothing was destroyed");
    assert!(!ws.read("terraform.tfstate").contains("trace:"), "{mode}: {command}: no trace");
}

#[test]
fn every_hidden_evaluation_asks_in_default_and_bypass_mode() {
    let Some(_) = terraform() else { return };
    let ws = applied("gate-holes");
    for (n, template) in FORMS.iter().enumerate() {
        let command = form(template);
        for mode in ["default", "bypass_permissions"] {
            rejected(&ws, n, &command, mode);
        }
    }
}

/// The result of a call refused by a deny rule.
fn denied_by_rule(ws: &Workspace, command: &str, mode: &str) -> (String, Vec<Value>) {
    let script = vec![bash("d1", command), text_reply("ok")];
    let (llm, mut acp, session) = session(ws, script, mode);
    acp.set_permission(Permission::AllowOnce);
    let (msgs, _) = acp.prompt(&session, "go");
    (tool_result(&llm, 1), msgs)
}

#[test]
fn a_deny_rule_holds_when_the_program_is_hidden() {
    let Some(_) = terraform() else { return };
    let ws = applied("gate-holes-deny");
    settings(&ws, json!({"deny": ["bash(touch *)"]}));
    let commands = [
        "t=touch; $t M".to_string(),
        "$(echo touch) M".to_string(),
        "t=tou; ${t}ch M".to_string(),
        "/usr/bin/tou?h M".to_string(),
        "t=touch; nohup $t M".to_string(),
        "t=touch; command $t M".to_string(),
        "x='a[$(touch M)]'; echo ${b[x]}".to_string(),
        "x='a[$(tou\"\"ch M)]'; echo ${b[x]}".to_string(),
        "eval 'tou\"\"ch M'".to_string(),
        format!("x='a[{PAYLOAD}]'; t=touch; $t \"${{b[x]}}\""),
    ];
    for command in &commands {
        for mode in ["default", "bypass_permissions"] {
            let (result, msgs) = denied_by_rule(&ws, command, mode);
            assert!(
                result.starts_with("Denied by the permission rule"),
                "{mode}: {command}: {result}"
            );
            assert!(asked(&msgs).is_empty(), "{mode}: {command}: refused, not asked");
            assert!(!ws.exists("M"), "{mode}: {command}");
            assert_eq!(state(&ws).len(), 3, "{mode}: {command}");
        }
    }
}

#[test]
fn an_allow_rule_does_not_allow_a_hidden_evaluation() {
    let Some(_) = terraform() else { return };
    let ws = applied("gate-holes-allow");
    settings(&ws, json!({"allow": ["bash(git *)", "bash(mkdir *)"]}));
    let commands = [
        format!("x='a[{PAYLOAD}]'; git commit -q -m \"${{b[x]}}\""),
        format!("x='a[{PAYLOAD}]'; mkdir \"${{b[x]}}\""),
    ];
    for (n, command) in commands.iter().enumerate() {
        rejected(&ws, n, command, "default");
    }
}

#[test]
fn an_always_answer_does_not_cover_a_hidden_evaluation() {
    let Some(_) = terraform() else { return };
    let ws = applied("gate-holes-always");
    let script = vec![
        bash("m1", "mkdir made"),
        text_reply("ok"),
        bash("m2", &format!("x='a[{PAYLOAD}]'; mkdir \"${{b[x]}}\"")),
        text_reply("ok"),
    ];
    let (llm, mut acp, session) = session(&ws, script, "default");
    acp.set_permission(Permission::AllowAlways);
    let (msgs, _) = acp.prompt(&session, "make it");
    assert_eq!(asked(&msgs).len(), 1, "mkdir is asked once");
    assert!(ws.exists("made"));
    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&session, "again");
    assert_eq!(asked(&msgs).len(), 1, "the remembered mkdir does not cover it");
    assert_eq!(tool_result(&llm, 3), "Permission denied.");
    assert_eq!(state(&ws).len(), 3);
}

/// Whether `command` in `mode` asked, and what the model got back.
fn outcome(ws: &Workspace, command: &str, mode: &str) -> (bool, String) {
    let script = vec![bash("r1", command), text_reply("ok")];
    let (llm, mut acp, session) = session(ws, script, mode);
    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&session, "read");
    let asked = !asked(&msgs).is_empty();
    (asked, tool_result(&llm, 1))
}

#[test]
fn reads_that_reach_state_without_naming_it_ask_as_naming_it_does() {
    let Some(_) = terraform() else { return };
    let ws = applied("gate-holes-reads");
    let reads = ["grep -r VALUE .", "cat *.tfstat?", "tail -n 50 *", "rg -n VALUE ."];
    for mode in ["default", "plan", "bypass_permissions"] {
        let (by_name, _) = outcome(&ws, "cat terraform.tfstate", mode);
        for command in reads {
            let (asked, result) = outcome(&ws, command, mode);
            assert_eq!(asked, by_name, "{mode}: {command} asks as cat terraform.tfstate does");
            if mode != "bypass_permissions" {
                assert!(asked, "{mode}: {command}");
                assert_eq!(result, "Permission denied.", "{mode}: {command}");
            }
        }
    }
    let (asked, result) = outcome(&ws, "cat main.tf && grep -c resource main.tf", "default");
    assert!(!asked, "a read of the configuration asks nothing");
    assert!(result.contains("Exit code: 0"), "{result}");
    assert_eq!(state(&ws).len(), 3);
}

/// What the parser cannot see into: an interpreter's code, a decoded pipe, a script and a
/// build target of the project's. Default mode asks (rejected here); bypass mode may run
/// each unasked, but only inside the sandbox (sealed: the state read-only, no credentials, no network), so the destroy it
/// hides fails and the state keeps its three resources; or it asks, and is rejected.
#[test]
fn what_the_parser_cannot_see_into_asks_or_runs_sealed_and_destroys_nothing() {
    let Some(_) = terraform() else { return };
    let ws = applied("gate-holes-sealed");
    let destroy = "terraform destroy -auto-approve -input=false";
    ws.write("d.sh", &format!("{destroy}\n"));
    ws.write("Makefile", &format!("clean:\n\t{destroy}\n"));
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(destroy);
    let forms = [
        "python3 -c \"import os; os.system('terra'+'form destroy -auto-approve -input=false')\""
            .to_string(),
        format!("echo {encoded} | base64 -d | bash"),
        "sh d.sh".to_string(),
        "make clean".to_string(),
        "eval \"$(printf 'terra%s destroy -auto-approve -input=false' form)\"".to_string(),
    ];
    let runs = forms.iter().flat_map(|c| ["default", "bypass_permissions"].map(|m| (c, m)));
    for (n, (command, mode)) in runs.enumerate() {
        let script = vec![bash(&format!("s{n}"), command), text_reply("ok")];
        let (_llm, mut acp, session) = session(&ws, script, mode);
        acp.set_permission(Permission::RejectOnce);
        let (msgs, _) = acp.prompt(&session, "go");
        if asked(&msgs).is_empty() {
            // It ran unasked: then inside the sandbox, sealed.
            let running: Vec<&Value> = msgs
                .iter()
                .map(|m| &m["params"]["update"])
                .filter(|u| u["status"] == "in_progress")
                .collect();
            let sandbox = &running[0]["_meta"]["iacCode"]["sandbox"];
            assert_ne!(mode, "default", "{command}: asks in default mode");
            assert_eq!(sandbox["confined"], true, "{command}: {sandbox}");
            assert_eq!(sandbox["network"], false, "{command}: {sandbox}");
            assert_eq!(sandbox["credentials"], false, "{command}: {sandbox}");
        }
        assert_eq!(state(&ws).len(), 3, "{mode}: {command}: nothing was destroyed");
    }
}
