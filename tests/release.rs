//! The release as users get it: `deploy/release.sh` builds both static musl binaries
//! (aarch64 cross-built), packs them; this test checks SHA256SUMS against the archives,
//! what each archive holds, that each binary is static and for its machine, runs each
//! (the aarch64 one under `qemu-aarch64`) for `--version` and an `initialize` over stdio
//! whose answer the ACP schema accepts, and checks the registry entry written beside them.
//!
//! A test binary of its own: the two release builds take minutes, so it runs once in CI
//! (with `cargo test`), not with each of the integration suite's runs. Without the cross
//! toolchain it says what is missing and passes, except under CI (`CI` set), where
//! `.ci/run` installs it and a missing piece fails. `cargo test --test release` runs it
//! alone.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

// Two modules of the shared harness (tests/support/); the integration binary includes all of
// it and checks it for dead code, this one uses a part of each.
#[allow(dead_code, reason = "this binary uses a part of the shared module")]
#[path = "support/registry.rs"]
mod registry;
#[allow(dead_code, reason = "this binary uses a part of the shared module")]
#[path = "support/schema.rs"]
mod schema;
#[allow(dead_code, reason = "this binary uses a part of the shared module")]
#[path = "support/skip.rs"]
mod skip;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::skip::{Ci, skip};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// (platform, ELF machine number, the program that runs it here, if any).
const PLATFORMS: &[(&str, u16, Option<&str>)] =
    &[("linux-x86_64", 62, None), ("linux-aarch64", 183, Some("qemu-aarch64"))];

/// What is missing for a release build here, if anything.
fn missing_toolchain() -> Vec<String> {
    let mut missing = Vec::new();
    let on_path = |program: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {program}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    for program in ["x86_64-linux-musl-gcc", "aarch64-linux-gnu-gcc", "qemu-aarch64", "rustup"] {
        if !on_path(program) {
            missing.push(program.to_owned());
        }
    }
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    for triple in ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl"] {
        if !installed.lines().any(|l| l.trim() == triple) {
            missing.push(format!("rustup target {triple}"));
        }
    }
    missing
}

#[test]
fn release_sh_builds_packs_and_checks_both_platforms() {
    let missing = missing_toolchain();
    if !missing.is_empty() {
        let what = missing.join(", ");
        let why = format!(
            "no cross toolchain here ({what} missing). Debian: apt-get install musl-tools \
             gcc-aarch64-linux-gnu qemu-user; rustup target add x86_64-unknown-linux-musl \
             aarch64-unknown-linux-musl"
        );
        skip(&why, Ci::Fails);
        return;
    }
    let out = std::env::temp_dir().join(format!("iac-code-release-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let mut release = Command::new(format!("{ROOT}/deploy/release.sh"));
    release.arg("--out").arg(&out).arg("--no-check").env_remove("RELEASE_BASE_URL");
    // `cargo test` gives this process the package's CARGO_MANIFEST_DIR, CARGO_PKG_* and
    // friends. ring's build script reads such names through a wrapper that declares each
    // one `rerun-if-env-changed`, and cargo compares them in its own environment: with
    // them set, the build below differs from a plain `cargo build --release` (ring and
    // everything on it built twice, 3 min in CI). Without them it is the same build.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let cargo_own = name == "CARGO" || name == "OUT_DIR" || name.starts_with("CARGO_");
        if cargo_own && !["CARGO_HOME", "CARGO_TARGET_DIR"].contains(&&*name) {
            release.env_remove(&*name);
        }
    }
    let run = release.output().unwrap();
    let said =
        format!("{}{}", String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    assert!(run.status.success(), "deploy/release.sh failed:\n{said}");
    eprintln!("{said}");

    let sums = std::fs::read_to_string(out.join("SHA256SUMS")).unwrap();
    let mut listed = BTreeSet::new();
    for line in sums.lines() {
        let (hash, file) = line.split_once("  ").expect("sha256sum's format");
        let bytes = std::fs::read(out.join(file)).unwrap();
        let digest = ring::digest::digest(&ring::digest::SHA256, &bytes);
        let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hash, hex, "SHA256SUMS is wrong for {file}");
        listed.insert(file.to_owned());
    }
    let archives: BTreeSet<String> =
        PLATFORMS.iter().map(|(p, _, _)| format!("iac-code-{VERSION}-{p}.tar.gz")).collect();
    assert_eq!(listed, archives, "SHA256SUMS lists exactly the archives");

    for (platform, machine, runner) in PLATFORMS {
        let dir = out.join(platform);
        std::fs::create_dir_all(&dir).unwrap();
        let archive = out.join(format!("iac-code-{VERSION}-{platform}.tar.gz"));
        check_archive(&archive, &dir);
        let bin = dir.join("iac-code");
        check_elf(&bin, *machine);
        check_runs(&bin, *runner);
    }

    // The registry entry beside the archives: the tree's, valid, with the icon.
    let entry = out.join("registry/iac-code");
    let written = std::fs::read_to_string(entry.join("agent.json")).unwrap();
    let tree = std::fs::read_to_string(format!("{}/agent.json", registry::ENTRY)).unwrap();
    assert_eq!(written, tree, "the release's agent.json is the tree's");
    let parsed: Value = serde_json::from_str(&written).unwrap();
    let problems = registry::entry_problems(&parsed, "iac-code");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let icon = std::fs::read_to_string(entry.join("icon.svg")).unwrap();
    assert!(registry::icon_problems(&icon).is_empty());
    let _ = std::fs::remove_dir_all(&out);
}

/// The archive is flat, holds exactly the binary, the man page and the README (and the
/// LICENSE when the tree has one), each as in the tree and the binary executable.
fn check_archive(archive: &Path, dir: &Path) {
    let list = Command::new("tar").arg("-tzf").arg(archive).output().unwrap();
    assert!(list.status.success(), "{} is not a .tar.gz", archive.display());
    let names: BTreeSet<String> =
        String::from_utf8_lossy(&list.stdout).lines().map(str::to_owned).collect();
    let mut want: BTreeSet<String> =
        ["iac-code", "iac-code.1", "README.md"].into_iter().map(str::to_owned).collect();
    if Path::new(ROOT).join("LICENSE").exists() {
        want.insert("LICENSE".to_owned());
    }
    assert_eq!(names, want, "{}", archive.display());
    let untar = Command::new("tar").arg("-xzf").arg(archive).arg("-C").arg(dir).status().unwrap();
    assert!(untar.success());
    for (packed, source) in [("iac-code.1", "man/iac-code.1"), ("README.md", "README.md")] {
        let a = std::fs::read(dir.join(packed)).unwrap();
        let b = std::fs::read(Path::new(ROOT).join(source)).unwrap();
        assert!(a == b, "{packed} in {} differs from {source}", archive.display());
    }
    let mode = std::fs::metadata(dir.join("iac-code")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755, "the binary's mode");
}

/// A 64-bit little-endian ELF executable for `machine`, with no program interpreter.
fn check_elf(bin: &Path, machine: u16) {
    let elf = std::fs::read(bin).unwrap();
    assert_eq!(&elf[..4], b"\x7fELF", "{} is not ELF", bin.display());
    assert_eq!(elf[4], 2, "64-bit");
    let u16_at = |at: usize| u16::from_le_bytes([elf[at], elf[at + 1]]);
    let u64_at = |at: usize| u64::from_le_bytes(elf[at..at + 8].try_into().unwrap());
    assert_eq!(u16_at(18), machine, "{}: e_machine", bin.display());
    let (phoff, phentsize, phnum) = (u64_at(0x20) as usize, u16_at(0x36), u16_at(0x38));
    for i in 0..usize::from(phnum) {
        let at = phoff + i * usize::from(phentsize);
        let kind = u32::from_le_bytes(elf[at..at + 4].try_into().unwrap());
        assert_ne!(kind, 3, "{} has PT_INTERP: not static", bin.display());
    }
}

/// `--version`, then an `initialize` over stdio, through `runner` when one is needed.
fn check_runs(bin: &Path, runner: Option<&str>) {
    let command = || {
        let mut command = match runner {
            Some(runner) => {
                let mut c = Command::new(runner);
                c.arg(bin);
                c
            }
            None => Command::new(bin),
        };
        let home = scratch(bin);
        command.env_clear().env("HOME", &home).env("IAC_CODE_CONFIG_DIR", home.join("config"));
        command.env("PATH", std::env::var_os("PATH").unwrap_or_default());
        command
    };
    let version = command().arg("--version").output().unwrap();
    assert!(version.status.success(), "{}", String::from_utf8_lossy(&version.stderr));
    assert_eq!(String::from_utf8_lossy(&version.stdout), format!("iac-code {VERSION}\n"));

    let mut child = command()
        .arg("acp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let request = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": 1,
        "clientInfo": {"name": "release test", "version": "1.0.0"},
        "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": true},
    }});
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{request}").unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(60));
    drop(stdin);
    let Ok(line) = line else {
        let _ = child.kill();
        panic!("{} did not answer initialize in 60 s", bin.display());
    };
    let status = child.wait().unwrap();
    assert!(status.success(), "{} exits cleanly at the end of its input", bin.display());
    let reply: Value = serde_json::from_str(&line).expect("one JSON-RPC line");
    assert_eq!(reply["id"], 0, "{reply}");
    let result = &reply["result"];
    assert_eq!(result["protocolVersion"], 1, "{reply}");
    assert_eq!(result["agentInfo"]["name"], "iac-code", "{reply}");
    assert_eq!(result["agentInfo"]["version"], VERSION, "{reply}");
    if let Err(e) = schema::check("InitializeResponse", result, false) {
        panic!("{}: initialize result:\n{e}", bin.display());
    }
}

fn scratch(bin: &Path) -> PathBuf {
    let home = bin.with_file_name("home");
    std::fs::create_dir_all(&home).unwrap();
    home
}
