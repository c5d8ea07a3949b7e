//! The OS sandbox's set-up cost per command: `iac-code sandbox run -- true` in the sealed
//! sandbox and with `--profile cloud-read`, beside `sandbox run --none -- true` (the same
//! supervisor, no sandbox), in a small project (a `main.tf`, a `terraform.tfstate`, a
//! `.git`) and, informationally, in a workspace of 5,000 files (the sandbox walks the
//! workspace for state and protected paths). Run with `cargo bench --bench sandbox`
//! (`IAC_CODE_BIN` measures another binary). Prints medians and p99s, then a summary
//! table against the target (set-up ≤ 5 ms per command, median); a miss never fails the
//! run, and a host without a usable sandbox only gets the figures without it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[allow(dead_code)]
#[path = "support/summary.rs"]
mod summary;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 200;
const WARM_UP: usize = 5;
const BIG_FILES: usize = 5_000;

/// The binary measured: `IAC_CODE_BIN`, or the one this bench is built with.
fn binary() -> PathBuf {
    std::env::var_os("IAC_CODE_BIN")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_iac-code")), PathBuf::from)
}

/// A throw-away HOME, configuration directory and the projects, under the temp dir.
struct Scratch {
    root: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let root =
            std::env::temp_dir().join(format!("iac-code-bench-sandbox-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["home", "config", "small/.git", "big/.git"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for project in ["small", "big"] {
            let dir = root.join(project);
            std::fs::write(dir.join("main.tf"), "resource \"terraform_data\" \"a\" {}\n").unwrap();
            std::fs::write(dir.join("terraform.tfstate"), "{\"version\": 4}\n").unwrap();
            std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        }
        // 50 modules of 100 files each: nothing in them to protect, only entries to walk.
        for module in 0..BIG_FILES / 100 {
            let dir = root.join(format!("big/modules/m{module:02}"));
            std::fs::create_dir_all(&dir).unwrap();
            for file in 0..100 {
                std::fs::write(dir.join(format!("f{file:03}.tf")), "# -\n").unwrap();
            }
        }
        Scratch { root }
    }

    fn command(&self, bin: &Path, project: &str, args: &[&str]) -> Command {
        let mut command = Command::new(bin);
        command
            .args(args)
            .current_dir(self.root.join(project))
            .env("HOME", self.root.join("home"))
            .env("IAC_CODE_CONFIG_DIR", self.root.join("config"))
            .stdin(Stdio::null());
        command
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// One way to run `true`: its label, its `sandbox run` arguments and the project.
struct Case {
    label: &'static str,
    args: &'static [&'static str],
    project: &'static str,
    times: Vec<Duration>,
}

impl Case {
    fn new(label: &'static str, args: &'static [&'static str], project: &'static str) -> Case {
        Case { label, args, project, times: Vec::with_capacity(RUNS) }
    }

    /// One run, timed; an error with what it printed if it did not succeed.
    fn run(&self, scratch: &Scratch, bin: &Path) -> Result<Duration, String> {
        let started = Instant::now();
        let out = scratch.command(bin, self.project, self.args).stdout(Stdio::null()).output();
        let elapsed = started.elapsed();
        match out {
            Ok(out) if out.status.success() => Ok(elapsed),
            Ok(out) => {
                Err(format!("{}: {}", out.status, String::from_utf8_lossy(&out.stderr).trim()))
            }
            Err(err) => Err(err.to_string()),
        }
    }

    fn ms(&self, p: f64) -> f64 {
        let mut sorted = self.times.clone();
        sorted.sort();
        sorted[((sorted.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e3
    }
}

/// Whether `sandbox status` says the sandbox is usable here; if not, why.
fn usable(scratch: &Scratch, bin: &Path) -> Result<(), String> {
    let out = scratch
        .command(bin, "small", &["sandbox", "status", "--json"])
        .output()
        .map_err(|err| format!("iac-code sandbox status: {err}"))?;
    let status: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|err| format!("iac-code sandbox status --json: {err}"))?;
    if status["usable"] == true {
        return Ok(());
    }
    let reason = status["reason"].as_str().unwrap_or("no reason given");
    Err(format!("the sandbox is not usable on this host ({reason})"))
}

fn main() {
    let bin = binary();
    println!("binary: {}", bin.display());
    let scratch = Scratch::new();
    let mut cases =
        vec![Case::new("no sandbox", &["sandbox", "run", "--none", "--", "true"], "small")];
    let sandboxed = usable(&scratch, &bin);
    if let Err(why) = &sandboxed {
        println!("{why}: the sandbox rows are skipped");
    } else {
        cases.extend([
            Case::new("sealed", &["sandbox", "run", "--", "true"], "small"),
            Case::new(
                "cloud-read",
                &["sandbox", "run", "--profile", "cloud-read", "--", "true"],
                "small",
            ),
            Case::new(
                "no sandbox, 5,000 files",
                &["sandbox", "run", "--none", "--", "true"],
                "big",
            ),
            Case::new("sealed, 5,000 files", &["sandbox", "run", "--", "true"], "big"),
        ]);
    }
    // Warm-up, which also checks that each case runs at all.
    let mut failed = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        for _ in 0..WARM_UP {
            if let Err(err) = case.run(&scratch, &bin) {
                println!("{} failed, skipped: {err}", case.label);
                failed.push(i);
                break;
            }
        }
    }
    for i in failed.into_iter().rev() {
        cases.remove(i);
    }
    // The cases in turns, so that all see the same machine.
    for _ in 0..RUNS {
        for case in &mut cases {
            if let Ok(elapsed) = case.run(&scratch, &bin) {
                case.times.push(elapsed);
            }
        }
    }
    cases.retain(|case| !case.times.is_empty());
    for case in &cases {
        println!(
            "{:<24} median {:6.2} ms, p99 {:6.2} ms ({} runs)",
            case.label,
            case.ms(0.5),
            case.ms(0.99),
            case.times.len()
        );
    }
    let find = |label: &str| cases.iter().find(|case| case.label == label);
    if let Some(none) = find("no sandbox") {
        summary::info("supervisor, no sandbox (median)", none.ms(0.5), "ms");
        summary::info("supervisor, no sandbox (p99)", none.ms(0.99), "ms");
    }
    if let (Some(none), Some(sealed)) = (find("no sandbox"), find("sealed")) {
        let (median, p99) = (sealed.ms(0.5) - none.ms(0.5), sealed.ms(0.99) - none.ms(0.99));
        println!("sandbox - none: median {median:.2} ms, p99 {p99:.2} ms");
        summary::info("sealed sandbox (median)", sealed.ms(0.5), "ms");
        summary::info("sealed sandbox (p99)", sealed.ms(0.99), "ms");
        summary::at_most("sandbox set-up per command (median)", median, 5.0, "ms");
        summary::info("sandbox set-up per command (p99)", p99, "ms");
    }
    if let (Some(none), Some(cloud)) = (find("no sandbox"), find("cloud-read")) {
        let (median, p99) = (cloud.ms(0.5) - none.ms(0.5), cloud.ms(0.99) - none.ms(0.99));
        println!("cloud-read - none: median {median:.2} ms, p99 {p99:.2} ms");
        summary::info("cloud-read sandbox (median)", cloud.ms(0.5), "ms");
        summary::info("cloud-read sandbox (p99)", cloud.ms(0.99), "ms");
        summary::info("cloud-read set-up per command (median)", median, "ms");
        summary::info("cloud-read set-up per command (p99)", p99, "ms");
    }
    if let (Some(none), Some(sealed)) =
        (find("no sandbox, 5,000 files"), find("sealed, 5,000 files"))
    {
        let (median, p99) = (sealed.ms(0.5) - none.ms(0.5), sealed.ms(0.99) - none.ms(0.99));
        println!("5,000 files, sandbox - none: median {median:.2} ms, p99 {p99:.2} ms");
        summary::info("set-up, 5,000-file workspace (median)", median, "ms");
        summary::info("set-up, 5,000-file workspace (p99)", p99, "ms");
        if let (Some(small_none), Some(small)) = (find("no sandbox"), find("sealed")) {
            let walk = median - (small.ms(0.5) - small_none.ms(0.5));
            println!("the walk of 5,000 more files: {walk:.2} ms (median)");
            summary::info("of which walking 5,000 more files (median)", walk, "ms");
        }
    }
    summary::print("sandbox");
}
