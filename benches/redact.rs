//! Redaction of tool output (issue 33): the cost per MiB of scanning what a tool printed,
//! for text with no secret (target >= 200 MiB/s on one core, so redaction never shows in a
//! turn's latency), the same with 100 exact values known to the session, and text with a
//! secret every 4 KiB. Run with `cargo bench --bench redact` (`REDACT_PHASES=1` adds the
//! cost of the shape scan alone, with and without keyword lines). Prints medians, then a
//! summary table against the targets; a miss never fails the run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[allow(dead_code)]
#[path = "support/summary.rs"]
mod summary;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use iac_code::secret::{Policy, Vault};

const RUNS: usize = 7;
/// Bytes of tool output scanned per run.
const SIZE: usize = 8 << 20;

/// Lines of what infrastructure tools print: a plan, a pod listing, logs, a file listing,
/// with the words that wake the patterns (`key`, `token`, `://`) now and then.
const LINES: &[&str] = &[
    "  # aws_s3_bucket.logs[{n}] will be created",
    "  + resource \"aws_s3_bucket\" \"logs\" {\n      + bucket = \"acme-logs-{n}\"\n      + arn    = (known after apply)\n    }",
    "payments-api-7d9f8b6c5d-{n}   1/1     Running   0          3d4h   10.42.{n}.17   node-{n}",
    "2026-12-05T02:{n}:11Z INFO request handled method=GET path=/api/v1/orders status=200 duration=12ms",
    "-rw-r--r--  1 deploy deploy   {n} Dec  5 02:11 modules/network/main.tf",
    "      + tags = {\n          + \"Environment\" = \"production\"\n          + \"Team\" = \"platform\"\n        }",
    "backend \"s3\" { key = \"state/network/terraform.tfstate\" region = \"eu-west-1\" }",
    "Fetched https://registry.terraform.io/v1/providers/hashicorp/aws/{n}.0.0 in 120ms",
    "the token bucket refills every {n} ms; see docs/rate-limits.md for the algorithm",
    "Plan: {n} to add, 2 to change, 0 to destroy.",
];

fn text(secret_every: Option<usize>) -> String {
    let mut out = String::with_capacity(SIZE + 4096);
    let mut n = 0usize;
    let mut next_secret = secret_every.unwrap_or(usize::MAX);
    while out.len() < SIZE {
        let line = LINES[n % LINES.len()].replace("{n}", &(n % 97).to_string());
        out.push_str(&line);
        out.push('\n');
        if out.len() >= next_secret {
            out.push_str(&format!("db_password = \"Zq8mN3xB7vC2rT9y{n:08}\"\n"));
            next_secret += secret_every.unwrap_or(usize::MAX);
        }
        n += 1;
    }
    out
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

/// MiB/s of `vault.redact` over `text`.
fn throughput(vault: &Vault, text: &str) -> f64 {
    let runs = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            black_box(vault.redact(black_box(text)));
            started.elapsed()
        })
        .collect();
    (text.len() as f64 / (1 << 20) as f64) / median(runs).as_secs_f64()
}

fn main() {
    let clean = text(None);
    let vault = Vault::new(Arc::new(Policy::default()));
    let plain = throughput(&vault, &clean);
    let with_values = Vault::new(Arc::new(Policy::default()));
    for i in 0..100 {
        with_values.learn("terraform-sensitive", &format!("Xq{i:03}vB7nM2kL9pR4tW"));
    }
    let exact = throughput(&with_values, &clean);
    if std::env::var_os("REDACT_PHASES").is_some() {
        let time = |name: &str, f: &dyn Fn()| {
            let runs = (0..RUNS)
                .map(|_| {
                    let t = Instant::now();
                    f();
                    t.elapsed()
                })
                .collect();
            let mibs = (clean.len() as f64 / (1 << 20) as f64) / median(runs).as_secs_f64();
            println!("{name}: {mibs:.0} MiB/s");
        };
        time("strip_format", &|| {
            black_box(iac_code::secret::strip_format(&clean));
        });
        time("scan", &|| {
            let mut f = Vec::new();
            iac_code::secret::scan(&clean, &mut f);
            black_box(f);
        });
        let quiet: String = clean
            .lines()
            .filter(|l| !l.contains("key") && !l.contains("token") && !l.contains("://"))
            .collect::<Vec<_>>()
            .join("\n");
        let runs = (0..RUNS)
            .map(|_| {
                let t = Instant::now();
                let mut f = Vec::new();
                iac_code::secret::scan(&quiet, &mut f);
                black_box(f);
                t.elapsed()
            })
            .collect();
        println!(
            "scan without keywords: {:.0} MiB/s",
            (quiet.len() as f64 / (1 << 20) as f64) / median(runs).as_secs_f64()
        );
    }
    let dense = text(Some(4096));
    let secrets = throughput(&Vault::new(Arc::new(Policy::default())), &dense);
    let (redacted, tally) = with_values.redact(&dense);
    assert!(tally.count > 0 && redacted.len() < dense.len());
    println!(
        "{} MiB scanned: no secret {plain:.0} MiB/s; with 100 exact values {exact:.0} MiB/s; \
         a secret every 4 KiB {secrets:.0} MiB/s ({} replaced)",
        SIZE >> 20,
        tally.count
    );
    summary::at_least("no secret, one core", plain, 200.0, "MiB/s");
    summary::at_least("no secret, 100 exact values", exact, 200.0, "MiB/s");
    summary::info("a secret every 4 KiB", secrets, "MiB/s");
    summary::print("redact");
}
