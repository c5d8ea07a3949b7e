//! The policy engine: conftest's rule sets and message shapes, both Rego syntaxes, broken
//! files named by line, namespaces and switches, and the bundled pack's own tests.

use super::*;

fn file(name: &str, text: &str) -> PolicyFile {
    PolicyFile { name: name.to_string(), origin: Origin::Given, text: text.to_string() }
}

const PLAN: &str = r#"{"resource_changes": [
  {"address": "terraform_data.protected", "type": "terraform_data", "change": {"actions": ["delete"]}}
]}"#;

#[test]
fn both_syntaxes_and_every_rule_set_are_read() {
    let v1 = file(
        "v1.rego",
        "package main\n\ndeny contains msg if {\n  some rc in input.resource_changes\n  \
         \"delete\" in rc.change.actions\n  msg := sprintf(\"%s is deleted\", [rc.address])\n}\n\
         warn contains {\"msg\": \"a warning\"} if true\n",
    );
    let v0 = file(
        "v0.rego",
        "package main\n\nviolation[msg] {\n  rc := input.resource_changes[_]\n  \
         rc.change.actions[_] == \"delete\"\n  msg := concat(\" \", [\"old:\", rc.address])\n}\n",
    );
    let policies = Policies::compile(&[v1, v0], &Settings::default());
    assert_eq!(policies.broken(), None);
    let findings = policies.evaluate(PLAN).expect("as written");
    assert_eq!(
        findings.deny,
        ["terraform_data.protected is deleted", "old: terraform_data.protected"]
    );
    assert_eq!(findings.warn, ["a warning"]);
    let quiet = policies.evaluate(r#"{"resource_changes": []}"#).expect("as written");
    assert!(quiet.deny.is_empty(), "{quiet:?}");
}

#[test]
fn a_broken_policy_names_its_file_and_line_and_judges_nothing() {
    let bad = file("team/bad.rego", "package main\n\ndeny contains msg if {\n  msg := \n}\n");
    let policies = Policies::compile(&[bad], &Settings::default());
    let why = policies.broken().expect("broken");
    assert!(why.starts_with("team/bad.rego:"), "{why}");
    assert!(why.contains(":4:") || why.contains(":5:"), "the line: {why}");
    assert_eq!(policies.evaluate(PLAN), Err(why));
}

#[test]
fn only_the_namespaces_chosen_count() {
    let other = file("o.rego", "package terraform.team\n\ndeny contains \"no\" if true\n");
    let default = Policies::compile(std::slice::from_ref(&other), &Settings::default());
    assert!(default.evaluate("{}").expect("as written").deny.is_empty(), "package main by default");
    let settings =
        settings_of(&serde_json::json!({"namespaces": ["terraform.team"]}), &Settings::default())
            .expect("as written");
    let chosen = Policies::compile(&[other], &settings);
    assert_eq!(chosen.evaluate("{}").expect("as written").deny, ["no"]);
}

#[test]
fn bad_settings_are_refused_with_the_key() {
    let base = Settings::default();
    for (value, says) in [
        (serde_json::json!({"bundled": {"no_such": false}}), "no rule no_such"),
        (serde_json::json!({"namespaces": ["a b"]}), "not a package name"),
        (serde_json::json!({"other": 1}), "policy.other"),
        (serde_json::json!([]), "expected an object"),
    ] {
        let err = settings_of(&value, &base).expect_err("refused");
        assert!(err.contains(says), "{err}");
    }
    let off = settings_of(&serde_json::json!({"bundled": {"iam_wildcard": false}}), &base);
    assert_eq!(off.expect("as written").off, ["iam_wildcard"]);
}

fn pack(settings: &Settings, tests: bool) -> Policies {
    let files: Vec<PolicyFile> = PACK
        .iter()
        .flat_map(|b| {
            let mut v = vec![file(&format!("{}.rego", b.file), b.rego)];
            if tests {
                v.push(file(&format!("{}_test.rego", b.file), b.test));
            }
            v
        })
        .map(|mut f| {
            f.origin = Origin::Bundled;
            f
        })
        .collect();
    Policies::compile(&files, settings)
}

#[test]
fn the_bundled_pack_passes_its_own_tests() {
    let policies = pack(&Settings::default(), true);
    assert_eq!(policies.broken(), None);
    let results = policies.test();
    assert!(results.len() >= 20, "{results:?}");
    let failed: Vec<_> = results.iter().filter(|(_, r)| r.is_err()).collect();
    assert!(failed.is_empty(), "{failed:?}");
}

#[test]
fn a_failing_test_is_reported() {
    let t =
        file("t_test.rego", "package main\n\ntest_fails if {\n  1 == 2\n}\n\ntest_ok if true\n");
    let results = Policies::compile(&[t], &Settings::default()).test();
    let names: Vec<(&str, bool)> = results.iter().map(|(n, r)| (n.as_str(), r.is_ok())).collect();
    assert_eq!(names, [("main.test_fails", false), ("main.test_ok", true)]);
}

#[test]
fn a_bundled_rule_switched_off_is_silent() {
    let pod = r#"{"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "image": "nginx", "securityContext": {"privileged": true}}]}}"#;
    let on = pack(&Settings::default(), false).evaluate(pod).expect("as written");
    assert_eq!(on.deny, ["Pod p: container c is privileged"]);
    assert_eq!(on.warn, ["Pod p: container c runs nginx without a tag (latest)"]);
    let settings = settings_of(
        &serde_json::json!({"bundled": {"privileged_container": false}}),
        &Settings::default(),
    )
    .expect("as written");
    let off = pack(&settings, false).evaluate(pod).expect("as written");
    assert!(off.deny.is_empty(), "{off:?}");
    assert_eq!(off.warn.len(), 1, "the other rules still hold");
}
