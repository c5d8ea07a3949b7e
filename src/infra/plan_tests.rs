//! Tests of the plan summary, on plans Terraform 1.11 wrote (`tests/fixtures/plan`, see
//! its README) and on small hand-written JSON for what `terraform_data` cannot produce.

use serde_json::json;

use super::*;

const MIXED: &[u8] =
    include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/plan/mixed.json"));
const DESTROY: &[u8] =
    include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/plan/destroy.json"));
const CREATE_ONLY: &[u8] =
    include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/plan/create_only.json"));
const NO_CHANGES: &[u8] =
    include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/plan/no_changes.json"));
const LIFECYCLE: &[u8] =
    include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/plan/lifecycle.json"));

fn plan(bytes: &[u8]) -> PlanSummary {
    summarise(bytes).expect("a plan")
}

fn removal(address: &str, action: &str, reason: Option<&str>) -> Removal {
    Removal {
        address: address.into(),
        action: action.into(),
        reason: reason.map(str::to_string),
        previous_address: None,
    }
}

/// A minimal plan around the given resource changes, with anything else merged in.
fn hand(changes: serde_json::Value, extra: serde_json::Value) -> Vec<u8> {
    let mut doc =
        json!({"format_version": "1.2", "planned_values": {}, "resource_changes": changes});
    if let (Some(doc), Some(extra)) = (doc.as_object_mut(), extra.as_object()) {
        doc.extend(extra.clone());
    }
    doc.to_string().into_bytes()
}

fn rc(address: &str, actions: &[&str]) -> serde_json::Value {
    json!({"address": address, "mode": "managed", "change": {"actions": actions}})
}

#[test]
fn a_mixed_plan_counts_each_action_and_names_what_it_removes() {
    let s = plan(MIXED);
    assert_eq!((s.add, s.change, s.replace, s.destroy), (1, 1, 2, 1));
    assert_eq!((s.import, s.forget, s.read, s.outputs_changed), (0, 0, 0, 1));
    assert!(s.applyable && !s.errored);
    assert_eq!(s.terraform_version.as_deref(), Some("1.11.4"));
    assert_eq!(
        s.removals,
        [
            // `triggers_replace` is the resource's own attribute: Terraform calls it an
            // attribute that cannot be updated, not a trigger.
            removal(
                "terraform_data.b",
                "replace (destroy before create)",
                Some("cannot be updated in place")
            ),
            removal("terraform_data.c", "delete", Some("no longer in configuration")),
            // `lifecycle { replace_triggered_by, create_before_destroy }`.
            removal(
                "terraform_data.e",
                "replace (create before destroy)",
                Some("triggers changed")
            ),
        ]
    );
    assert!(s.drift.is_empty());
    assert_eq!(s.tier(), Tier::Destroy);
    assert_eq!(s.headline(), "Plan: 1 to add, 1 to change, 2 to replace, 1 to destroy");
}

#[test]
fn the_rendering_names_addresses_and_context_but_never_a_value() {
    let context = ["terraform workspace: prod (TF_WORKSPACE)".to_string()];
    for fixture in [MIXED, DESTROY, CREATE_ONLY, NO_CHANGES, LIFECYCLE] {
        let text = plan(fixture).render(&context);
        assert!(!text.contains("hunter2"), "{text}");
        // Other values of the fixtures: inputs, ids, import ids.
        for value in ["alpha-v", "bravo", "rev-", "echo", "imported-id", "web-"] {
            assert!(!text.contains(value), "{value} in {text}");
        }
        assert!(text.contains("terraform workspace: prod (TF\\_WORKSPACE)"), "{text}");
    }
    let text = plan(MIXED).render(&context);
    assert!(text.starts_with("**Plan: 1 to add, 1 to change, 2 to replace, 1 to destroy**"));
    for row in [
        "| `terraform_data.b` | replace (destroy before create) | cannot be updated in place |",
        "| `terraform_data.c` | delete | no longer in configuration |",
        "| `terraform_data.e` | replace (create before destroy) | triggers changed |",
    ] {
        assert!(text.contains(row), "{row} missing from {text}");
    }
    assert!(text.contains("1 output value(s) change"), "{text}");
    // Updated and created resources are counted, not listed.
    assert!(!text.contains("terraform_data.a") && !text.contains("terraform_data.d"), "{text}");
}

#[test]
fn a_destroy_plan_removes_everything_without_a_reason() {
    let s = plan(DESTROY);
    assert_eq!((s.add, s.change, s.replace, s.destroy), (0, 0, 0, 4));
    let addresses: Vec<&str> = s.removals.iter().map(|r| r.address.as_str()).collect();
    assert_eq!(
        addresses,
        ["terraform_data.a", "terraform_data.b", "terraform_data.c", "terraform_data.e"]
    );
    assert!(s.removals.iter().all(|r| r.action == "delete" && r.reason.is_none()));
    assert_eq!(s.tier(), Tier::Destroy);
    assert_eq!(s.headline(), "Plan: 0 to add, 0 to change, 0 to replace, 4 to destroy");
    assert!(s.render(&[]).contains("| `terraform_data.c` | delete | — |"));
}

#[test]
fn a_plan_that_only_creates_is_a_mutation_with_no_table() {
    let s = plan(CREATE_ONLY);
    assert_eq!((s.add, s.change, s.replace, s.destroy), (3, 0, 0, 0));
    assert!(s.removals.is_empty() && s.applyable);
    assert_eq!(s.tier(), Tier::Mutate);
    assert_eq!(s.headline(), "Plan: 3 to add, 0 to change, 0 to replace, 0 to destroy");
    let text = s.render(&[]);
    assert!(!text.contains('|') && !text.contains("Destroyed"), "{text}");
}

#[test]
fn a_plan_without_changes_says_so_and_is_not_applyable() {
    let s = plan(NO_CHANGES);
    assert_eq!(s.headline(), "No changes.");
    assert!(!s.applyable && s.removals.is_empty());
    assert_eq!(s.tier(), Tier::Mutate);
    assert!(s.render(&[]).contains("would not apply"));
    // An empty configuration: Terraform leaves resource_changes out.
    let empty = br#"{"format_version":"1.2","terraform_version":"1.11.4",
        "planned_values":{"root_module":{}},"applyable":false,"complete":true,"errored":false}"#;
    assert_eq!(plan(empty).headline(), "No changes.");
}

#[test]
fn imports_forgets_moves_taints_and_reads_are_told_apart() {
    let s = plan(LIFECYCLE);
    assert_eq!((s.add, s.change, s.replace, s.destroy), (1, 0, 3, 1));
    assert_eq!((s.import, s.forget, s.read), (1, 1, 1));
    let moved = Removal {
        previous_address: Some("terraform_data.old".into()),
        ..removal(
            "terraform_data.renamed",
            "replace (destroy before create)",
            Some("cannot be updated in place"),
        )
    };
    assert_eq!(
        s.removals,
        [
            removal(
                "terraform_data.keep",
                "replace (destroy before create)",
                Some("replacement requested")
            ),
            removal("terraform_data.n[1]", "delete", Some("count index removed")),
            moved,
            removal("terraform_data.sick", "replace (destroy before create)", Some("tainted")),
        ]
    );
    assert_eq!(
        s.headline(),
        "Plan: 1 to add, 0 to change, 3 to replace, 1 to destroy, 1 to import, 1 to forget"
    );
    let text = s.render(&[]);
    assert!(text.contains("| `terraform_data.renamed` (was `terraform_data.old`) |"), "{text}");
    assert!(text.contains("| `terraform_data.n[1]` | delete | count index removed |"), "{text}");
    assert!(text.contains("1 data source(s) read during apply"), "{text}");
    assert!(!text.contains("terraform_data.gone"), "forgotten, not removed: {text}");
}

#[test]
fn forgetting_alone_is_a_mutation_and_an_import_with_an_update_counts_twice() {
    let importing = json!({"address": "x.i", "mode": "managed",
        "change": {"actions": ["update"], "importing": {"id": "i-1"}}});
    let data = json!([
        {"address": "data.x.r", "mode": "data", "change": {"actions": ["read"]}},
        {"address": "data.x.gone", "mode": "data", "change": {"actions": ["delete"]}},
    ]);
    let mut changes = vec![rc("x.f", &["forget"]), importing];
    changes.extend(data.as_array().cloned().unwrap_or_default());
    let s = plan(&hand(json!(changes), json!({})));
    assert_eq!((s.change, s.import, s.forget, s.read, s.destroy), (1, 1, 1, 1, 0));
    assert_eq!(s.tier(), Tier::Mutate);
    assert!(s.applyable, "derived when the JSON has no applyable");
    assert_eq!(
        s.headline(),
        "Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy, 1 to import, 1 to forget"
    );
}

#[test]
fn drift_is_listed_with_its_actions_in_words() {
    let drift = json!({"resource_drift": [
        {"address": "aws_s3_bucket.logs", "mode": "managed", "change": {"actions": ["update"],
            "before": {"acl": "private"}, "after": {"acl": "public-read"}}},
        {"address": "aws_instance.web[\"a\"]", "mode": "managed",
            "change": {"actions": ["delete"]}},
        {"address": "x.same", "mode": "managed", "change": {"actions": ["no-op"]}},
    ]});
    let s = plan(&hand(json!([]), drift));
    assert_eq!(s.drift, ["aws_s3_bucket.logs (changed)", "aws_instance.web[\"a\"] (deleted)"]);
    let text = s.render(&[]);
    assert!(
        text.contains("Changed outside Terraform:\n\n- `aws_s3_bucket.logs` (changed)\n"),
        "{text}"
    );
    assert!(text.contains("- `aws_instance.web[\"a\"]` (deleted)"), "{text}");
    assert!(!text.contains("public-read") && !text.contains("private"), "{text}");
}

#[test]
fn unknown_reasons_pass_through_and_unknown_actions_are_refused() {
    let mut change = rc("x.y", &["delete"]);
    change["action_reason"] = json!("delete_because_of_the_moon");
    let s = plan(&hand(json!([change]), json!({})));
    assert_eq!(s.removals[0].reason.as_deref(), Some("delete_because_of_the_moon"));
    let err =
        summarise(&hand(json!([rc("x.y", &["obliterate"])]), json!({}))).expect_err("unknown");
    assert!(err.contains("x.y") && err.contains("obliterate"), "{err}");
}

#[test]
fn what_is_not_a_plan_is_a_clear_error() {
    let cases: &[(&[u8], &str)] = &[
        (b"", "not JSON"),
        (b"Error: Failed to load plan", "not JSON"),
        (b"[1, 2]", "not an object"),
        (b"{}", "no format_version"),
        (br#"{"format_version": 1.2, "planned_values": {}}"#, "no format_version"),
        (br#"{"format_version": "1.0"}"#, "no planned_values"),
        (br#"{"format_version": "1.0", "values": {}}"#, "no planned_values"),
        (br#"{"format_version": "2.0", "planned_values": {}}"#, "unsupported"),
        (br#"{"format_version": "1.2", "planned_values": []}"#, "no planned_values"),
    ];
    for (input, expected) in cases {
        let err = summarise(input).expect_err("not a plan");
        assert!(err.contains(expected), "{:?}: {err}", String::from_utf8_lossy(input));
    }
}

#[test]
fn wrong_types_are_errors_not_panics() {
    let bad = [
        hand(json!({"a": 1}), json!({})),
        hand(json!([1]), json!({})),
        hand(json!([{"mode": "managed", "change": {"actions": ["create"]}}]), json!({})),
        hand(json!([{"address": "x.y", "change": {"actions": "create"}}]), json!({})),
        hand(json!([{"address": "x.y", "change": {"actions": [1]}}]), json!({})),
        hand(json!([{"address": "x.y", "change": {"actions": []}}]), json!({})),
        hand(json!([{"address": "x.y"}]), json!({})),
        hand(json!([]), json!({"applyable": "yes"})),
        hand(json!([]), json!({"errored": 1})),
        hand(json!([]), json!({"output_changes": []})),
        hand(json!([]), json!({"output_changes": {"o": {"actions": null}}})),
        hand(json!([]), json!({"resource_drift": {"x": 1}})),
        hand(json!([]), json!({"resource_drift": [{"address": 3}]})),
    ];
    for input in bad {
        assert!(summarise(&input).is_err(), "{}", String::from_utf8_lossy(&input));
    }
    // Cut anywhere, a real plan is an error, never a panic.
    for end in (0..MIXED.len()).step_by(37) {
        assert!(summarise(&MIXED[..end]).is_err());
    }
}

#[test]
fn control_characters_and_pipes_cannot_break_the_markdown() {
    let nasty = "aws_s3_bucket.x[\"a|b\n| evil | row |\u{1b}[31m\u{7}`tick\u{202e}\"]";
    let s = PlanSummary {
        destroy: 2,
        removals: vec![
            removal(nasty, "delete", Some("why|\r\nnot\u{0}")),
            removal("x.y[\"back\\\\|slash\"]", "delete", None),
        ],
        drift: vec![format!("{nasty} (deleted)")],
        ..PlanSummary::default()
    };
    let text = s.render(&["kube\ncontext: *prod*\u{1b}]0;title\u{7}".to_string()]);
    assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
    assert!(!text.contains('\u{202e}'), "{text:?}");
    assert!(text.contains("- kube context: \\*prod\\*\\]0;title\n"), "{text:?}");
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(rows.len(), 4, "{text}");
    for row in rows {
        // Exactly four cell delimiters: a pipe preceded by an even run of backslashes.
        let mut delimiters = 0;
        let mut backslashes = 0;
        for c in row.chars() {
            if c == '|' && backslashes % 2 == 0 {
                delimiters += 1;
            }
            backslashes = if c == '\\' { backslashes + 1 } else { 0 };
        }
        assert_eq!(delimiters, 4, "{row}");
    }
    assert!(text.contains("| ``aws_s3_bucket.x"), "a longer fence around a backtick: {text}");
}

#[test]
fn long_lists_are_bounded() {
    let changes: Vec<_> = (0..120).map(|i| rc(&format!("x.y[{i}]"), &["delete"])).collect();
    let s = plan(&hand(json!(changes), json!({})));
    assert_eq!((s.destroy, s.removals.len()), (120, 120));
    let text = s.render(&[]);
    assert_eq!(text.lines().filter(|l| l.starts_with("| `x.y[")).count(), 50);
    assert!(text.contains("… and 70 more"), "{text}");
    let long = "m".repeat(5000);
    let s = PlanSummary {
        destroy: 1,
        removals: vec![removal(&long, "delete", None)],
        ..Default::default()
    };
    assert!(s.render(&[]).len() < 1000);
}
