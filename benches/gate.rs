//! The infrastructure gate: classifying a command (parse, unwrap, tiers, the lenient scan)
//! and the plan shown inside an apply's question. Run with `cargo bench --bench gate`; the
//! plan figures need `terraform` on PATH (its built-in `terraform_data`, offline). Prints
//! medians, then a summary table against the targets (classify < 20 µs for a 200-character
//! pipeline); a miss never fails the run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[allow(dead_code)]
#[path = "support/summary.rs"]
mod summary;

use std::hint::black_box;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A realistic 200-character pipeline: a plan, its log, a filter, a kubectl listing.
const PIPELINE: &str = "cd infra && TF_LOG=warn terraform plan -input=false -var-file=prod.tfvars \
    -out=tfplan 2>&1 | tee plan.log | grep -E 'Plan:|Error' && kubectl get pods -n payments \
    -o wide | head -20";
/// What a model writes to hide a destroy.
const HIDDEN: &str = "t=terraform; env X=1 bash -c \"$t -chdir=infra destroy -auto-approve\" || \
    find . -name '*.tf' -exec terraform destroy \\; | xargs -n1 echo";
const RUNS: usize = 7;
const CALLS: usize = 20_000;

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

/// The median cost of one call of `f`, over `RUNS` runs of `CALLS` calls.
fn per_call(f: impl Fn()) -> Duration {
    let runs = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..CALLS {
                f();
            }
            started.elapsed() / CALLS as u32
        })
        .collect();
    median(runs)
}

fn classify_figures() {
    let cwd = Path::new("/tmp");
    let env = |name: &str| (name == "HOME").then(|| "/root".to_string());
    println!("pipeline: {} characters", PIPELINE.len());
    let parse = per_call(|| {
        black_box(iac_code::shell::parse(black_box(PIPELINE)));
    });
    let classify = per_call(|| {
        black_box(iac_code::infra::classify(black_box(PIPELINE), cwd, &env));
    });
    let hidden = per_call(|| {
        black_box(iac_code::infra::classify(black_box(HIDDEN), cwd, &env));
    });
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "parse {:.2} µs, classify {:.2} µs, hidden {:.2} µs",
        us(parse),
        us(classify),
        us(hidden)
    );
    summary::at_most("classify a 200-char pipeline", us(classify), 20.0, "µs");
    summary::info("of which parsing", us(parse), "µs");
    summary::at_most("classify an obfuscated destroy", us(hidden), 20.0, "µs");
}

fn terraform(dir: &Path, args: &[&str]) -> Duration {
    let started = Instant::now();
    let status = Command::new("terraform")
        .args(args)
        .current_dir(dir)
        .env_remove("TF_CLI_CONFIG_FILE")
        .env("TF_IN_AUTOMATION", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("terraform runs");
    assert!(status.success(), "terraform {args:?}");
    started.elapsed()
}

fn plan_figures() {
    let has = Command::new("terraform").arg("version").stdout(Stdio::null()).status();
    if !has.is_ok_and(|s| s.success()) {
        println!("plan figures skipped: terraform is not on PATH");
        return;
    }
    let dir = std::env::temp_dir().join(format!("iac-code-bench-gate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = "resource \"terraform_data\" \"a\" { input = \"one\" }\n\
        resource \"terraform_data\" \"b\" {\n  input = \"two\"\n  triggers_replace = [\"v1\"]\n}\n\
        resource \"terraform_data\" \"c\" { input = \"three\" }\n";
    std::fs::write(dir.join("main.tf"), config).unwrap();
    terraform(&dir, &["init", "-input=false"]);
    terraform(&dir, &["apply", "-auto-approve", "-input=false"]);
    // The change an apply question shows: an update, a replacement, a delete, a create.
    let changed = config.replace("\"one\"", "\"uno\"").replace("v1", "v2").replace(
        "resource \"terraform_data\" \"c\" { input = \"three\" }",
        "resource \"terraform_data\" \"d\" {}",
    );
    std::fs::write(dir.join("main.tf"), changed).unwrap();
    let plain: Vec<Duration> =
        (0..RUNS).map(|_| terraform(&dir, &["plan", "-input=false"])).collect();
    let gate: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let plan = terraform(&dir, &["plan", "-input=false", "-out=bench.tfplan"]);
            let started = Instant::now();
            let out = Command::new("terraform")
                .args(["show", "-json", "bench.tfplan"])
                .current_dir(&dir)
                .env_remove("TF_CLI_CONFIG_FILE")
                .output()
                .unwrap();
            let summary = iac_code::infra::plan::summarise(&out.stdout).unwrap();
            black_box(summary.render(&["terraform workspace: default".to_string()]));
            plan + started.elapsed()
        })
        .collect();
    let json = Command::new("terraform")
        .args(["show", "-json", "bench.tfplan"])
        .current_dir(&dir)
        .env_remove("TF_CLI_CONFIG_FILE")
        .output()
        .unwrap()
        .stdout;
    let summarise = per_call_n(200, || {
        black_box(iac_code::infra::plan::summarise(black_box(&json)).unwrap());
    });
    let (plain, gate) = (median(plain), median(gate));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "terraform plan {:.1} ms; the gate's plan -out + show -json + summary {:.1} ms; \
         summarising the {} bytes of JSON {:.1} µs",
        ms(plain),
        ms(gate),
        json.len(),
        summarise.as_secs_f64() * 1e6
    );
    summary::info("terraform plan, 3 resources", ms(plain), "ms");
    summary::info("the gate's plan, show -json and summary", ms(gate), "ms");
    summary::info("extra time of the plan in the question", ms(gate) - ms(plain), "ms");
    summary::info("summarising the plan JSON", summarise.as_secs_f64() * 1e6, "µs");
    let _ = std::fs::remove_dir_all(&dir);
}

fn per_call_n(calls: usize, f: impl Fn()) -> Duration {
    let runs = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..calls {
                f();
            }
            started.elapsed() / calls as u32
        })
        .collect();
    median(runs)
}

fn main() {
    classify_figures();
    plan_figures();
    summary::print("gate");
}
