//! The bundled skills' examples, run for real and offline: the plan-review stack plans the
//! changes the skill shows (and goes stale as it says), the refactor plans zero destroys
//! (and would not without its `moved` blocks), the module's `terraform test` passes (and
//! fails when a validation goes), the Kubernetes example renders and meets the checklist,
//! the chart's values schema rejects bad values, the playbook is idempotent and keeps its
//! secret out of the diff. Each program missing from PATH skips its part with a message.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::bundled_skills::{ROOT, files};
use crate::support::skip::Ci;
use crate::support::workspace::Workspace;

/// `name` on PATH, or `None` after saying the test skips it: terraform and kubectl fail
/// under CI (this machine kind has both, and `.ci/run` requires terraform), the other
/// programs are optional there.
#[track_caller]
fn program(name: &str) -> Option<PathBuf> {
    let ci = if matches!(name, "terraform" | "kubectl") { Ci::Fails } else { Ci::Skips };
    crate::support::skip::program(name, ci)
}

fn skill_file(skill: &str, rel: &str) -> PathBuf {
    Path::new(ROOT).join(skill).join(rel)
}

fn copy_dir(from: &Path, to: &Path) {
    for file in files(from) {
        let dest = to.join(file.strip_prefix(from).unwrap());
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&file, &dest).unwrap();
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs terraform in `dir` with its own data dir, no prompts, no update checks.
fn tf_run(ws: &Workspace, dir: &Path, args: &[&str]) -> Output {
    Command::new("terraform")
        .args(args)
        .current_dir(dir)
        .env("TF_DATA_DIR", ws.root().join("tf-data"))
        .env("TF_IN_AUTOMATION", "1")
        .env("CHECKPOINT_DISABLE", "1")
        .env_remove("TF_CLI_CONFIG_FILE")
        .output()
        .expect("terraform runs")
}

fn tf(ws: &Workspace, dir: &Path, args: &[&str]) -> String {
    let out = tf_run(ws, dir, args);
    assert!(out.status.success(), "terraform {args:?}: {}{}", text(&out.stderr), text(&out.stdout));
    text(&out.stdout)
}

/// `jq ARGS` over `input`: exit status and stdout, or `None` without jq.
fn jq(args: &[&str], input: &str) -> Option<(bool, String)> {
    program("jq")?;
    let mut child = Command::new("jq")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    Some((out.status.success(), text(&out.stdout)))
}

/// Each resource change of a plan's JSON: actions, reason, replace paths, previous address.
fn changes(plan: &str) -> BTreeMap<String, (Vec<String>, Value, Value, Value)> {
    let plan: Value = serde_json::from_str(plan).unwrap();
    let mut out = BTreeMap::new();
    for rc in plan["resource_changes"].as_array().unwrap() {
        let actions = rc["change"]["actions"].as_array().unwrap();
        let actions = actions.iter().map(|a| a.as_str().unwrap().to_string()).collect();
        let reason = rc["action_reason"].clone();
        let paths = rc["change"]["replace_paths"].clone();
        let previous = rc["previous_address"].clone();
        out.insert(rc["address"].as_str().unwrap().to_string(), (actions, reason, paths, previous));
    }
    out
}

#[test]
fn plan_review_example_plans_what_the_skill_shows() {
    let Some(_) = program("terraform") else { return };
    let ws = Workspace::new("skill-plan-review");
    let dir = ws.project();
    copy_dir(&skill_file("terraform-plan-review", "references/example"), &dir);
    tf(&ws, &dir, &["init", "-input=false"]);
    tf(&ws, &dir, &["apply", "-auto-approve", "-input=false"]);
    tf(&ws, &dir, &["plan", "-input=false", "-var", "release=2", "-out=tfplan"]);
    let json = tf(&ws, &dir, &["show", "-json", "tfplan"]);
    let c = changes(&json);
    assert_eq!(c["terraform_data.app"].0, ["update"]);
    assert_eq!(c["terraform_data.db"].0, ["delete", "create"]);
    assert_eq!(c["terraform_data.db"].1, "replace_because_cannot_update");
    assert_eq!(c["terraform_data.db"].2, serde_json::json!([["triggers_replace"]]));
    assert_eq!(c["terraform_data.cache[0]"].0, ["delete"]);
    assert_eq!(c["terraform_data.cache[0]"].1, "delete_because_count_index");
    assert_eq!(c["terraform_data.queue[0]"].0, ["create"]);
    assert_eq!(c["terraform_data.queue[0]"].1, Value::Null);
    let plan: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(plan["output_changes"]["connection_string"]["after_sensitive"], true);
    let secret = "example-not-a-real-secret";
    assert!(json.contains(secret), "the raw plan JSON holds the secret: the filter matters");

    let skill = std::fs::read_to_string(skill_file("terraform-plan-review", "SKILL.md")).unwrap();
    let filter = skill_file("terraform-plan-review", "scripts/plan-summary.jq");
    if let Some((ok, summary)) = jq(&["-r", "-f", filter.to_str().unwrap()], &json) {
        assert!(ok, "the summary filter fails: {summary}");
        assert!(!summary.contains(secret), "the summary prints the secret:\n{summary}");
        let lines: Vec<&str> = summary.lines().collect();
        assert!(lines[0].starts_with("terraform 1.") && lines[0].ends_with("complete: true"));
        assert_eq!(lines.len(), 7, "{summary}");
        for line in &lines[1..] {
            assert!(skill.contains(line), "SKILL.md does not show the real line: {line}");
        }
    }

    // The state moves on under the saved plan: applying it is refused, as the skill says.
    tf(&ws, &dir, &["apply", "-auto-approve", "-input=false", "-var", "release=2"]);
    let stale = tf_run(&ws, &dir, &["apply", "-input=false", "-no-color", "tfplan"]);
    assert!(!stale.status.success(), "a stale plan was applied");
    let said = "Saved plan is stale";
    assert!(text(&stale.stderr).contains(said), "{}", text(&stale.stderr));
    assert!(skill.contains(said), "SKILL.md does not name terraform's message");
}

/// `text` without its `moved { ... }` blocks.
fn without_moved(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("moved {") {
            inside = true;
        } else if inside && line == "}" {
            inside = false;
        } else if !inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[test]
fn safe_refactor_example_plans_zero_destroys() {
    let Some(_) = program("terraform") else { return };
    let ws = Workspace::new("skill-safe-refactor");
    let dir = ws.project();
    let example = skill_file("terraform-safe-refactor", "references/example");
    copy_dir(&example.join("before"), &dir);
    tf(&ws, &dir, &["init", "-input=false"]);
    tf(&ws, &dir, &["apply", "-auto-approve", "-input=false"]);
    std::fs::remove_file(dir.join("main.tf")).unwrap();
    copy_dir(&example.join("after"), &dir);
    tf(&ws, &dir, &["init", "-input=false"]);
    tf(&ws, &dir, &["plan", "-input=false", "-out=tfplan"]);
    let json = tf(&ws, &dir, &["show", "-json", "tfplan"]);
    let c = changes(&json);
    for (address, (actions, reason, ..)) in &c {
        assert!(!actions.iter().any(|a| a == "delete"), "{address}: {actions:?} ({reason})");
        assert!(!actions.iter().any(|a| a == "update"), "{address}: updated by a pure move");
    }
    let moves: BTreeMap<&str, &str> =
        c.iter().filter_map(|(a, (.., prev))| prev.as_str().map(|p| (p, a.as_str()))).collect();
    let expected = BTreeMap::from([
        ("terraform_data.web", "module.app.terraform_data.this"),
        ("terraform_data.worker[0]", "terraform_data.worker[\"blue\"]"),
        ("terraform_data.worker[1]", "terraform_data.worker[\"green\"]"),
    ]);
    assert_eq!(moves, expected);
    assert_eq!(c["terraform_data.legacy"].0, ["forget"]);
    let plan: Value = serde_json::from_str(&json).unwrap();
    let rcs = plan["resource_changes"].as_array().unwrap();
    let adopted = rcs.iter().find(|rc| rc["address"] == "terraform_data.adopted").unwrap();
    assert_eq!(adopted["change"]["importing"]["id"], "adopted-1");

    let filter = skill_file("terraform-safe-refactor", "scripts/zero-destroy.jq");
    let args = ["-e", "-r", "-f", filter.to_str().unwrap()];
    if let Some((ok, said)) = jq(&args, &json) {
        assert!(ok && said.ends_with("true\n") && !said.contains("DESTROYS"), "{said}");
        assert_eq!(said.matches("moves ").count(), 3, "{said}");
    }

    // The proof can fail: the same refactor without its moved blocks destroys.
    let main = std::fs::read_to_string(dir.join("main.tf")).unwrap();
    std::fs::write(dir.join("main.tf"), without_moved(&main)).unwrap();
    tf(&ws, &dir, &["plan", "-input=false", "-out=bare"]);
    let json = tf(&ws, &dir, &["show", "-json", "bare"]);
    let lost = changes(&json).values().filter(|(a, ..)| a.iter().any(|a| a == "delete")).count();
    assert_eq!(lost, 3, "without moved blocks the web and worker objects are destroyed");
    if let Some((ok, said)) = jq(&args, &json) {
        assert!(!ok && said.matches("DESTROYS").count() == 3, "{said}");
    }
}

#[test]
fn module_example_passes_terraform_test() {
    let Some(_) = program("terraform") else { return };
    let ws = Workspace::new("skill-module");
    let dir = ws.project();
    copy_dir(&skill_file("terraform-module", "references/example"), &dir);
    let tests = std::fs::read_to_string(dir.join("tests/service.tftest.hcl")).unwrap();
    let runs = tests.matches("\nrun \"").count();
    assert!(tests.contains("expect_failures") && runs >= 5, "{runs} runs");
    tf(&ws, &dir, &["init", "-input=false"]);
    tf(&ws, &dir, &["validate", "-no-color"]);
    let out = tf(&ws, &dir, &["test", "-no-color"]);
    assert!(out.contains(&format!("{runs} passed, 0 failed")), "{out}");

    // With a name rule that takes anything, its expect_failures run fails.
    let vars = std::fs::read_to_string(dir.join("variables.tf")).unwrap();
    let rule = "condition     = can(regex(\"^[a-z][a-z0-9-]{2,31}$\", var.name))";
    assert!(vars.contains(rule), "the name's validation changed: update this test");
    std::fs::write(
        dir.join("variables.tf"),
        vars.replace(rule, "condition     = length(var.name) > 0"),
    )
    .unwrap();
    let out = tf_run(&ws, &dir, &["test", "-no-color"]);
    assert!(!out.status.success(), "terraform test passed without the validation");
    let said = text(&out.stdout);
    assert!(said.contains("run \"rejects_a_bad_name\"... fail"), "{said}");
}

#[test]
fn shipped_terraform_files_are_formatted() {
    let Some(_) = program("terraform") else { return };
    let ws = Workspace::new("skill-fmt");
    copy_dir(Path::new(ROOT), &ws.project());
    let hcl = files(&ws.project())
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(".tf") || p.to_string_lossy().ends_with(".hcl"))
        .count();
    assert!(hcl >= 8, "only {hcl} terraform files shipped");
    let out = tf_run(&ws, &ws.project(), &["fmt", "-check", "-recursive", "-no-color"]);
    assert!(out.status.success(), "not formatted:\n{}", text(&out.stdout));
}

#[test]
fn kubernetes_example_renders_offline_and_meets_the_checklist() {
    let example = skill_file("kubernetes-review", "references/example");
    let rendered = match program("kubectl") {
        Some(_) => {
            let out = Command::new("kubectl")
                .args(["kustomize", example.to_str().unwrap()])
                .env("KUBECONFIG", "/nonexistent/kubeconfig")
                .output()
                .unwrap();
            assert!(out.status.success(), "kubectl kustomize: {}", text(&out.stderr));
            let rendered = text(&out.stdout);
            for doc in rendered.split("\n---\n").filter(|d| !d.contains("kind: Namespace")) {
                assert!(doc.contains("namespace: billing"), "no namespace in:\n{doc}");
            }
            rendered
        }
        None => files(&example).iter().map(|f| std::fs::read_to_string(f).unwrap()).collect(),
    };
    for must in [
        "runAsNonRoot: true",
        "readOnlyRootFilesystem: true",
        "allowPrivilegeEscalation: false",
        "- ALL",
        "readinessProbe:",
        "livenessProbe:",
        "startupProbe:",
        "requests:",
        "limits:",
        "kind: PodDisruptionBudget",
        "type: RuntimeDefault",
    ] {
        assert!(rendered.contains(must), "the example lacks {must}");
    }
    let images: Vec<&str> = rendered.lines().filter(|l| l.trim().starts_with("image:")).collect();
    assert!(!images.is_empty());
    for image in images {
        assert!(image.contains("@sha256:") && !image.contains(":latest"), "{image}");
    }
}

/// `values.yaml` as JSON through yq (either kind), or `None`.
fn yaml_as_json(file: &Path) -> Option<Value> {
    program("yq")?;
    for args in [&["-o=json", "."][..], &["."][..]] {
        let out = Command::new("yq").args(args).arg(file).output().ok()?;
        if let Ok(value) = serde_json::from_slice(&out.stdout) {
            return Some(value);
        }
    }
    None
}

#[test]
fn chart_values_schema_rejects_bad_values() {
    let chart = skill_file("helm-chart", "references/example-chart");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(chart.join("values.schema.json")).unwrap())
            .unwrap();
    let schema = jsonschema::draft7::new(&schema).expect("the values schema compiles");
    let good = serde_json::json!({
        "replicaCount": 3,
        "image": {"repository": "registry.example.com/api", "tag": "1.4.2", "digest": ""},
        "service": {"port": 80},
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
        "existingSecret": "api-database"
    });
    assert!(schema.is_valid(&good));
    let bad = [
        ("/replicaCount", serde_json::json!("three")),
        ("/image/tag", serde_json::json!("latest")),
        ("/image/digest", serde_json::json!("sha256:short")),
        ("/replicaCont", serde_json::json!(3)),
    ];
    for (pointer, value) in bad {
        let mut values = good.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        values.pointer_mut(parent).unwrap()[key] = value;
        assert!(!schema.is_valid(&values), "accepted {pointer}");
    }
    if let Some(values) = yaml_as_json(&chart.join("values.yaml")) {
        let errors: Vec<String> = schema.iter_errors(&values).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "values.yaml breaks its schema: {errors:?}");
    }
    let Some(_) = program("helm") else { return };
    let helm = |args: &[&str]| Command::new("helm").args(args).arg(&chart).output().unwrap();
    let lint = helm(&["lint", "--strict"]);
    assert!(lint.status.success(), "{}{}", text(&lint.stdout), text(&lint.stderr));
    let out = helm(&["template", "api", "--namespace", "billing"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("kind: PodDisruptionBudget"));
    let out = helm(&["template", "api", "--set", "replicaCount=zero"]);
    assert!(!out.status.success() && text(&out.stderr).contains("replicaCount"));
}

/// Runs the example playbook on localhost; returns the recap's `changed=` and the output.
fn playbook(ws: &Workspace, app: &Path, extra: &[&str], env: &[(&str, &str)]) -> (u32, String) {
    let example = skill_file("ansible-check", "references/example");
    let out = Command::new("ansible-playbook")
        .args(["-i", "localhost,", "-c", "local"])
        .args(["-e", "ansible_python_interpreter={{ ansible_playbook_python }}"])
        .arg("-e")
        .arg(format!("app_root={}", app.display()))
        .args(extra)
        .arg(example.join("site.yml"))
        .env("ANSIBLE_HOME", ws.root().join("ansible"))
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_LOCALHOST_WARNING", "False")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let said = text(&out.stdout);
    assert!(out.status.success(), "ansible-playbook {extra:?}: {said}{}", text(&out.stderr));
    let recap = said.lines().rev().find(|l| l.starts_with("localhost")).unwrap_or_default();
    let changed = recap.split("changed=").nth(1).and_then(|r| r.split(' ').next());
    (changed.and_then(|n| n.parse().ok()).unwrap_or(u32::MAX), said)
}

#[test]
fn ansible_example_checks_cleanly_and_is_idempotent() {
    let Some(_) = program("ansible-playbook") else { return };
    let ws = Workspace::new("skill-ansible");
    let app = ws.root().join("app");
    playbook(&ws, &app, &["--syntax-check"], &[]);
    let (changed, said) = playbook(&ws, &app, &["--check", "--diff"], &[]);
    assert!(changed >= 3 && !app.exists(), "check mode changed something: {said}");
    let (changed, said) = playbook(&ws, &app, &[], &[]);
    assert!(changed >= 3, "the first run changed nothing: {said}");
    let (changed, said) = playbook(&ws, &app, &["--diff"], &[]);
    assert_eq!(changed, 0, "not idempotent: {said}");
    let rotated = [("APP_DB_PASSWORD", "rotated-example-value")];
    let (changed, said) = playbook(&ws, &app, &["--check", "--diff"], &rotated);
    assert_eq!(changed, 1, "{said}");
    assert!(!said.contains("rotated-example-value"), "the secret is in the diff: {said}");
    if program("ansible-lint").is_some() {
        copy_dir(&skill_file("ansible-check", "references/example"), &ws.project());
        let out = Command::new("ansible-lint")
            .args(["--offline", "site.yml"])
            .current_dir(ws.project())
            .env("ANSIBLE_HOME", ws.root().join("ansible"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    }
}
