//! The infrastructure gate, black-box with a real terraform (its built-in `terraform_data`
//! provider and local state, offline): tiers in every mode, obfuscated destroys, the plan
//! inside the question, exactly the plan shown applied, "always" per prefix, rules, state
//! files, unreviewed code.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, Permission, updates_of};
use crate::support::fake_llm::{FakeLlm, Reply, text_reply, tool_reply};
use crate::support::skip::{Ci, program};
use crate::support::workspace::Workspace;
use crate::tools::tool_result;

/// Three resources; `b` is replaced when its trigger changes.
const CONFIG: &str = r#"
resource "terraform_data" "a" { input = "one" }
resource "terraform_data" "b" {
  input            = "two"
  triggers_replace = ["v1"]
}
resource "terraform_data" "c" { input = "three" }
"#;

/// The change: `a` updated, `b` replaced, `c` deleted, `d` added.
const CHANGED: &str = r#"
resource "terraform_data" "a" { input = "uno" }
resource "terraform_data" "b" {
  input            = "two"
  triggers_replace = ["v2"]
}
resource "terraform_data" "d" { input = "four" }
"#;

/// The terraform on PATH, or `None` after [`skip`](crate::support::skip::skip) (a failure
/// under CI: `.ci/run` requires it).
#[track_caller]
pub fn terraform() -> Option<PathBuf> {
    program("terraform", Ci::Fails)
}

pub(crate) fn tf(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("terraform")
        .args(args)
        .current_dir(dir)
        .env("TF_IN_AUTOMATION", "1")
        .env_remove("TF_CLI_CONFIG_FILE")
        .output()
        .expect("terraform runs");
    assert!(out.status.success(), "terraform {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A project whose three resources exist in its local state.
pub(crate) fn applied(name: &str) -> Workspace {
    let ws = Workspace::new(name);
    ws.write("main.tf", CONFIG);
    tf(&ws.project(), &["init", "-input=false"]);
    tf(&ws.project(), &["apply", "-auto-approve", "-input=false"]);
    ws
}

pub(crate) fn state(ws: &Workspace) -> Vec<String> {
    tf(&ws.project(), &["state", "list"]).lines().map(str::to_string).collect()
}

pub(crate) fn bash(id: &str, command: &str) -> Reply {
    tool_reply(id, "bash", json!({ "command": command }))
}

pub(crate) fn asked(msgs: &[Value]) -> Vec<&Value> {
    msgs.iter().filter(|m| m["method"] == "session/request_permission").collect()
}

pub(crate) fn option_kinds(request: &Value) -> Vec<String> {
    let options = request["params"]["options"].as_array().expect("options");
    options.iter().map(|o| o["kind"].as_str().unwrap().to_string()).collect()
}

fn question_text(request: &Value) -> String {
    let content = request["params"]["toolCall"]["content"].as_array().cloned().unwrap_or_default();
    content.iter().map(|c| c["content"]["text"].as_str().unwrap_or("").to_string()).collect()
}

fn tiers(msgs: &[Value]) -> Vec<String> {
    updates_of(msgs, "tool_call")
        .iter()
        .map(|u| u["_meta"]["iacCode"]["tier"].as_str().unwrap_or("none").to_string())
        .collect()
}

/// A session in `mode` over a fake LLM playing `script`.
pub(crate) fn session(
    ws: &Workspace,
    script: Vec<Reply>,
    mode: &str,
) -> (FakeLlm, AcpProcess, String) {
    let llm = FakeLlm::start(script);
    let (acp, session) = AcpProcess::session_in_mode(ws, &llm, mode);
    (llm, acp, session)
}

#[test]
fn read_tier_commands_run_unasked_in_default_and_plan_mode() {
    for mode in ["default", "plan"] {
        let ws = Workspace::new(&format!("read-tier-{mode}"));
        ws.write("main.tf", CONFIG);
        let command = "ls -la && cat main.tf | grep -c terraform_data && wc -l main.tf";
        let script = vec![bash("r1", command), text_reply("ok")];
        let (llm, mut acp, session) = session(&ws, script, mode);
        acp.set_permission(Permission::RejectOnce);
        let (msgs, _) = acp.prompt(&session, "look");
        assert!(asked(&msgs).is_empty(), "{mode}: a read asks nothing");
        assert_eq!(tiers(&msgs), ["read"], "{mode}");
        assert!(tool_result(&llm, 1).contains("Exit code: 0"), "{mode}");
    }
}

#[test]
fn reads_of_secrets_and_state_still_ask_without_always() {
    let ws = Workspace::new("read-secrets");
    ws.write("terraform.tfstate", "{}");
    let home_creds = ws.root().join(".aws");
    std::fs::create_dir_all(&home_creds).unwrap();
    std::fs::write(home_creds.join("credentials"), "[default]\nkey=x\n").unwrap();
    for command in ["cat ~/.aws/credentials", "cat terraform.tfstate", "grep -r key ~/.aws"] {
        let script = vec![bash("s1", command), text_reply("ok")];
        let (_llm, mut acp, session) = session(&ws, script, "default");
        acp.set_permission(Permission::RejectOnce);
        let (msgs, _) = acp.prompt(&session, "read");
        let requests = asked(&msgs);
        assert_eq!(requests.len(), 1, "{command} asks");
        assert_eq!(option_kinds(requests[0]), ["allow_once", "reject_once"], "{command}");
    }
}

#[test]
fn commands_that_print_secrets_ask_every_time_even_in_plan_mode() {
    let ws = Workspace::new("print-secrets");
    for command in ["terraform state pull", "terraform output -json", "kubectl config view --raw"] {
        let script = vec![bash("s1", command), text_reply("ok")];
        let (llm, mut acp, session) = session(&ws, script, "plan");
        acp.set_permission(Permission::RejectOnce);
        let (msgs, _) = acp.prompt(&session, "show me");
        let requests = asked(&msgs);
        assert_eq!(requests.len(), 1, "{command} asks");
        assert_eq!(option_kinds(requests[0]), ["allow_once", "reject_once"], "{command}");
        assert_eq!(tiers(&msgs), ["read"], "{command}: still a read");
        assert_eq!(tool_result(&llm, 1), "Permission denied.", "{command}");
    }
}

#[test]
fn terraform_plan_runs_in_plan_mode() {
    let Some(_) = terraform() else { return };
    let ws = Workspace::new("plan-in-plan-mode");
    ws.write("main.tf", CONFIG);
    let command = "terraform init -input=false && terraform plan -input=false -no-color";
    let (llm, mut acp, session) = session(&ws, vec![bash("p1", command), text_reply("ok")], "plan");
    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&session, "plan it");
    assert!(asked(&msgs).is_empty(), "plan tier runs unasked in plan mode");
    assert_eq!(tiers(&msgs), ["plan"]);
    let result = tool_result(&llm, 1);
    assert!(result.contains("3 to add, 0 to change, 0 to destroy"), "{result}");
    assert!(!ws.exists("terraform.tfstate"), "nothing was applied");
}

#[test]
fn every_obfuscated_destroy_asks_or_is_refused_even_in_bypass_mode_and_nothing_is_destroyed() {
    let Some(tf_path) = terraform() else { return };
    let ws = applied("obfuscated");
    std::fs::create_dir_all(ws.path("infra")).unwrap();
    std::fs::create_dir_all(ws.path("modules/net")).unwrap();
    let absolute = format!("{} destroy", tf_path.display());
    let commands = [
        "bash -c 'terraform destroy'",
        "env X=1 terraform destroy",
        absolute.as_str(),
        "\\terraform destroy",
        "t=terraform; $t destroy",
        "echo yes | terraform destroy",
        "terraform -chdir=. destroy",
        "find . -maxdepth 0 -exec terraform destroy \\;",
        "echo . | xargs terraform destroy",
        "terraform apply -destroy -auto-approve",
        "terraform state rm terraform_data.a",
        "rm -rf modules",
        "kubectl delete namespace prod",
        "git push --force origin main",
        "python3 -c 'import os; os.system(\"terraform destroy -auto-approve\")'",
    ];
    // The terraform calls the gate sees but cannot plan: refused unasked while the
    // bundled policies are in force (nobody can judge a plan that was never made).
    let unplanned = [
        "bash -c 'terraform destroy'",
        "t=terraform; $t destroy",
        "echo yes | terraform destroy",
        "find . -maxdepth 0 -exec terraform destroy \\;",
        "echo . | xargs terraform destroy",
    ];
    for (n, command) in commands.iter().enumerate() {
        let script = vec![bash(&format!("d{n}"), command), text_reply("ok")];
        let (llm, mut acp, session) = session(&ws, script, "bypass_permissions");
        acp.set_permission(Permission::RejectOnce);
        let (msgs, _) = acp.prompt(&session, "clean up");
        let requests = asked(&msgs);
        if unplanned.contains(command) {
            assert!(requests.is_empty(), "{command}: refused unasked\n{}", acp.context());
            let told = tool_result(&llm, 1);
            assert!(told.contains("plan cannot be made first"), "{command}: {told}");
            assert_eq!(state(&ws).len(), 3, "{command}: nothing was destroyed");
            continue;
        }
        assert_eq!(requests.len(), 1, "{command}: asks in bypass mode\n{}", acp.context());
        let title = requests[0]["params"]["toolCall"]["title"].as_str().unwrap();
        assert!(title.starts_with("⚠ DESTRUCTIVE"), "{command}: {title}");
        assert_eq!(option_kinds(requests[0]), ["allow_once", "reject_once"], "{command}");
        let meta = &requests[0]["params"]["toolCall"]["_meta"]["iacCode"]["tier"];
        assert_eq!(meta, "destroy", "{command}");
        assert_eq!(tool_result(&llm, 1), "Permission denied.", "{command}");
        assert_eq!(state(&ws).len(), 3, "{command}: nothing was destroyed");
        assert!(ws.exists("modules/net"), "{command}");
    }
}

#[test]
fn the_apply_question_shows_the_plan_and_approval_applies_exactly_it() {
    let Some(_) = terraform() else { return };
    let ws = applied("apply-question");
    ws.write("main.tf", CHANGED);
    let script = vec![bash("a1", "terraform apply -auto-approve -input=false"), text_reply("ok")];
    let (llm, mut acp, session) = session(&ws, script, "default");
    acp.set_permission(Permission::Manual);
    let id = acp.start_prompt(&session, "apply");
    let request = loop {
        let msg = acp.recv();
        if msg["method"] == "session/request_permission" {
            break msg;
        }
    };
    let title = request["params"]["toolCall"]["title"].as_str().unwrap().to_string();
    assert!(title.starts_with("⚠ DESTRUCTIVE"), "{title}");
    let text = question_text(&request);
    for expected in ["terraform_data.b", "terraform_data.c", "1 to add", "1 to replace"] {
        assert!(text.contains(expected), "the question names {expected}:\n{text}");
    }
    assert!(!text.contains("terraform_data.a |"), "an update is not listed as a removal");
    assert_eq!(option_kinds(&request), ["allow_once", "reject_once"]);
    // The configuration changes while the question is open: `e` appears, `a` goes.
    std::fs::write(
        ws.path("main.tf"),
        CHANGED.replace("resource \"terraform_data\" \"a\" { input = \"uno\" }", "")
            + "resource \"terraform_data\" \"e\" {}\n",
    )
    .unwrap();
    let allow = json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}});
    acp.respond(request["id"].clone(), allow);
    let (_, response) = acp.until_response(&id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let result = tool_result(&llm, 1);
    assert!(result.contains("Apply complete"), "{result}");
    let mut now = state(&ws);
    now.sort();
    assert_eq!(
        now,
        ["terraform_data.a", "terraform_data.b", "terraform_data.d"],
        "what was shown was applied, not the edited configuration"
    );
    let plans = ws.config().join("plans");
    let left = std::fs::read_dir(&plans).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "the saved plan is removed after the call");
}

#[test]
fn an_apply_that_deletes_nothing_is_a_mutation_and_a_failed_plan_asks_nothing() {
    let Some(_) = terraform() else { return };
    let ws = Workspace::new("apply-mutation");
    ws.write("main.tf", CONFIG);
    tf(&ws.project(), &["init", "-input=false"]);
    let script = vec![
        bash("m1", "terraform apply -auto-approve"),
        text_reply("ok"),
        bash("m2", "terraform apply -var-file=missing.tfvars"),
        text_reply("ok"),
    ];
    let (llm, mut acp, session) = session(&ws, script, "bypass_permissions");
    let (msgs, _) = acp.prompt(&session, "create");
    assert!(asked(&msgs).is_empty(), "bypass runs an apply that deletes nothing");
    let tier_updates: Vec<&Value> = updates_of(&msgs, "tool_call_update")
        .into_iter()
        .filter(|u| u["_meta"]["iacCode"]["tier"].is_string())
        .collect();
    assert_eq!(tier_updates[0]["_meta"]["iacCode"]["tier"], "mutate", "the plan decided");
    assert_eq!(state(&ws).len(), 3);
    let (msgs, _) = acp.prompt(&session, "again");
    assert!(asked(&msgs).is_empty(), "a failed plan asks nothing");
    let result = tool_result(&llm, 3);
    assert!(result.starts_with("The plan failed"), "{result}");
}

#[test]
fn always_for_terraform_fmt_allows_only_terraform_fmt() {
    let ws = Workspace::new("always-prefix");
    ws.write("main.tf", CONFIG);
    let script = vec![
        bash("f1", "terraform fmt"),
        text_reply("ok"),
        bash("f2", "terraform fmt -recursive"),
        text_reply("ok"),
        bash("f3", "git push origin main"),
        text_reply("ok"),
        bash("f4", "terraform destroy -auto-approve"),
        text_reply("ok"),
    ];
    let (_llm, mut acp, session) = session(&ws, script, "default");
    acp.set_permission(Permission::AllowAlways);
    let (msgs, _) = acp.prompt(&session, "format");
    let requests = asked(&msgs);
    assert_eq!(requests.len(), 1);
    let names: Vec<&str> = requests[0]["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert!(names.iter().any(|n| n.contains("`terraform fmt`")), "{names:?}");
    let (msgs, _) = acp.prompt(&session, "format again");
    assert!(asked(&msgs).is_empty(), "terraform fmt is remembered");
    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&session, "push");
    assert_eq!(asked(&msgs).len(), 1, "git push is not terraform fmt");
    let (msgs, _) = acp.prompt(&session, "destroy");
    assert_eq!(asked(&msgs).len(), 1, "nor is terraform destroy");
}

#[test]
fn the_file_tools_never_write_terraform_state() {
    let ws = Workspace::new("state-files");
    ws.write("terraform.tfstate", "{\"version\": 4}");
    let script = vec![
        tool_reply("w1", "write_file", json!({"path": "terraform.tfstate", "content": "{}"})),
        tool_reply("w2", "write_file", json!({"path": ".terraform/environment", "content": "p"})),
        tool_reply(
            "w3",
            "edit_file",
            json!({"path": "terraform.tfstate", "old_string": "4", "new_string": "3"}),
        ),
        text_reply("ok"),
    ];
    let (llm, mut acp, session) = session(&ws, script, "bypass_permissions");
    let (msgs, _) = acp.prompt(&session, "fix the state");
    assert!(asked(&msgs).is_empty(), "refused, not asked");
    for n in 1..=3 {
        assert!(tool_result(&llm, n).starts_with("Refused"), "{}", tool_result(&llm, n));
    }
    assert_eq!(ws.read("terraform.tfstate"), "{\"version\": 4}");
    assert!(!ws.exists(".terraform/environment"));
}

#[test]
fn unreviewed_files_make_a_plan_ask_and_name_them() {
    let ws = Workspace::new("unreviewed");
    let script = vec![
        tool_reply("w1", "write_file", json!({"path": "main.tf", "content": CONFIG})),
        bash("p1", "terraform validate"),
        text_reply("ok"),
        bash("p2", "terraform validate"),
        text_reply("ok"),
    ];
    let (_llm, mut acp, session) = session(&ws, script, "accept_edits");
    acp.set_permission(Permission::AllowOnce);
    let (msgs, _) = acp.prompt(&session, "write and validate");
    let requests = asked(&msgs);
    assert_eq!(requests.len(), 1, "the write runs unasked, the validate asks");
    let title = requests[0]["params"]["toolCall"]["title"].as_str().unwrap();
    assert!(title.contains("main.tf") && title.contains("without review"), "{title}");
    assert_eq!(option_kinds(requests[0]), ["allow_once", "reject_once"]);
    let (msgs, _) = acp.prompt(&session, "validate again");
    assert!(asked(&msgs).is_empty(), "once a person said yes to running it, it is reviewed");
}

#[test]
fn kubectl_questions_name_the_context_namespace_and_objects() {
    let ws = Workspace::new("kube-scope");
    let kubeconfig = ws.root().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\ncurrent-context: prod-eu\ncontexts: []\n",
    )
    .unwrap();
    ws.write(
        "app.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: api\n",
    );
    let script = vec![bash("k1", "kubectl apply -n payments -f app.yaml"), text_reply("ok")];
    let llm = FakeLlm::start(script);
    let kube = kubeconfig.display().to_string();
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[("KUBECONFIG", &kube)]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&session, "deploy");
    let requests = asked(&msgs);
    assert_eq!(requests.len(), 1);
    let text = question_text(requests[0]);
    for expected in ["prod-eu", "payments", "Deployment/api", "Service/api"] {
        assert!(text.contains(expected), "{expected} in:\n{text}");
    }
}

pub(crate) fn settings(ws: &Workspace, permissions: Value) {
    let text = json!({ "permissions": permissions }).to_string();
    std::fs::write(ws.config().join("settings.json"), text).unwrap();
}

#[test]
fn deny_rules_hold_in_bypass_mode() {
    let ws = Workspace::new("deny-rule");
    settings(&ws, json!({"deny": ["bash(git push*)", "write_file(*.tf)"]}));
    let script = vec![
        bash("g1", "git push origin main"),
        bash("g2", "bash -c 'git push --tags'"),
        tool_reply("w1", "write_file", json!({"path": "main.tf", "content": "x"})),
        text_reply("ok"),
    ];
    let (llm, mut acp, session) = session(&ws, script, "bypass_permissions");
    let (msgs, _) = acp.prompt(&session, "push");
    assert!(asked(&msgs).is_empty());
    for n in 1..=3 {
        let result = tool_result(&llm, n);
        assert!(result.starts_with("Denied by the permission rule"), "{result}");
    }
    assert!(!ws.exists("main.tf"));
}

#[test]
fn an_allow_rule_never_allows_what_follows_the_allowed_command() {
    let ws = Workspace::new("allow-rule");
    std::fs::create_dir_all(ws.path("x/y")).unwrap();
    settings(&ws, json!({"allow": ["bash(git *)"]}));
    let script = vec![
        bash("g1", "git init -q && git add -A"),
        text_reply("ok"),
        bash("g2", "git status && rm -rf x"),
        text_reply("ok"),
    ];
    let (_llm, mut acp, session) = session(&ws, script, "default");
    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&session, "init");
    assert!(asked(&msgs).is_empty(), "every command matched the rule");
    let (msgs, _) = acp.prompt(&session, "status");
    assert_eq!(asked(&msgs).len(), 1, "rm -rf x matched no rule");
    assert!(ws.exists("x/y"));
}

#[test]
fn one_shot_refuses_a_destroy_unless_a_rule_allows_it_by_name() {
    let Some(_) = terraform() else { return };
    let ws = applied("oneshot-destroy");
    let run = |extra: &[&str]| {
        let llm =
            FakeLlm::start(vec![bash("d1", "terraform destroy -auto-approve"), text_reply("ok")]);
        let mut command = crate::support::command::iac_code(&ws);
        command.args(["-p", "tear it down", "--permission-mode", "bypass_permissions"]);
        command.args(extra);
        crate::support::command::TestCommand::fake_llm(&mut command, &llm);
        let out = command.output().unwrap();
        (out, tool_result(&llm, 1))
    };
    let (out, result) = run(&[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(result, "Permission denied.");
    assert_eq!(state(&ws).len(), 3, "nobody said yes");
    let (out, result) = run(&["--allowed-tools", "bash(terraform destroy*)"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(result.contains("3 destroyed"), "{result}");
    assert!(state(&ws).is_empty(), "the rule allowed it by name");
}
