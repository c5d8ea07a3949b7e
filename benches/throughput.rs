//! Start-up, memory and streaming benchmarks of the real binary against the fake LLM.
//! Run with `cargo bench`. Prints one line per figure, then a summary table against the
//! targets (also in benches/README.md); a miss never fails the run, so a slow machine never
//! fails a build.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "support/agent.rs"]
mod agent;
#[path = "support/builds.rs"]
mod builds;
#[allow(dead_code, unused_imports)]
#[path = "../tests/support/fake_llm/mod.rs"]
mod fake_llm;
#[allow(dead_code)]
#[path = "support/summary.rs"]
mod summary;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use agent::Agent;
use fake_llm::{Event, FakeLlm, Reply};
use serde_json::{Value, json};

fn initialize_params() -> Value {
    json!({"protocolVersion": 1, "clientCapabilities": {}})
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Start -> `initialize` answered, `runs` times; the sorted times.
fn time_startup(bin: &Path, runs: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let mut agent = Agent::spawn_bin(bin, &[]);
        agent.call("initialize", initialize_params());
        times.push(started.elapsed());
    }
    times.sort();
    times
}

fn startup(label: &str, bin: &Path, stub: Option<&Path>) {
    let runs = 200;
    // Ours and the stub in turns, so that both see the same machine.
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..4 {
        ours.extend(time_startup(bin, runs / 4));
        if let Some(stub) = stub {
            theirs.extend(time_startup(stub, runs / 4));
        }
    }
    ours.sort();
    theirs.sort();
    let ms = |times: &[Duration], p: f64| percentile(times, p).as_secs_f64() * 1e3;
    println!(
        "[{label}] start -> initialize response: median {:.2} ms, p90 {:.2} ms ({runs} runs)",
        ms(&ours, 0.5),
        ms(&ours, 0.9)
    );
    summary::at_most(&format!("[{label}] start -> initialize (median)"), ms(&ours, 0.5), 5.0, "ms");
    if stub.is_some() {
        let gap = ms(&ours, 0.5) - ms(&theirs, 0.5);
        println!(
            "[{label}] the std-only static stub (reads a line, prints a fixed answer): median {:.2} ms, p90 {:.2} ms; ours takes {gap:.2} ms more",
            ms(&theirs, 0.5),
            ms(&theirs, 0.9)
        );
        summary::info(
            &format!("[{label}] stub: start -> initialize (median)"),
            ms(&theirs, 0.5),
            "ms",
        );
        summary::at_most(&format!("[{label}] start -> initialize, ours - stub"), gap, 0.2, "ms");
    }
}

/// The limit for start-up: a std-only static binary that reads one line and prints the
/// answer `bin` gives to `initialize`, built with rustc for the musl target. `None` (and
/// why) when it cannot be built.
fn build_stub(bin: &Path) -> Option<PathBuf> {
    let mut agent = Agent::spawn_bin(bin, &[]);
    agent.send("initialize", initialize_params());
    let mut answer = String::new();
    agent.stdout.read_line(&mut answer).unwrap();
    let answer = answer.trim_end();
    drop(agent);
    let dir = std::env::temp_dir().join("iac-code-bench-stub");
    std::fs::create_dir_all(&dir).unwrap();
    let source = format!(
        "use std::io::{{BufRead, Write}};\n\
         fn main() {{\n\
             let mut line = String::new();\n\
             let _ = std::io::stdin().lock().read_line(&mut line);\n\
             let mut out = std::io::stdout().lock();\n\
             let _ = out.write_all({answer:?}.as_bytes());\n\
             let _ = out.write_all(b\"\\n\");\n\
             let _ = out.flush();\n\
             let _ = std::io::stdin().lock().read_line(&mut line);\n\
         }}\n"
    );
    let path = dir.join("stub.rs");
    std::fs::write(&path, source).unwrap();
    let out = dir.join("stub");
    let built = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .args(["--edition", "2021", "-C", "opt-level=2", "-C", "panic=abort"])
        .args(["--target", "x86_64-unknown-linux-musl", "-C", "target-feature=+crt-static"])
        .arg("-o")
        .arg(&out)
        .arg(&path)
        .output();
    match built {
        Ok(output) if output.status.success() => Some(out),
        Ok(output) => {
            println!("no start-up stub: rustc failed: {}", String::from_utf8_lossy(&output.stderr));
            None
        }
        Err(err) => {
            println!("no start-up stub: cannot run rustc: {err}");
            None
        }
    }
}

fn memory(label: &str, bin: &Path) {
    let cwd = std::env::temp_dir();
    let env = [
        ("IAC_CODE_BASE_URL", "http://127.0.0.1:9/v1".to_string()),
        ("IAC_CODE_MODEL", "m".to_string()),
    ];
    let mut agent = Agent::spawn_bin(bin, &env);
    agent.call("initialize", initialize_params());
    let idle = agent.rss_kib();
    agent.call("session/new", json!({"cwd": cwd, "mcpServers": []}));
    let one = agent.rss_kib();
    for _ in 0..100 {
        agent.call("session/new", json!({"cwd": cwd, "mcpServers": []}));
    }
    let hundred = agent.rss_kib();
    println!("[{label}] idle RSS after initialize: {idle} KiB");
    println!(
        "[{label}] RSS per extra session: {:.1} KiB (100 sessions: {one} -> {hundred} KiB)",
        (hundred.saturating_sub(one)) as f64 / 100.0
    );
    summary::at_most(&format!("[{label}] idle RSS after initialize"), idle as f64, 2560.0, "KiB");
    let per_session = (hundred.saturating_sub(one)) as f64 / 100.0;
    summary::at_most(&format!("[{label}] RSS per extra session"), per_session, 64.0, "KiB");
}

/// Streaming through either wire API (the fake LLM answers `/messages` in Anthropic's
/// event format and `/chat/completions` in OpenAI's).
fn streaming(label: &str, bin: &Path, anthropic: bool) {
    let chunks: u64 =
        std::env::var("BENCH_CHUNKS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let reply = || {
        let mut events: Vec<Event> = (0..chunks).map(|i| Event::Text(format!("tok{i} "))).collect();
        events.extend([
            Event::Finish("stop"),
            Event::Usage { prompt: 10, completion: chunks },
            Event::Done,
        ]);
        Reply::Stream(events)
    };
    // Many short runs: one run is ~10 ms, and a 2-core machine is noisy at that scale.
    let runs = 21;
    let llm = FakeLlm::start((0..runs + 1).map(|_| reply()).collect());
    let mut env =
        vec![("IAC_CODE_BASE_URL", llm.base_url()), ("IAC_CODE_MODEL", "fake-model".to_string())];
    if anthropic {
        env.push(("IAC_CODE_PROVIDER", "anthropic_compatible".to_string()));
    }
    let mut agent = Agent::spawn_bin(bin, &env);
    agent.call("initialize", initialize_params());
    let cwd = std::env::temp_dir();
    let mut rates = Vec::new();
    for run in 0..=runs {
        let session = agent.new_session(&cwd);
        let started = Instant::now();
        let id = agent.prompt(&session);
        let (updates, response) = agent.wait(id);
        let elapsed = started.elapsed();
        assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
        assert!(updates as u64 > chunks, "{updates} updates");
        if run > 0 {
            rates.push(updates as f64 / elapsed.as_secs_f64());
        }
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "[{label}] session/update throughput, {chunks}-chunk reply, {}: median {:.0}/s (min {:.0}, max {:.0}; {runs} runs, fake LLM in-process)",
        if anthropic { "Anthropic Messages" } else { "OpenAI chat" },
        rates[rates.len() / 2],
        rates[0],
        rates[rates.len() - 1]
    );
    let api = if anthropic { "Anthropic" } else { "OpenAI" };
    let metric = format!("[{label}] session/update/s, {chunks} chunks, {api} (median)");
    summary::at_least(&metric, rates[rates.len() / 2], 1_000_000.0, "/s");
}

/// From the fake LLM writing one chunk to its `session/update` frame on our stdout, with
/// the server otherwise idle: chunks 2 ms apart, each timestamped as it is written.
fn chunk_latency(label: &str, bin: &Path) {
    let chunks = 300;
    let mut events = Vec::with_capacity(2 * chunks + 3);
    for _ in 0..chunks {
        events.extend([Event::Pause(2), Event::Stamp]);
    }
    events.extend([Event::Finish("stop"), Event::Usage { prompt: 1, completion: 1 }, Event::Done]);
    let llm = FakeLlm::start(vec![Reply::Stream(events)]);
    let env = [("IAC_CODE_BASE_URL", llm.base_url()), ("IAC_CODE_MODEL", "m".to_string())];
    let mut agent = Agent::spawn_bin(bin, &env);
    agent.call("initialize", initialize_params());
    let session = agent.new_session(&std::env::temp_dir());
    let id = agent.prompt(&session);
    let needle = format!("\"id\":{id},");
    let mut latencies = Vec::with_capacity(chunks);
    let mut line = String::new();
    loop {
        line.clear();
        assert!(agent.stdout.read_line(&mut line).unwrap() > 0, "agent exited");
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros();
        if line.contains(&needle) && !line.contains("\"method\"") {
            break;
        }
        let Some(at) = line.find("\"text\":\"t=") else { continue };
        let digits: String = line[at + 10..].chars().take_while(char::is_ascii_digit).collect();
        let stamp: u128 = digits.parse().unwrap();
        latencies.push(Duration::from_micros(now.saturating_sub(stamp) as u64));
    }
    assert_eq!(latencies.len(), chunks, "every chunk arrived");
    latencies.sort();
    let us = |p: f64| percentile(&latencies, p).as_secs_f64() * 1e6;
    println!(
        "[{label}] one chunk at idle, fake LLM write -> frame read: p50 {:.0} us, p99 {:.0} us, max {:.0} us ({chunks} chunks)",
        us(0.5),
        us(0.99),
        us(1.0)
    );
    summary::info(&format!("[{label}] chunk -> frame at idle, p50"), us(0.5), "us");
    summary::at_most(&format!("[{label}] chunk -> frame at idle, p99"), us(0.99), 200.0, "us");
}

/// From `session/cancel` to the `cancelled` response while a bash tool runs a process tree.
fn bash_cancel() {
    let runs = 20;
    let command = "sleep 1000 & (setsid sleep 1001 &); echo ready; wait";
    let script = (0..runs)
        .map(|i| fake_llm::tool_reply(&format!("b{i}"), "bash", json!({"command": command})))
        .collect();
    let llm = FakeLlm::start(script);
    let env = [("IAC_CODE_BASE_URL", llm.base_url()), ("IAC_CODE_MODEL", "fake-model".to_string())];
    let mut agent = Agent::spawn(&env);
    agent.call("initialize", initialize_params());
    let cwd = std::env::temp_dir();
    let mut times = Vec::new();
    for _ in 0..runs {
        let session = agent.new_session(&cwd);
        let mode = json!({"sessionId": session, "modeId": "bypass_permissions"});
        agent.call("session/set_mode", mode);
        let id = agent.prompt(&session);
        // Live output "ready" means the tree is up.
        let mut line = String::new();
        loop {
            line.clear();
            assert!(agent.stdout.read_line(&mut line).unwrap() > 0, "agent exited");
            if line.contains("tool_call_update") && line.contains("ready") {
                break;
            }
        }
        let started = Instant::now();
        let cancel =
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}});
        writeln!(agent.stdin, "{cancel}").unwrap();
        agent.stdin.flush().unwrap();
        let (_, response) = agent.wait(id);
        times.push(started.elapsed());
        assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
    }
    times.sort();
    println!(
        "bash cancel -> stopReason cancelled (tree of 3 processes killed): median {:.1} ms, p90 {:.1} ms, max {:.1} ms ({runs} runs)",
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.9).as_secs_f64() * 1e3,
        times[times.len() - 1].as_secs_f64() * 1e3
    );
    let median = percentile(&times, 0.5).as_secs_f64() * 1e3;
    summary::at_most("bash cancel -> cancelled (median)", median, 50.0, "ms");
}

/// Writes a session straight to disk in the journal format.
fn write_session(config: &std::path::Path, id: &str, updated: &str, journal: &str) {
    let dir = config.join("sessions").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let meta = json!({"v": 1, "sessionId": id, "cwd": "/tmp", "title": "bench",
        "createdAt": updated, "updatedAt": updated, "messages": 0});
    std::fs::write(dir.join("meta.json"), meta.to_string()).unwrap();
    std::fs::write(dir.join("journal.jsonl"), journal).unwrap();
}

/// session/list over 10,000 sessions; session/load of a 5,000-message session.
fn sessions() {
    let config = std::env::temp_dir().join("iac-code-bench-sessions");
    let _ = std::fs::remove_dir_all(&config);
    for n in 0..10_000u64 {
        let updated = format!("2026-01-01T{:02}:{:02}:{:02}Z", n / 3600, n / 60 % 60, n % 60);
        write_session(&config, &format!("00000000-0000-4000-8000-{n:012x}"), &updated, "");
    }
    let mut journal = String::new();
    for i in 0..1250 {
        journal.push_str(&format!(
            "{{\"v\":1,\"ts\":\"t\",\"type\":\"user\",\"text\":\"step {i}: check the module\"}}\n"
        ));
        journal.push_str(&format!("{{\"v\":1,\"ts\":\"t\",\"type\":\"assistant\",\"text\":\"Reading it.\",\"toolCalls\":[{{\"id\":\"c{i}\",\"name\":\"read_file\",\"arguments\":\"{{\\\"path\\\":\\\"m{i}.tf\\\"}}\"}}]}}\n"));
        journal.push_str(&format!("{{\"v\":1,\"ts\":\"t\",\"type\":\"tool_result\",\"callId\":\"c{i}\",\"content\":\"{}\",\"isError\":false}}\n", "resource x {} ".repeat(20)));
        journal.push_str("{\"v\":1,\"ts\":\"t\",\"type\":\"assistant\",\"text\":\"The module looks fine; nothing to change there.\"}\n");
    }
    let big = "10000000-0000-4000-8000-000000000000";
    write_session(&config, big, "2025-01-01T00:00:00Z", &journal);
    let env = [("IAC_CODE_CONFIG_DIR", config.display().to_string())];
    let mut agent = Agent::spawn(&env);
    agent.call("initialize", initialize_params());
    let mut list = Vec::new();
    for _ in 0..7 {
        let started = Instant::now();
        let page = agent.call("session/list", json!({}));
        list.push(started.elapsed());
        assert_eq!(page["result"]["sessions"].as_array().unwrap().len(), 100);
    }
    list.sort();
    let mut load = Vec::new();
    for _ in 0..7 {
        let started = Instant::now();
        let id =
            agent.send("session/load", json!({"sessionId": big, "cwd": "/tmp", "mcpServers": []}));
        let (replayed, response) = agent.wait(id);
        load.push(started.elapsed());
        assert!(response["result"].is_object(), "{response}");
        assert!(replayed >= 5000, "{replayed}");
        agent.call("session/close", json!({"sessionId": big}));
    }
    load.sort();
    println!(
        "session/list over 10,000 sessions: median {:.1} ms; session/load of a 5,000-message session (replay included): median {:.1} ms (7 runs each)",
        percentile(&list, 0.5).as_secs_f64() * 1e3,
        percentile(&load, 0.5).as_secs_f64() * 1e3
    );
    let ms = |v: &[Duration]| percentile(v, 0.5).as_secs_f64() * 1e3;
    summary::at_most("session/list, 10,000 sessions (median)", ms(&list), 100.0, "ms");
    summary::at_most("session/load, 5,000 messages (median)", ms(&load), 50.0, "ms");
    let _ = std::fs::remove_dir_all(&config);
}

/// The cost of one journal record, against the time one streamed update takes.
fn journal_append() {
    use iac_code::session::record::Record;
    use iac_code::session::store::{FileStore, Meta, SessionStore};
    let config = std::env::temp_dir().join("iac-code-bench-journal");
    let _ = std::fs::remove_dir_all(&config);
    let store = FileStore::new(&config);
    let meta = Meta {
        v: 1,
        session_id: "20000000-0000-4000-8000-000000000000".into(),
        cwd: "/tmp".into(),
        title: None,
        created_at: "t".into(),
        updated_at: "t".into(),
        forked_from: None,
        messages: 0,
        usage: None,
        additional_directories: Vec::new(),
    };
    let journal = store.create(meta).unwrap();
    let record = Record::Assistant {
        id: None,
        text: "x".repeat(200),
        thinking: String::new(),
        signed: Vec::new(),
        tool_calls: Vec::new(),
    };
    let n = 20_000;
    let started = Instant::now();
    for _ in 0..n {
        journal.append(&record).unwrap();
    }
    let per = started.elapsed() / n;
    println!(
        "journal append (200-byte message, no fsync): {:.2} us per record",
        per.as_secs_f64() * 1e6
    );
    summary::info("journal append per record", per.as_secs_f64() * 1e6, "us");
    drop(journal);
    let _ = std::fs::remove_dir_all(&config);
}

/// `read_file` of one small file, local against delegated to the client
/// (`fs/read_text_file`, one round trip each): 200 calls in one turn, each way.
fn delegated_read() {
    let calls = 200;
    let dir = std::env::temp_dir().join("iac-code-bench-delegated");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("main.tf"), "resource \"x\" \"y\" {}\n".repeat(40)).unwrap();
    let mut per_call = Vec::new();
    for delegated in [false, true] {
        let batch: Vec<(String, &str, Value)> = (0..calls)
            .map(|i| (format!("r{i}"), "read_file", json!({"path": "main.tf"})))
            .collect();
        let refs: Vec<(&str, &str, Value)> =
            batch.iter().map(|(id, name, args)| (id.as_str(), *name, args.clone())).collect();
        let llm = FakeLlm::start(vec![fake_llm::tool_replies(&refs), fake_llm::text_reply("ok")]);
        let env =
            [("IAC_CODE_BASE_URL", llm.base_url()), ("IAC_CODE_MODEL", "fake-model".to_string())];
        let mut agent = Agent::spawn(&env);
        let caps = json!({"fs": {"readTextFile": delegated, "writeTextFile": false}});
        agent.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": caps}));
        let session = agent.new_session(&dir);
        let started = Instant::now();
        let id = agent.prompt(&session);
        let needle = format!("\"id\":{id},");
        let mut line = String::new();
        loop {
            line.clear();
            assert!(agent.stdout.read_line(&mut line).unwrap() > 0, "agent exited");
            if line.contains("fs/read_text_file") {
                let request: Value = serde_json::from_str(&line).unwrap();
                let answer = json!({"jsonrpc": "2.0", "id": request["id"],
                    "result": {"content": "resource \"x\" \"y\" {}\n".repeat(40)}});
                writeln!(agent.stdin, "{answer}").unwrap();
                agent.stdin.flush().unwrap();
            } else if line.contains(&needle) && !line.contains("\"method\"") {
                break;
            }
        }
        per_call.push(started.elapsed() / calls);
    }
    println!(
        "read_file per call in a turn of {calls}: local {:.1} us, delegated to the client {:.1} us (one fs/read_text_file round trip: +{:.1} us)",
        per_call[0].as_secs_f64() * 1e6,
        per_call[1].as_secs_f64() * 1e6,
        (per_call[1].as_secs_f64() - per_call[0].as_secs_f64()) * 1e6
    );
    summary::info("read_file per call, local", per_call[0].as_secs_f64() * 1e6, "us");
    summary::info("read_file per call, delegated", per_call[1].as_secs_f64() * 1e6, "us");
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: run quickly then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("run with `cargo bench` to measure");
        return;
    }
    // `BENCH_ONLY=streaming cargo bench --bench throughput` runs one group (for profiling).
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    let run = |name: &str| only.is_empty() || only.split(',').any(|o| o == name);
    for (label, bin) in builds::builds() {
        if run("startup") {
            // The stub is compared with the static build, the artifact users get.
            let stub = if label == "static musl" { build_stub(&bin) } else { None };
            startup(label, &bin, stub.as_deref());
            memory(label, &bin);
        }
        if run("streaming") {
            streaming(label, &bin, false);
            streaming(label, &bin, true);
        }
        if run("latency") {
            chunk_latency(label, &bin);
        }
    }
    if run("cancel") {
        bash_cancel();
    }
    if run("delegated") {
        delegated_read();
    }
    if run("sessions") {
        sessions();
        journal_append();
    }
    summary::print("throughput");
}
