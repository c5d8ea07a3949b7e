//! Policy as code, black-box: the team's Rego judges the gate's plan with a real terraform
//! (`terraform_data`, local state, offline) before anyone is asked: a deny refuses even in
//! bypass mode with the messages to the model and a failed call to the client, a warn goes
//! into the question and the result, the project's policies hold only as approved, a
//! broken policy refuses applies only; kubectl manifests are judged before kubectl runs;
//! `policy eval|test|list` on plans in terraform's JSON format for the three clouds.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::infra::{asked, bash, session, state, terraform};
use crate::support::acp_client::{AcpProcess, Permission, updates_of};
use crate::support::command::iac_code;
use crate::support::fake_llm::{FakeLlm, text_reply, tool_reply};
use crate::support::skip::{Ci, program};
use crate::support::workspace::Workspace;
use crate::tools::tool_result;

const CONFIG: &str = r#"
resource "terraform_data" "protected" {
  input            = "keep"
  triggers_replace = ["v1"]
}
resource "terraform_data" "other" { input = "x" }
"#;

/// OPA v1 syntax: deleting `terraform_data.protected` is denied.
const PROTECT: &str = r#"package main

deny contains msg if {
  some rc in input.resource_changes
  rc.address == "terraform_data.protected"
  "delete" in rc.change.actions
  msg := sprintf("%s must never be deleted (team policy)", [rc.address])
}
"#;

/// The older syntax: a warning for every resource created or replaced.
const WARN_V0: &str = r#"package main

warn[msg] {
  rc := input.resource_changes[_]
  rc.change.actions[_] == "create"
  msg := sprintf("%s is new: check its tags", [rc.address])
}
"#;

fn tf(dir: &Path, args: &[&str]) {
    let out = Command::new("terraform")
        .args(args)
        .current_dir(dir)
        .env("TF_IN_AUTOMATION", "1")
        .output()
        .expect("terraform runs");
    assert!(out.status.success(), "terraform {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A project whose two resources exist in its local state.
fn applied(name: &str) -> Workspace {
    let ws = Workspace::new(name);
    ws.write("main.tf", CONFIG);
    tf(&ws.project(), &["init", "-input=false"]);
    tf(&ws.project(), &["apply", "-auto-approve", "-input=false"]);
    ws
}

fn approve(ws: &Workspace) {
    let out = iac_code(ws).args(["config", "approve"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The text of the last failed tool call update.
fn failed_text(msgs: &[Value]) -> String {
    let updates = updates_of(msgs, "tool_call_update");
    let failed = updates.iter().rev().find(|u| u["status"] == "failed").expect("a failed call");
    failed["content"].to_string()
}

fn question_text(request: &Value) -> String {
    request["params"]["toolCall"]["content"].to_string()
}

#[test]
fn a_project_policy_refuses_a_destroy_in_bypass_mode_without_a_question() {
    let Some(_) = terraform() else { return };
    let ws = applied("policy-destroy");
    ws.write(".iac-code/settings.json", "{}");
    ws.write(".iac-code/policies/protect.rego", PROTECT);
    approve(&ws);
    let script = vec![
        bash("d1", "terraform destroy -auto-approve"),
        text_reply("ok"),
        bash("d2", "terraform plan -destroy -input=false -out=tfplan"),
        text_reply("ok"),
        bash("d3", "terraform apply tfplan"),
        text_reply("ok"),
        bash("d4", "terraform init -input=false && terraform destroy -auto-approve"),
        text_reply("ok"),
        bash("d5", "TF_CLI_ARGS_destroy=-lock=false terraform destroy -auto-approve"),
        text_reply("ok"),
    ];
    let (llm, mut acp, sid) = session(&ws, script, "bypass_permissions");
    acp.set_permission(Permission::AllowOnce);
    let (msgs, _) = acp.prompt(&sid, "tear it down");
    assert!(asked(&msgs).is_empty(), "no question is offered: {}", acp.context());
    assert_eq!(state(&ws).len(), 2, "nothing was destroyed");
    let told = tool_result(&llm, 1);
    assert!(told.contains("Refused by policy"), "{told}");
    assert!(
        told.contains("terraform_data.protected must never be deleted (team policy)"),
        "{told}"
    );
    assert!(failed_text(&msgs).contains("must never be deleted"), "the client sees why");
    // The model's own saved plan is judged too.
    let (msgs, _) = acp.prompt(&sid, "plan it");
    assert!(asked(&msgs).is_empty(), "a plan runs");
    assert!(ws.exists("tfplan"), "{}", tool_result(&llm, 3));
    let (msgs, _) = acp.prompt(&sid, "apply the plan");
    assert!(asked(&msgs).is_empty());
    let told = tool_result(&llm, 5);
    assert!(told.contains("must never be deleted"), "{told}");
    assert_eq!(state(&ws).len(), 2, "nothing was destroyed");
    // Applies and destroys whose plan the gate cannot make are refused: nobody could
    // judge them.
    for (n, what) in [(7, "not a lone command"), (9, "terraform destroy")] {
        let (msgs, _) = acp.prompt(&sid, "tear it down another way");
        assert!(asked(&msgs).is_empty(), "no question is offered");
        let told = tool_result(&llm, n);
        assert!(told.contains("plan cannot be made first") && told.contains(what), "{told}");
        assert_eq!(state(&ws).len(), 2, "nothing was destroyed");
    }
}

#[test]
fn the_model_cannot_switch_the_policies_off_even_in_bypass_mode() {
    let ws = Workspace::new("policy-settings");
    let settings = ws.config().join("settings.json");
    std::fs::write(&settings, "{}").unwrap();
    let off = serde_json::json!({"policy": {"bundled": false}}).to_string();
    let script = vec![
        tool_reply("s1", "write_file", serde_json::json!({"path": settings, "content": off})),
        text_reply("ok"),
        tool_reply(
            "s2",
            "edit_file",
            serde_json::json!({"path": settings, "old_string": "{}", "new_string": off}),
        ),
        text_reply("ok"),
    ];
    let (llm, mut acp, sid) = session(&ws, script, "bypass_permissions");
    for n in [1, 3] {
        let (msgs, _) = acp.prompt(&sid, "turn the policies off");
        assert!(asked(&msgs).is_empty(), "refused, not asked");
        let told = tool_result(&llm, n);
        assert!(told.contains("iac-code configuration directory"), "{told}");
    }
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{}", "the settings are as they were");
}

#[test]
fn a_warning_shows_in_the_question_and_makes_no_question_where_none_was_due() {
    let Some(_) = terraform() else { return };
    let ws = applied("policy-warn");
    // The user's policy (older syntax) is in force without any approval.
    std::fs::create_dir_all(ws.config().join("policies")).unwrap();
    std::fs::write(ws.config().join("policies/tags.rego"), WARN_V0).unwrap();
    ws.write("main.tf", &CONFIG.replace("\"v1\"", "\"v2\""));
    let script = vec![bash("w1", "terraform apply -auto-approve"), text_reply("ok")];
    let (llm, mut acp, sid) = session(&ws, script, "default");
    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&sid, "apply");
    let requests = asked(&msgs);
    assert_eq!(requests.len(), 1, "a replacement asks");
    let text = question_text(requests[0]);
    assert!(text.contains("Policy warnings"), "{text}");
    assert!(text.contains("terraform_data.protected is new: check its tags"), "{text}");
    assert!(text.contains("1 to replace"), "beside the plan's summary: {text}");
    assert_eq!(tool_result(&llm, 1), "Permission denied.");
    // A creation in bypass mode asks nothing, warning or not; the result carries it.
    ws.write("main.tf", &format!("{CONFIG}\nresource \"terraform_data\" \"added\" {{}}\n"));
    let script = vec![bash("w2", "terraform apply -auto-approve"), text_reply("ok")];
    let (llm, mut acp, sid) = session(&ws, script, "bypass_permissions");
    let (msgs, _) = acp.prompt(&sid, "apply");
    assert!(asked(&msgs).is_empty(), "a warning asks nothing");
    assert_eq!(state(&ws).len(), 3);
    let result = tool_result(&llm, 1);
    assert!(result.contains("Apply complete"), "{result}");
    assert!(result.contains("Policy warnings:\n- terraform_data.added is new"), "{result}");
}

#[test]
fn an_edited_project_policy_holds_nothing_new_until_approved() {
    let Some(_) = terraform() else { return };
    let ws = applied("policy-edit");
    ws.write(".iac-code/settings.json", "{}");
    ws.write(".iac-code/policies/protect.rego", PROTECT);
    // Not approved yet: not in force (a destroy asks, as it always does).
    let script = vec![bash("e0", "terraform destroy -auto-approve"), text_reply("ok")];
    let (llm, mut acp, sid) = session(&ws, script, "bypass_permissions");
    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&sid, "destroy");
    assert_eq!(asked(&msgs).len(), 1, "unapproved, the policy is not in force");
    assert_eq!(tool_result(&llm, 1), "Permission denied.");
    approve(&ws);
    // Loosened without approval: refused still, and the change is named.
    ws.write(".iac-code/policies/protect.rego", "package main\n");
    let script = vec![bash("e1", "terraform destroy -auto-approve"), text_reply("ok")];
    let (llm, mut acp, sid) = session(&ws, script, "bypass_permissions");
    acp.set_permission(Permission::AllowOnce);
    let (msgs, _) = acp.prompt(&sid, "destroy");
    assert!(asked(&msgs).is_empty());
    let told = tool_result(&llm, 1);
    assert!(
        told.contains("changed since they were approved")
            || told.contains("changed since the project's settings were approved"),
        "{told}"
    );
    assert_eq!(state(&ws).len(), 2);
    // Removed without approval: the same.
    std::fs::remove_dir_all(ws.path(".iac-code/policies")).unwrap();
    let script = vec![bash("e3", "terraform destroy -auto-approve"), text_reply("ok")];
    let (llm, mut acp, sid) = session(&ws, script, "bypass_permissions");
    acp.set_permission(Permission::AllowOnce);
    let (msgs, _) = acp.prompt(&sid, "destroy");
    assert!(asked(&msgs).is_empty());
    let told = tool_result(&llm, 1);
    assert!(told.contains("changed since"), "a removed policy is a change: {told}");
    assert_eq!(state(&ws).len(), 2);
    ws.write(".iac-code/policies/protect.rego", "package main\n");
    // Settings made unreadable by the model during a turn: the same (a later prompt is
    // refused as a whole until they are fixed).
    let settings = serde_json::json!({"path": ".iac-code/settings.json", "content": "{"});
    let script = vec![
        tool_reply("e4", "write_file", settings),
        bash("e5", "terraform destroy -auto-approve"),
        text_reply("ok"),
    ];
    let (llm, mut acp, sid) = session(&ws, script, "bypass_permissions");
    acp.set_permission(Permission::AllowOnce);
    let (msgs, _) = acp.prompt(&sid, "destroy");
    assert!(asked(&msgs).is_empty());
    let told = tool_result(&llm, 2);
    assert!(told.contains("cannot be read"), "unreadable settings keep refusing: {told}");
    assert_eq!(state(&ws).len(), 2);
    ws.write(".iac-code/settings.json", "{}");
    // Approved as edited: a destroy is asked again like any destroy.
    approve(&ws);
    let script = vec![bash("e2", "terraform destroy -auto-approve"), text_reply("ok")];
    let (llm, mut acp, sid) = session(&ws, script, "bypass_permissions");
    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&sid, "destroy");
    assert_eq!(asked(&msgs).len(), 1);
    assert_eq!(tool_result(&llm, 1), "Permission denied.");
    assert_eq!(state(&ws).len(), 2);
}

#[test]
fn a_broken_policy_refuses_applies_while_reads_and_plans_go_on() {
    let Some(_) = terraform() else { return };
    let ws = applied("policy-broken");
    std::fs::create_dir_all(ws.config().join("policies")).unwrap();
    let broken = "package main\n\ndeny contains msg if {\n  msg := \n}\n";
    std::fs::write(ws.config().join("policies/broken.rego"), broken).unwrap();
    ws.write("main.tf", &format!("{CONFIG}\nresource \"terraform_data\" \"added\" {{}}\n"));
    let script = vec![
        bash("b1", "terraform plan -input=false -no-color"),
        text_reply("ok"),
        bash("b2", "terraform apply -auto-approve"),
        text_reply("ok"),
    ];
    let (llm, mut acp, sid) = session(&ws, script, "bypass_permissions");
    let (msgs, _) = acp.prompt(&sid, "plan");
    assert!(asked(&msgs).is_empty());
    assert!(tool_result(&llm, 1).contains("1 to add"), "{}", tool_result(&llm, 1));
    let (msgs, _) = acp.prompt(&sid, "apply");
    assert!(asked(&msgs).is_empty());
    let told = tool_result(&llm, 3);
    assert!(told.contains("a policy in force is broken"), "{told}");
    assert!(
        told.contains("broken.rego:4:") || told.contains("broken.rego:5:"),
        "file and line: {told}"
    );
    assert_eq!(state(&ws).len(), 2, "nothing was applied");
}

#[test]
fn a_privileged_pod_is_refused_before_kubectl_runs_even_in_bypass_mode() {
    let ws = Workspace::new("policy-kubectl");
    // A kubectl (and an oc) that only leave a mark: no cluster exists here.
    use std::os::unix::fs::PermissionsExt;
    let ran = ws.path("kubectl-ran");
    for program in ["kubectl", "oc"] {
        let fake = format!(
            "#!/bin/sh\necho \"$@\" >> '{0}'\n[ \"$2\" = -f ] && cat \"$3\" >> '{0}.sent'\nexit 0\n",
            ran.display()
        );
        ws.write(&format!(".bin/{program}"), &fake);
        let fake = ws.path(&format!(".bin/{program}"));
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let pod = std::fs::read_to_string(fixture("privileged-pod.yaml")).unwrap();
    ws.write("pod.yaml", &pod);
    ws.write("k8s/pod.yaml", &pod);
    ws.write("manifests/ok.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n");
    ws.write("manifests/deep/pod.yaml", &pod);
    ws.write("yes.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: y}\nspec:\n  containers:\n  - name: a\n    image: 'nginx:1.27'\n    securityContext: {privileged: yes}\n");
    ws.write("merged.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: m}\nx: &root {privileged: true}\nspec:\n  containers:\n  - name: a\n    image: 'nginx:1.27'\n    securityContext: {<<: *root}\n");
    ws.write("list.yaml", "apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: l}\n  spec:\n    containers:\n    - {name: a, image: 'nginx:1.27', securityContext: {privileged: true}}\n");
    ws.write("split.yaml", "a\n---#\n{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"s\"}, \"spec\": {\"containers\": [{\"name\": \"a\", \"image\": \"nginx:1.27\", \"securityContext\": {\"privileged\": true}}]}}\n");
    ws.write("ok.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec:\n  containers:\n  - {name: a, image: 'nginx:1.27'}\n");
    // (command, what the model is told): each is refused unasked and kubectl never runs.
    let refused = [
        ("kubectl -n default apply -f pod.yaml", "Pod debug: container shell is privileged"),
        ("cd k8s && kubectl apply -f pod.yaml", "container shell is privileged"),
        ("kubectl apply -f=pod.yaml", "container shell is privileged"),
        ("kubectl apply -R -f manifests", "container shell is privileged"),
        ("oc apply -f pod.yaml", "container shell is privileged"),
        ("kubectl run dbg --image=busybox:1.36 --privileged", "is privileged"),
        ("kubectl apply -f yes.yaml", "is privileged"),
        ("kubectl apply -f merged.yaml", "is privileged"),
        ("kubectl apply -f list.yaml", "is privileged"),
        ("kubectl apply -f - <<'EOF'\nkind: Pod\nEOF", "cannot judge"),
        ("cat pod.yaml | kubectl apply -f -", "cannot judge"),
        ("kubectl apply -k k8s", "a kustomization"),
        ("kubectl apply -f https://example.invalid/pod.yaml", "not a local file"),
        ("F=pod.yaml; kubectl apply -f $F", "cannot judge"),
        ("kubectl apply -f missing.yaml", "cannot judge"),
        ("kubectl apply -Rf manifests", "container shell is privileged"),
        ("kubectl apply -f ok.yaml,pod.yaml", "container shell is privileged"),
        ("cp pod.yaml ok2.yaml && kubectl apply -f ok.yaml", "a command of its own"),
        ("kubectl patch deploy web -p '{}'", "no manifest shows"),
        ("kubectl debug node/n --image=busybox:1.36 --profile=sysadmin", "no manifest shows"),
        ("kubectl run x --image=busybox:1.36 --overrides='{}'", "--overrides"),
        ("kubectl --cache-dir install apply -f pod.yaml", "container shell is privileged"),
        ("kubectl --bogus install apply -f pod.yaml", "the subcommand"),
        ("kubectl -n run apply -f pod.yaml", "container shell is privileged"),
        ("kubectl create --raw /api/v1/namespaces/default/pods -f ok.yaml", "--raw"),
        ("kubectl apply -f split.yaml", "without a kind"),
        ("kubectl apply -Rl app=x -f ok.yaml", "write -f, -k and -R on their own"),
        ("NS=default; kubectl apply -f ok.yaml -n \"$NS\"", "with an expansion"),
    ];
    let mut script = Vec::new();
    for (n, (command, _)) in refused.iter().enumerate() {
        script.push(bash(&format!("k{n}"), command));
        script.push(text_reply("ok"));
    }
    // A selector written short keeps its value (`-ltier=frontend` names no file).
    script.push(bash("ok", "kubectl apply -f ok.yaml -ltier=frontend"));
    script.push(text_reply("ok"));
    let llm = FakeLlm::start(script);
    let path =
        format!("{}:{}", ws.path(".bin").display(), std::env::var("PATH").unwrap_or_default());
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[("PATH", &path)]);
    acp.initialize();
    let sid = acp.new_session(&ws.project());
    acp.call(
        "session/set_mode",
        serde_json::json!({"sessionId": sid, "modeId": "bypass_permissions"}),
    );
    for (n, (command, why)) in refused.iter().enumerate() {
        let (msgs, _) = acp.prompt(&sid, "deploy");
        assert!(asked(&msgs).is_empty(), "{command}: no question");
        let told = tool_result(&llm, 2 * n + 1);
        assert!(told.contains(why), "{command}: {told}");
        assert!(!ran.exists(), "{command}: kubectl never ran");
    }
    let (_, _) = acp.prompt(&sid, "deploy the other");
    let told = tool_result(&llm, 2 * refused.len() + 1);
    assert!(ran.exists(), "a compliant manifest goes on: {told}");
    // What runs applies a private copy of the files as judged, not the files themselves.
    let args = std::fs::read_to_string(&ran).unwrap();
    assert!(args.starts_with("apply -f ") && !args.contains("ok.yaml"), "{args}");
    assert!(args.trim().ends_with(" -ltier=frontend"), "the other options stay: {args}");
    let copy = args.trim().trim_start_matches("apply -f ").trim_end_matches(" -ltier=frontend");
    assert!(copy.starts_with(&ws.config().display().to_string()), "{args}");
    assert!(!Path::new(copy).exists(), "the copy is removed after the call");
    let sent = std::fs::read_to_string(ws.path("kubectl-ran.sent")).unwrap_or_default();
    assert!(sent.contains("name: ok"), "kubectl read the copy in its sandbox: {sent:?} {told}");
}

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy").join(name)
}

fn policy(ws: &Workspace, args: &[&str]) -> (i32, String, String) {
    let out = iac_code(ws).arg("policy").args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn policy_eval_judges_plans_of_the_three_clouds_with_the_bundled_pack() {
    let ws = Workspace::new("policy-eval");
    let cases = [
        (
            "aws",
            &[
                "aws_security_group.bastion opens port 22 to 0.0.0.0/0",
                "aws_iam_policy.admin allows every action",
            ][..],
            &[
                "aws_db_instance.orders (aws_db_instance) would be replaced",
                "aws_ebs_volume.scratch is stored unencrypted",
            ][..],
        ),
        (
            "google",
            &["google_compute_firewall.rdp opens port 3389 to 0.0.0.0/0"],
            &[
                "google_sql_database_instance.main (google_sql_database_instance) would be deleted",
                "google_storage_bucket.logs (google_storage_bucket) would be replaced",
            ],
        ),
        (
            "azure",
            &[
                "azurerm_network_security_rule.ssh opens port 22",
                "azurerm_role_definition.god allows every action",
            ],
            &[
                "azurerm_key_vault.secrets (azurerm_key_vault) would be deleted",
                "azurerm_mssql_database.app is stored unencrypted",
            ],
        ),
    ];
    for (cloud, denies, warns) in cases {
        let input = fixture(&format!("{cloud}.plan.json"));
        let (code, out, err) =
            policy(&ws, &["eval", "--input", input.to_str().unwrap(), "--format", "json"]);
        assert_eq!(code, 1, "{cloud}: {out}{err}");
        let found: Value = serde_json::from_str(out.trim()).unwrap();
        let texts = |key: &str| -> Vec<String> {
            found[key].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
        };
        let (deny, warn) = (texts("deny"), texts("warn"));
        assert_eq!(deny.len(), denies.len(), "{cloud}: {deny:?}");
        assert_eq!(warn.len(), warns.len(), "{cloud}: {warn:?}");
        for expected in denies {
            assert!(
                deny.iter().any(|d| d.starts_with(expected)),
                "{cloud}: {expected} in {deny:?}"
            );
        }
        for expected in warns {
            assert!(
                warn.iter().any(|w| w.starts_with(expected)),
                "{cloud}: {expected} in {warn:?}"
            );
        }
    }
    let clean = fixture("clean.plan.json");
    let (code, out, _) = policy(&ws, &["eval", "--input", clean.to_str().unwrap()]);
    assert_eq!((code, out.trim()), (0, "1 judged: 0 denied, 0 warnings"));
    // Switched off in the user's settings, a rule is silent.
    std::fs::create_dir_all(ws.config()).unwrap();
    let off = r#"{"policy": {"bundled": {"open_admin_ports": false, "iam_wildcard": false}}}"#;
    std::fs::write(ws.config().join("settings.json"), off).unwrap();
    let aws = fixture("aws.plan.json");
    let (code, out, _) = policy(&ws, &["eval", "--input", aws.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("WARN - "), "{out}");
}

#[test]
fn policy_eval_with_a_directory_test_and_list() {
    let ws = Workspace::new("policy-cli");
    ws.write("team/protect.rego", PROTECT);
    ws.write("team/protect_test.rego", "package main\n\ntest_denied if {\n  count(deny) == 1 with input as {\"resource_changes\": [{\"address\": \"terraform_data.protected\", \"change\": {\"actions\": [\"delete\"]}}]}\n}\n\ntest_wrong if {\n  count(deny) == 1 with input as {\"resource_changes\": []}\n}\n");
    ws.write("plan.json", r#"{"resource_changes": [{"address": "terraform_data.protected", "type": "terraform_data", "change": {"actions": ["delete"]}}]}"#);
    let (code, out, _) = policy(&ws, &["eval", "--input", "plan.json", "--policy", "team"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL - plan.json - terraform_data.protected must never be deleted"),
        "{out}"
    );
    let (code, out, _) = policy(&ws, &["test", "team"]);
    assert_eq!(code, 1, "one test fails: {out}");
    assert!(out.contains("PASS main.test_denied") && out.contains("FAIL main.test_wrong"), "{out}");
    let (code, out, _) = policy(&ws, &["test"]);
    assert_eq!(code, 0, "the bundled pack's tests pass: {out}");
    ws.write("team/bad.rego", "package main\n\ndeny[msg {\n");
    let (code, _, err) = policy(&ws, &["eval", "--input", "plan.json", "--policy", "team"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("bad.rego:3:"), "{err}");
    let (code, _, err) = policy(&ws, &["eval", "--input", "missing.json"]);
    assert_eq!(code, 2, "{err}");
    // list: the pack, the user's, the project's left out until approved.
    std::fs::create_dir_all(ws.config().join("policies")).unwrap();
    std::fs::write(ws.config().join("policies/tags.rego"), WARN_V0).unwrap();
    ws.write(".iac-code/settings.json", "{}");
    ws.write(".iac-code/policies/protect.rego", PROTECT);
    let (_, out, _) = policy(&ws, &["list"]);
    assert!(
        out.contains(
            "bundled\tbundled/kubernetes.rego\trules: privileged_container, host_path, latest_image"
        ),
        "{out}"
    );
    assert!(out.contains("user\t") && out.contains("policies/tags.rego"), "{out}");
    assert!(out.contains("left out\t") && !out.contains("project\t"), "{out}");
    approve(&ws);
    let (_, out, _) = policy(&ws, &["list"]);
    assert!(out.contains("project\t") && out.contains(".iac-code/policies/protect.rego"), "{out}");
}

#[test]
fn a_chart_rendering_a_privileged_pod_is_refused_before_helm_installs_it() {
    // Not a required test: helm is optional on this machine kind (see ARCHITECTURE.md).
    let Some(_) = program("helm", Ci::Skips) else { return };
    let ws = Workspace::new("policy-helm");
    ws.write("chart/Chart.yaml", "apiVersion: v2\nname: web\nversion: 0.1.0\n");
    let pod = std::fs::read_to_string(fixture("privileged-pod.yaml")).unwrap();
    ws.write("chart/templates/pod.yaml", &pod);
    let script = vec![bash("h1", "helm install web ./chart"), text_reply("ok")];
    let (llm, mut acp, sid) = session(&ws, script, "bypass_permissions");
    let (msgs, _) = acp.prompt(&sid, "install");
    assert!(asked(&msgs).is_empty());
    let told = tool_result(&llm, 1);
    assert!(told.contains("Pod debug: container shell is privileged"), "{told}");
}
