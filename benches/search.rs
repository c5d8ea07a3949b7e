//! grep and glob over a generated tree of 50,000 files, side by side with ripgrep (`rg`) in
//! the same run. Run with `cargo bench --bench search`; needs `rg` on PATH (Debian package
//! `ripgrep`). Prints medians and the ratio ours / rg, then a summary table
//! against the target (within 1.5x); a miss never fails the run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[allow(dead_code)]
#[path = "support/summary.rs"]
mod summary;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use iac_code::cancel::CancelToken;
use iac_code::tools::{Registry, ToolContext};
use serde_json::{Value, json};

const FILES: usize = 50_000;
const RUNS: usize = 7;

/// Builds the tree once: 500 directories of 100 files (Terraform, YAML, shell), about
/// 1 KiB each, some lines matching the search, plus an ignored directory.
fn tree() -> PathBuf {
    let root = std::env::temp_dir().join("iac-code-bench-tree");
    let done = root.join(".complete");
    if done.exists() {
        return root;
    }
    let _ = std::fs::remove_dir_all(&root);
    for d in 0..FILES / 100 {
        let dir = root.join(format!("modules/m{:03}/sub{}", d, d % 7));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            let n = d * 100 + f;
            let (name, body) = match f % 3 {
                0 => (format!("r{n}.tf"), terraform(n)),
                1 => (format!("k{n}.yaml"), yaml(n)),
                _ => (format!("s{n}.sh"), shell(n)),
            };
            std::fs::write(dir.join(name), body).unwrap();
        }
    }
    std::fs::create_dir_all(root.join("build")).unwrap();
    std::fs::write(root.join("build/ignored.tf"), terraform(0)).unwrap();
    std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
    std::fs::write(&done, "").unwrap();
    root
}

fn terraform(n: usize) -> String {
    let kind = if n.is_multiple_of(50) { "aws_s3_bucket" } else { "aws_instance" };
    let mut s = format!("resource \"{kind}\" \"r{n}\" {{\n  count = 1\n");
    for i in 0..30 {
        s.push_str(&format!("  tag_{i} = \"value {n} {i}\"\n"));
    }
    s.push_str("}\n");
    s
}

fn yaml(n: usize) -> String {
    let mut s = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{n}\ndata:\n");
    for i in 0..30 {
        s.push_str(&format!("  key{i}: \"value {n} {i}\"\n"));
    }
    s
}

fn shell(n: usize) -> String {
    let mut s = "#!/bin/sh\nset -eu\n".to_string();
    for i in 0..30 {
        s.push_str(&format!("echo \"step {n} {i}\"\n"));
    }
    s
}

fn ours(root: &Path, tool: &str, args: Value) -> Duration {
    let registry = Registry::builtin();
    let cancel = CancelToken::new();
    let progress = |_: String| {};
    let jobs = iac_code::child::Jobs::default();
    let ctx = ToolContext {
        images: false,
        cwd: root,
        extra: &[],
        cancel: &cancel,
        config_dir: Path::new("/nonexistent"),
        progress: &progress,
        delegate: None,
        targets: &[],
        network: &iac_code::tools::NoNetwork,
        jobs: &jobs,
        files: &iac_code::tools::NoClientTools,
        terminal: &|_: &str| {},
        prepared: None,
        skills: &iac_code::tools::NoSkills,
        sandbox: iac_code::sandbox::Run::Confined(iac_code::sandbox::Profile::Sealed),
        approved: &[],
    };
    let tool = registry.get(tool).unwrap();
    let started = Instant::now();
    // Judged first, as the permission gate does, then opened as judged.
    let invocation = tool.describe(&args, &ctx);
    let ctx = ToolContext { images: false, targets: &invocation.targets, ..ctx };
    let out = tool.run(&args, &ctx);
    let elapsed = started.elapsed();
    assert!(out.is_ok(), "{} failed", tool.name());
    elapsed
}

fn rg(root: &Path, args: &[&str]) -> Duration {
    let started = Instant::now();
    let status = Command::new("rg")
        .args(args)
        .current_dir(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("rg on PATH");
    let elapsed = started.elapsed();
    assert!(status.code().is_some_and(|c| c <= 1), "rg failed: {status:?}");
    elapsed
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn compare(name: &str, mut ours: impl FnMut() -> Duration, mut theirs: impl FnMut() -> Duration) {
    // Warm the page cache and both programs once.
    ours();
    theirs();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        a.push(ours());
        b.push(theirs());
    }
    let (a, b) = (median(a), median(b));
    println!(
        "{name}: iac-code {:.1} ms, rg {:.1} ms, ratio {:.2}x (medians of {RUNS})",
        a.as_secs_f64() * 1e3,
        b.as_secs_f64() * 1e3,
        a.as_secs_f64() / b.as_secs_f64()
    );
    summary::at_most(&format!("{name}: time / rg"), a.as_secs_f64() / b.as_secs_f64(), 1.5, "x");
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("run with `cargo bench --bench search` to measure");
        return;
    }
    if Command::new("rg").arg("--version").stdout(Stdio::null()).status().is_err() {
        println!("rg is not installed (apt-get install ripgrep); skipping the comparison");
        return;
    }
    let root = tree();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).to_string();
    let common = ["--hidden", "-g", "!.git", "-j", threads.as_str()];
    compare(
        "grep files_with_matches 'aws_s3_bucket'",
        || ours(&root, "grep", json!({"pattern": "aws_s3_bucket"})),
        || rg(&root, &[&common[..], &["-l", "aws_s3_bucket"]].concat()),
    );
    compare(
        "grep count 'value \\d+ 7\"' (every file matches)",
        || ours(&root, "grep", json!({"pattern": "value \\d+ 7\"", "output_mode": "count"})),
        || rg(&root, &[&common[..], &["-c", "value \\d+ 7\""]].concat()),
    );
    compare(
        "grep content, case-insensitive, glob *.tf",
        || {
            let args = json!({"pattern": "S3_BUCKET", "case_insensitive": true, "glob": "*.tf", "output_mode": "content"});
            ours(&root, "grep", args)
        },
        || rg(&root, &[&common[..], &["-n", "-i", "-g", "*.tf", "S3_BUCKET"]].concat()),
    );
    compare(
        "glob '**/*.tf' (16,700 matches, sorted by mtime)",
        || ours(&root, "glob", json!({"pattern": "**/*.tf"})),
        || rg(&root, &[&common[..], &["--files", "-g", "*.tf"]].concat()),
    );
    // One read_file call (judged, then opened beneath the cwd without symlinks), and the
    // same file read by std alone, for the cost of the race-free open.
    let file = walkdir_first_tf(&root);
    let rel = file.strip_prefix(&root).unwrap().display().to_string();
    let calls: Vec<Duration> =
        (0..201).map(|_| ours(&root, "read_file", json!({"path": rel.clone()}))).collect();
    let plain: Vec<Duration> = (0..201)
        .map(|_| {
            let started = Instant::now();
            let _ = std::fs::read_to_string(&file).unwrap();
            started.elapsed()
        })
        .collect();
    let call_us = median(calls).as_secs_f64() * 1e6;
    println!(
        "read_file, one call on a small file: {call_us:.1} µs median (std::fs::read_to_string alone: {:.1} µs)",
        median(plain).as_secs_f64() * 1e6
    );
    summary::info("read_file, one small file", call_us, "us");
    summary::print("search");
}

fn walkdir_first_tf(root: &Path) -> std::path::PathBuf {
    let mut dir = root.to_path_buf();
    loop {
        let mut entries: Vec<_> =
            std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
        entries.sort();
        if let Some(tf) = entries.iter().find(|p| p.extension().is_some_and(|e| e == "tf")) {
            return tf.clone();
        }
        dir = entries.into_iter().find(|p| p.is_dir()).expect("a .tf file in the tree");
    }
}
