//! The token economy: a scripted session of 3 prompts and 30 tool calls (each reads one
//! file of a ~20k-token Terraform project) run through the real binary against the fake
//! LLM, on the Anthropic and on the OpenAI path, with the requests recorded. Run with
//! `cargo bench --bench tokens`.
//!
//! Anthropic: its prompt cache is replayed over the recorded requests (a prefix cached at
//! each `cache_control` breakpoint; a request reads the longest cached prefix ending at
//! one of its breakpoints or at most 20 blocks before one, writes up to its last
//! breakpoint, pays the rest in full), tokens counted as a quarter of the bytes; printed:
//! input billed at full price, read, written, and the billed-input ratio (cost with our
//! caching / cost without, at Anthropic's ratios: read 0.1, 5-minute write 1.25; target
//! <= 0.25). OpenAI: the share of each request's bytes that is a byte-identical prefix of
//! the next request's (target >= 97 %, the lowest of the session), and the tokens a
//! prefix cache reads. Prints a summary table; a miss never fails the run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[allow(dead_code)]
#[path = "support/agent.rs"]
mod agent;
#[allow(dead_code, unused_imports)]
#[path = "../tests/support/fake_llm/mod.rs"]
mod fake_llm;
#[allow(dead_code)]
#[path = "support/summary.rs"]
mod summary;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use agent::Agent;
use fake_llm::{Event, FakeLlm, Reply};

const PROMPTS: usize = 3;
const CALLS_PER_PROMPT: usize = 10;
/// Bytes of each of the 30 project files (30 x 2.7 KB: about 20k tokens in all).
const FILE_BYTES: usize = 2_700;
/// How far back from a breakpoint Anthropic looks for a cached prefix, in blocks.
const LOOKBACK: usize = 20;

/// A project of `PROMPTS * CALLS_PER_PROMPT` Terraform files.
fn project() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("iac-code-bench-tokens-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in 0..PROMPTS * CALLS_PER_PROMPT {
        let mut text = String::new();
        let mut r = 0;
        while text.len() < FILE_BYTES {
            text.push_str(&format!(
                "resource \"aws_security_group_rule\" \"m{f}_r{r}\" {{\n  type = \"ingress\"\n  \
                 from_port = {p}\n  to_port = {p}\n  protocol = \"tcp\"\n  cidr_blocks = \
                 [\"10.{f}.{r}.0/24\"]\n  security_group_id = aws_security_group.m{f}.id\n}}\n\n",
                p = 8000 + r
            ));
            r += 1;
        }
        std::fs::write(dir.join(format!("module_{f:02}.tf")), text).unwrap();
    }
    dir
}

/// The script: per prompt, ten replies reading one file each, then a short answer.
fn script() -> Vec<Reply> {
    let mut replies = Vec::new();
    for p in 0..PROMPTS {
        for c in 0..CALLS_PER_PROMPT {
            let file = format!("module_{:02}.tf", p * CALLS_PER_PROMPT + c);
            replies.push(Reply::Stream(vec![
                Event::Text(format!("Reading {file}.")),
                Event::ToolCall {
                    index: 0,
                    id: format!("call_{p}_{c}"),
                    name: "read_file".into(),
                    args: json!({"path": file}),
                },
                Event::Finish("tool_calls"),
                Event::Usage { prompt: 0, completion: 20 },
                Event::Done,
            ]));
        }
        replies.push(Reply::Stream(vec![
            Event::Text(format!("Prompt {p}: the rules open ports 8000 and up to 10.x.")),
            Event::Finish("stop"),
            Event::Usage { prompt: 0, completion: 20 },
            Event::Done,
        ]));
    }
    replies
}

/// Runs the session on `preset`; the request bodies as sent.
fn run(preset: &str, model: &str, cwd: &Path) -> Vec<Vec<u8>> {
    let llm = FakeLlm::start(script());
    let config =
        std::env::temp_dir().join(format!("iac-code-bench-tokens-{preset}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&config);
    let env = [
        ("IAC_CODE_PROVIDER", preset.to_string()),
        ("IAC_CODE_BASE_URL", llm.base_url()),
        ("IAC_CODE_API_KEY", "sk-bench".to_string()),
        ("IAC_CODE_MODEL", model.to_string()),
        ("IAC_CODE_CONFIG_DIR", config.display().to_string()),
    ];
    let mut agent = Agent::spawn(&env);
    agent.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}}));
    let session = agent.new_session(cwd);
    for p in 0..PROMPTS {
        let text = format!("Prompt {p}: review the next ten modules' ingress rules.");
        let id = agent.send(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        );
        let (_, response) = agent.wait(id);
        assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    }
    let _ = std::fs::remove_dir_all(&config);
    llm.requests().into_iter().map(|r| r.raw).collect()
}

/// Tokens of some JSON, estimated (a quarter of its bytes).
fn tokens(value: &Value) -> u64 {
    (value.to_string().len() as u64).div_ceil(4)
}

/// An Anthropic request as its cache sees it: the cumulative tokens at the end of each
/// block (tools, system, each message's blocks), a fingerprint of the prefix there, and
/// whether the block is a breakpoint.
fn blocks(body: &Value) -> Vec<(u64, u64, bool)> {
    use std::hash::{Hash, Hasher};
    let mut out = Vec::new();
    let mut total = 0;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let mut push = |block: &Value, out: &mut Vec<(u64, u64, bool)>| {
        let marked = block.get("cache_control").is_some();
        let mut clean = block.clone();
        if let Some(map) = clean.as_object_mut() {
            map.remove("cache_control");
        }
        clean.to_string().hash(&mut hasher);
        total += tokens(&clean);
        out.push((total, hasher.finish(), marked));
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        push(tool, &mut out);
    }
    match &body["system"] {
        Value::Array(system) => system.iter().for_each(|b| push(b, &mut out)),
        other => push(&json!({"type": "text", "text": other}), &mut out),
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            push(block, &mut out);
        }
    }
    out
}

/// Replays Anthropic's prompt cache over the requests: (full price, read, written, total).
fn anthropic_billing(requests: &[Vec<u8>]) -> (u64, u64, u64, u64) {
    let mut cached: HashSet<u64> = HashSet::new();
    let (mut full, mut read, mut written, mut all) = (0, 0, 0, 0);
    for raw in requests {
        let body: Value = serde_json::from_slice(raw).unwrap();
        let blocks = blocks(&body);
        let total = blocks.last().map_or(0, |b| b.0);
        let marks: Vec<usize> = (0..blocks.len()).filter(|&i| blocks[i].2).collect();
        // The longest cached prefix at a breakpoint, or up to 20 blocks before one.
        let hit = marks
            .iter()
            .flat_map(|&m| (m.saturating_sub(LOOKBACK)..=m).rev())
            .filter(|&i| cached.contains(&blocks[i].1))
            .map(|i| blocks[i].0)
            .max()
            .unwrap_or(0);
        let last_mark = marks.last().map_or(0, |&m| blocks[m].0);
        let write = last_mark.saturating_sub(hit);
        for &m in &marks {
            cached.insert(blocks[m].1);
        }
        read += hit;
        written += write;
        full += total - hit - write;
        all += total;
    }
    (full, read, written, all)
}

/// Per request, the share of its bytes that begins the next request, byte for byte.
fn prefix_shares(requests: &[Vec<u8>]) -> Vec<f64> {
    requests
        .windows(2)
        .map(|pair| {
            let same = pair[0].iter().zip(&pair[1]).take_while(|(a, b)| a == b).count();
            same as f64 / pair[0].len() as f64
        })
        .collect()
}

fn main() {
    let cwd = project();
    let calls = PROMPTS * CALLS_PER_PROMPT;

    let anthropic = run("anthropic", "claude-sonnet-4-5", &cwd);
    let (full, read, written, all) = anthropic_billing(&anthropic);
    let ratio = (full as f64 + 0.1 * read as f64 + 1.25 * written as f64) / all as f64;
    println!(
        "anthropic: {} requests ({calls} tool calls), {all} input tokens: {full} at full price, \
         {read} read from the cache, {written} written to it; billed-input ratio {ratio:.3}",
        anthropic.len()
    );
    summary::info("anthropic: requests", anthropic.len() as f64, "");
    summary::info("anthropic: input tokens (no cache)", all as f64, "tokens");
    summary::info("anthropic: billed at full price", full as f64, "tokens");
    summary::info("anthropic: read from the cache", read as f64, "tokens");
    summary::info("anthropic: written to the cache", written as f64, "tokens");
    summary::at_most("anthropic: billed-input ratio", ratio, 0.25, "");

    let openai = run("openai", "gpt-4.1", &cwd);
    let shares = prefix_shares(&openai);
    let lowest = shares.iter().copied().fold(1.0, f64::min) * 100.0;
    let mean = shares.iter().sum::<f64>() / shares.len() as f64 * 100.0;
    let sizes: Vec<u64> = openai.iter().map(|r| (r.len() as u64).div_ceil(4)).collect();
    let total: u64 = sizes.iter().sum();
    // What a prefix cache reads: each request's bytes shared with the one before.
    let reused: u64 = openai
        .windows(2)
        .map(|p| (p[0].iter().zip(&p[1]).take_while(|(a, b)| a == b).count() as u64).div_ceil(4))
        .sum();
    println!(
        "openai: {} requests, {total} input tokens, {reused} of them a byte-identical prefix \
         of the request before; each request's prefix shared with the next: lowest \
         {lowest:.2} %, mean {mean:.2} %",
        openai.len()
    );
    summary::info("openai: input tokens (no cache)", total as f64, "tokens");
    summary::info("openai: prefix a cache can read", reused as f64, "tokens");
    summary::info("openai: billed at full price", (total - reused) as f64, "tokens");
    summary::at_least("openai: prefix shared with the next request (lowest)", lowest, 97.0, "%");
    summary::info("openai: prefix shared with the next request (mean)", mean, "%");
    let _ = std::fs::remove_dir_all(&cwd);
    summary::print("tokens");
}
