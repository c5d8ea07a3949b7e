//! What a team's teaching costs a turn: 50 installed skills and 5 hooks (each `true`,
//! three `PreToolUse` and two `PostToolUse`, all matching every call). Runs `-p` turns of
//! 20 `read_file` calls against the fake LLM with nothing, the skills, the hooks and both,
//! and reports the extra wall time per tool call and the system prompt's size. Run with
//! `cargo bench --bench teach`; prints medians, then the summary table.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[allow(dead_code, unused_imports)]
#[path = "../tests/support/fake_llm/mod.rs"]
mod fake_llm;
#[allow(dead_code)]
#[path = "support/summary.rs"]
mod summary;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fake_llm::{FakeLlm, Reply};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_iac-code");
const CALLS: usize = 20;
const RUNS: usize = 7;
const SKILLS: usize = 50;

/// One kind of set-up: a home (with or without skills) and a config dir (with or without
/// hooks) around one project.
struct Setup {
    home: PathBuf,
    config: PathBuf,
    project: PathBuf,
}

fn fresh(root: &Path, name: &str, skills: bool, hooks: bool) -> Setup {
    let base = root.join(name);
    let _ = std::fs::remove_dir_all(&base);
    let (home, config, project) = (base.join("home"), base.join("config"), base.join("project"));
    for dir in [&home, &config, &project] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(project.join("main.tf"), "resource \"terraform_data\" \"a\" {}\n").unwrap();
    if skills {
        for n in 0..SKILLS {
            let name = format!("team-skill-{n:02}");
            let dir = home.join(".agents/skills").join(&name);
            std::fs::create_dir_all(&dir).unwrap();
            let description = format!(
                "Reviews the {name} part of our platform: runs its checks, reads its plan and \
                 reports what would change. Use when the user works on {name}."
            );
            let body = "# Steps\n\n1. Read the files.\n2. Run the checks with bash.\n".repeat(8);
            let text = format!("---\nname: {name}\ndescription: {description}\n---\n\n{body}");
            std::fs::write(dir.join("SKILL.md"), text).unwrap();
        }
    }
    if hooks {
        let one = |matcher: &str| json!({"matcher": matcher, "command": "true"});
        let settings = json!({"hooks": {
            "PreToolUse": [one("*"), one("read_file"), one("*")],
            "PostToolUse": [one("*"), one("read_file")],
        }});
        std::fs::write(config.join("settings.json"), settings.to_string()).unwrap();
    }
    Setup { home, config, project }
}

/// One `-p` turn of `CALLS` read_file calls; its wall time and the system prompt sent.
fn turn(setup: &Setup) -> (Duration, usize) {
    let mut script: Vec<Reply> = (0..CALLS)
        .map(|i| fake_llm::tool_reply(&format!("c{i}"), "read_file", json!({"path": "main.tf"})))
        .collect();
    script.push(fake_llm::text_reply("done"));
    let llm = FakeLlm::start(script);
    let started = Instant::now();
    let status = Command::new(BIN)
        .args(["-p", "read main.tf twenty times", "--permission-mode", "bypass_permissions"])
        .current_dir(&setup.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &setup.home)
        .env("IAC_CODE_CONFIG_DIR", &setup.config)
        .env("IAC_CODE_LOG", "warn")
        .env("IAC_CODE_PROVIDER", "openai_compatible")
        .env("IAC_CODE_BASE_URL", llm.base_url())
        .env("IAC_CODE_API_KEY", "sk-bench")
        .env("IAC_CODE_MODEL", "fake-model")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let elapsed = started.elapsed();
    assert!(status.success(), "the -p turn failed: {status}");
    let bodies = llm.bodies();
    assert_eq!(bodies.len(), CALLS + 1, "one request per call and the last answer");
    let system = bodies[0]["messages"][0]["content"].as_str().unwrap_or_default().len();
    (elapsed, system)
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn main() {
    let root = std::env::temp_dir().join(format!("iac-code-bench-teach-{}", std::process::id()));
    let kinds = [("bare", false, false), ("skills", true, false), ("hooks", false, true)];
    let kinds = kinds.into_iter().chain([("both", true, true)]);
    let mut figures = Vec::new();
    for (name, skills, hooks) in kinds {
        let setup = fresh(&root, name, skills, hooks);
        let _ = turn(&setup); // warm the page cache
        let runs: Vec<(Duration, usize)> = (0..RUNS).map(|_| turn(&setup)).collect();
        let system = runs[0].1;
        let time = median(runs.into_iter().map(|r| r.0).collect());
        println!(
            "{name:>6}: turn of {CALLS} calls {:.1} ms, system prompt {system} bytes",
            time.as_secs_f64() * 1e3
        );
        figures.push((name, time, system));
    }
    let _ = std::fs::remove_dir_all(&root);
    let of = |name: &str| figures.iter().find(|f| f.0 == name).copied().unwrap();
    let per_call = |name: &str| {
        let extra = of(name).1.as_secs_f64() - of("bare").1.as_secs_f64();
        extra * 1e3 / CALLS as f64
    };
    summary::info("extra per tool call, 5 hooks (ms)", per_call("hooks"), "ms");
    summary::info("extra per tool call, 50 skills (ms)", per_call("skills"), "ms");
    summary::info("extra per tool call, both (ms)", per_call("both"), "ms");
    summary::info("one hook run (ms)", per_call("hooks") / 5.0, "ms");
    summary::info("system prompt, bare", of("bare").2 as f64, "bytes");
    summary::info("system prompt, 50 skills", of("skills").2 as f64, "bytes");
    let catalog = of("skills").2 as f64 - of("bare").2 as f64;
    summary::info("catalog of 50 skills", catalog, "bytes");
    summary::print("teach");
}
