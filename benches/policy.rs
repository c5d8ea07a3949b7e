//! Policy as code: the bundled pack on a 500-resource plan (compiled, as the gate does for
//! each call, and evaluated; target <= 50 ms), and the policy step's share of the time from
//! the model's apply call to the question (the gate's plan and `show -json` with the real
//! terraform, offline, against the policies compiled and evaluated on that plan's JSON).
//! Run with `cargo bench --bench policy`; the share needs `terraform` on PATH. Prints
//! medians, then a summary table; a miss never fails the run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[allow(dead_code)]
#[path = "support/summary.rs"]
mod summary;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use iac_code::policy::{Origin, Policies, PolicyFile, Settings};
use serde_json::{Value, json};

const RUNS: usize = 9;

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn timed(f: impl Fn()) -> Duration {
    median(
        (0..RUNS)
            .map(|_| {
                let started = Instant::now();
                f();
                started.elapsed()
            })
            .collect(),
    )
}

/// A plan of `n` resources across the three clouds: creations, updates, deletions and
/// replacements, some of which the pack warns about or denies.
fn plan(n: usize) -> String {
    let kinds = [
        (
            "aws_security_group",
            json!({"ingress": [{"protocol": "tcp", "from_port": 443, "to_port": 443, "cidr_blocks": ["0.0.0.0/0"], "ipv6_cidr_blocks": null}]}),
        ),
        ("aws_db_instance", json!({"engine": "postgres", "storage_encrypted": true})),
        (
            "aws_iam_policy",
            json!({"policy": "{\"Statement\":[{\"Effect\":\"Allow\",\"Action\":\"s3:GetObject\",\"Resource\":\"*\"}]}"}),
        ),
        (
            "google_compute_firewall",
            json!({"direction": "INGRESS", "source_ranges": ["10.0.0.0/8"], "allow": [{"protocol": "tcp", "ports": ["22"]}]}),
        ),
        ("google_storage_bucket", json!({"location": "EU"})),
        (
            "azurerm_network_security_rule",
            json!({"direction": "Inbound", "access": "Allow", "source_address_prefix": "10.0.0.0/8", "destination_port_range": "3389"}),
        ),
        ("azurerm_managed_disk", json!({"disk_size_gb": 10})),
        ("aws_instance", json!({"ami": "ami-123", "instance_type": "t3.micro"})),
    ];
    let actions =
        [json!(["create"]), json!(["update"]), json!(["delete"]), json!(["delete", "create"])];
    let changes: Vec<Value> = (0..n)
        .map(|i| {
            let (kind, after) = &kinds[i % kinds.len()];
            let actions = &actions[(i / kinds.len()) % actions.len()];
            json!({
                "address": format!("{kind}.r{i}"), "mode": "managed", "type": kind,
                "name": format!("r{i}"), "provider_name": "registry.terraform.io/hashicorp/x",
                "change": {"actions": actions, "before": after, "after": after, "after_unknown": {}}
            })
        })
        .collect();
    json!({"format_version": "1.2", "terraform_version": "1.11.0", "resource_changes": changes})
        .to_string()
}

fn pack() -> Vec<PolicyFile> {
    iac_code::policy::PACK
        .iter()
        .map(|b| PolicyFile { name: b.file.into(), origin: Origin::Bundled, text: b.rego.into() })
        .collect()
}

fn pack_figures() {
    let input = plan(500);
    let files = pack();
    let settings = Settings::default();
    let findings = Policies::compile(&files, &settings).evaluate(&input).unwrap();
    println!(
        "500 resources ({} KiB of plan JSON): {} denials, {} warnings",
        input.len() >> 10,
        findings.deny.len(),
        findings.warn.len()
    );
    let compile = timed(|| {
        std::hint::black_box(Policies::compile(&files, &settings));
    });
    let compiled = Policies::compile(&files, &settings);
    let evaluate = timed(|| {
        std::hint::black_box(compiled.evaluate(&input).unwrap());
    });
    let both = timed(|| {
        std::hint::black_box(Policies::compile(&files, &settings).evaluate(&input).unwrap());
    });
    // What the gate does for each judged call: find the policies in force (settings, the
    // user's directory, the project's approval), compile them, evaluate.
    let root = std::env::temp_dir().join(format!("iac-bench-policy-{}", std::process::id()));
    let (cwd, config) = (root.join("project"), root.join("config"));
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(config.join("policies")).unwrap();
    std::fs::write(
        config.join("settings.json"),
        r#"{"policy": {"bundled": {"latest_image": false}}}"#,
    )
    .unwrap();
    let team = "package main\n\ndeny contains msg if {\n  some rc in input.resource_changes\n  \
                rc.address == \"x.y\"\n  msg := \"no\"\n}\n";
    std::fs::write(config.join("policies/team.rego"), team).unwrap();
    let gate = timed(|| {
        let policies = iac_code::config::policy_sources::in_force(&cwd, &config);
        std::hint::black_box(policies.evaluate(&input).unwrap());
    });
    let _ = std::fs::remove_dir_all(&root);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "compile {:.2} ms, evaluate {:.2} ms, both {:.2} ms; as the gate does it (policies \
         found, compiled, evaluated) {:.2} ms",
        ms(compile),
        ms(evaluate),
        ms(both),
        ms(gate)
    );
    summary::at_most(
        "the gate's policy step (in force + evaluate), 500 resources",
        ms(gate),
        50.0,
        "ms",
    );
    summary::info("bundled pack: compile", ms(compile), "ms");
    summary::info("bundled pack: evaluate, 500 resources", ms(evaluate), "ms");
    summary::at_most("bundled pack: compile + evaluate, 500 resources", ms(both), 50.0, "ms");
}

/// The gate's own steps with the real terraform: `plan -out` and `show -json` (what the
/// question waits for), then the policies on that JSON.
fn share_figures() {
    let found = std::env::var_os("PATH")
        .and_then(|p| std::env::split_paths(&p).map(|d| d.join("terraform")).find(|p| p.is_file()));
    if found.is_none() {
        println!("terraform is not on PATH: the policy step's share is not measured");
        return;
    }
    let dir = std::env::temp_dir().join(format!("iac-bench-policy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config: String = (0..20)
        .map(|i| format!("resource \"terraform_data\" \"r{i}\" {{ input = \"{i}\" }}\n"))
        .collect();
    std::fs::write(dir.join("main.tf"), config).unwrap();
    let tf = |args: &[&str]| {
        let out = Command::new("terraform")
            .args(args)
            .current_dir(&dir)
            .env("TF_IN_AUTOMATION", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    tf(&["init", "-input=false"]);
    let mut plan_times = Vec::new();
    let mut policy_times = Vec::new();
    let files = pack();
    for _ in 0..5 {
        let started = Instant::now();
        tf(&["plan", "-input=false", "-out=tfplan"]);
        let json = tf(&["show", "-json", "tfplan"]);
        plan_times.push(started.elapsed());
        let started = Instant::now();
        let text = String::from_utf8(json).unwrap();
        let policies = Policies::compile(&files, &Settings::default());
        std::hint::black_box(policies.evaluate(&text).unwrap());
        policy_times.push(started.elapsed());
    }
    let _ = std::fs::remove_dir_all(&dir);
    let (plan, policy) = (median(plan_times), median(policy_times));
    let share = policy.as_secs_f64() / (plan + policy).as_secs_f64() * 100.0;
    println!(
        "apply call -> question: plan and show {:.0} ms, policies {:.2} ms ({share:.2} %)",
        plan.as_secs_f64() * 1e3,
        policy.as_secs_f64() * 1e3
    );
    summary::info("gate: plan + show -json (20 terraform_data)", plan.as_secs_f64() * 1e3, "ms");
    summary::info("gate: policy step", policy.as_secs_f64() * 1e3, "ms");
    summary::at_most("gate: the policy step's share of call -> question", share, 10.0, "%");
}

fn main() {
    pack_figures();
    share_figures();
    summary::print("policy");
}
