//! The release artifact: binary size, start → `--version` exit, and start → first streamed
//! byte of a one-shot (`-p`) answer from the fake LLM, for the bench build and, when it
//! was built (`cargo build --release --target x86_64-unknown-linux-musl`), the static musl
//! binary. Run with `cargo bench --bench release`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[allow(dead_code, unused_imports)]
#[path = "../tests/support/fake_llm/mod.rs"]
mod fake_llm;
#[allow(dead_code)]
#[path = "support/summary.rs"]
mod summary;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fake_llm::{FakeLlm, text_reply};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn measure(name: &str, bin: &Path) {
    let size = std::fs::metadata(bin).unwrap().len();
    let version: Vec<Duration> = (0..200)
        .map(|_| {
            let started = Instant::now();
            let status = Command::new(bin).arg("--version").stdout(Stdio::null()).status().unwrap();
            assert!(status.success());
            started.elapsed()
        })
        .collect();
    let runs = 50;
    let llm = FakeLlm::start((0..runs).map(|_| text_reply("Hello from the model")).collect());
    let home = std::env::temp_dir().join("iac-code-bench-release");
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    let first_byte: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            let mut child = Command::new(bin)
                .args(["-p", "hi", "--permission-mode", "dont_ask"])
                .current_dir(&home)
                .env_clear()
                .env("HOME", &home)
                .env("IAC_CODE_CONFIG_DIR", home.join("config"))
                .env("IAC_CODE_BASE_URL", llm.base_url())
                .env("IAC_CODE_MODEL", "fake-model")
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let mut byte = [0u8; 1];
            child.stdout.as_mut().unwrap().read_exact(&mut byte).unwrap();
            let elapsed = started.elapsed();
            assert!(child.wait().unwrap().success());
            elapsed
        })
        .collect();
    let mib = size as f64 / (1 << 20) as f64;
    let version = median(version).as_secs_f64() * 1e3;
    let first = median(first_byte).as_secs_f64() * 1e3;
    println!(
        "{name}: {size} bytes ({mib:.2} MiB); start -> --version exit: median {version:.2} ms (200 runs); start -> first answer byte with -p: median {first:.2} ms ({runs} runs)",
    );
    summary::at_most(&format!("[{name}] binary size"), mib, 8.0, "MiB");
    summary::at_most(&format!("[{name}] start -> --version exit"), version, 2.0, "ms");
    summary::at_most(&format!("[{name}] start -> first -p byte"), first, 10.0, "ms");
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("run with `cargo bench --bench release` to measure");
        return;
    }
    measure("bench build (glibc)", Path::new(env!("CARGO_BIN_EXE_iac-code")));
    let musl = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/target/x86_64-unknown-linux-musl/release/iac-code"
    ));
    if musl.exists() {
        measure("static musl release", musl);
    } else {
        println!("no musl binary: cargo build --release --target x86_64-unknown-linux-musl");
    }
    summary::print("release");
}
