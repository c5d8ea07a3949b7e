//! The HTTP+SSE transport under load: 1,000 (then 250) concurrent connections, each with an
//! open SSE stream and a session streaming a paced reply from the fake LLM, the prompts
//! started over one chunk interval; then 10,000 connect/initialize/GET/DELETE cycles. Run
//! with `cargo bench --bench http` (the bench build, and the static musl binary when built).
//! First measures two floors of the machine: one thread wake-up, and one event relayed by
//! one thread between two loopback sockets (the server's path for an event with no work
//! in it). Prints RSS, threads, chunk-to-frame latency, events/s, the server's CPU per
//! event over the steady state (in all and by thread) and the load generator's own CPU,
//! then a summary table against the targets (a miss never fails the run).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "support/acp_http.rs"]
mod acp_http;
#[path = "support/builds.rs"]
mod builds;
#[allow(dead_code, unused_imports)]
#[path = "../tests/support/fake_llm/mod.rs"]
mod fake_llm;
#[path = "support/server.rs"]
mod server;
#[allow(dead_code)]
#[path = "support/summary.rs"]
mod summary;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use acp_http::{initialize, open_stream, post, read_data, read_events};
use fake_llm::{FakeLlm, Reply};
use serde_json::json;

const CONNECTIONS: usize = 1000;

const CHUNKS: usize = 60;
const PACE_MS: u64 = 50;
const CHURN: usize = 10_000;

fn spawn_server(bin: &Path, llm: &FakeLlm) -> (Child, String) {
    let home = std::env::temp_dir().join("iac-code-bench-http");
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(home.join("work")).unwrap();
    let mut command = Command::new(bin);
    command
        .args(["acp", "--transport", "http", "--port", "0", "--max-connections", "8192"])
        .env_clear()
        .env("HOME", &home)
        .env("IAC_CODE_CONFIG_DIR", home.join("config"))
        .env("IAC_CODE_LOG", "warn")
        .envs(
            std::env::var("BENCH_SERVER_ENV")
                .ok()
                .and_then(|v| v.split_once('=').map(|(k, v)| (k.to_string(), v.to_string()))),
        )
        .env("IAC_CODE_PROVIDER", "openai_compatible")
        .env("IAC_CODE_BASE_URL", llm.base_url())
        .env("IAC_CODE_MODEL", "fake-model");
    server::start_http(&mut command)
}

fn now_micros() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros()
}

fn proc_status(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(key)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// User plus system CPU time of a process, in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

/// CPU seconds of each kind of thread (its name without the number or id), from
/// `schedstat` (nanoseconds: a thread's share is far below the 10 ms of `stat`'s ticks).
fn cpu_by_thread(pid: u32) -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return out };
    for task in tasks.flatten() {
        let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        let kind = name.trim().split('-').next().unwrap_or_default().to_string();
        *out.entry(kind).or_default() += schedstat_seconds(&task.path());
    }
    out
}

/// CPU seconds a thread has run, from its `schedstat` (nanoseconds); 0 if unreadable.
fn schedstat_seconds(task: &Path) -> f64 {
    let stat = std::fs::read_to_string(task.join("schedstat")).unwrap_or_default();
    let nanos: u64 = stat.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0);
    nanos as f64 / 1e9
}

fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count()).unwrap_or(0)
}

/// The steady state, from the start of the prompts: every stream has started (starts are
/// spread over the first chunk interval) and none has ended (each lasts CHUNKS x PACE_MS).
const WINDOW: (Duration, Duration) = (Duration::from_millis(500), Duration::from_millis(2500));

/// One chunk as a client saw it: when it arrived (since the prompts started) and its
/// latency from the fake LLM's write, in microseconds.
struct Seen {
    at: u64,
    latency: u64,
}

#[expect(
    clippy::too_many_lines,
    reason = "one load run read top to bottom: start the server, open the streams, release them together, measure, report"
)]
fn load(label: &str, bin: &Path, n: usize) {
    // One pacer thread writes every stream's pieces (not a sleeping thread per stream).
    let reply = || Reply::Paced { chunks: CHUNKS, every_ms: PACE_MS };
    let llm = FakeLlm::start((0..n).map(|_| reply()).collect());
    let (mut child, addr) = spawn_server(bin, &llm);
    let pid = child.id();
    let cwd = std::env::temp_dir().join("iac-code-bench-http/work");
    let (tx, rx) = crossbeam_channel::unbounded::<(Vec<Seen>, bool)>();
    let (ready_tx, ready_rx) = crossbeam_channel::unbounded::<()>();
    let (go_tx, go_rx) = crossbeam_channel::bounded::<Instant>(0);
    let go_rx = Arc::new(go_rx);
    let mut workers = Vec::new();
    for i in 0..n {
        let (addr, cwd, tx, ready_tx, go_rx) =
            (addr.clone(), cwd.clone(), tx.clone(), ready_tx.clone(), go_rx.clone());
        workers.push(std::thread::Builder::new().stack_size(256 << 10).spawn(move || {
            let conn = initialize(&addr);
            let mut stream = open_stream(&addr, &conn);
            post(&addr, Some(&conn), &json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}}));
            let mut session = String::new();
            read_events(&mut stream, |v| {
                if v["id"] == 1 {
                    session = v["result"]["sessionId"].as_str().unwrap().to_string();
                    return false;
                }
                true
            });
            ready_tx.send(()).unwrap();
            let Ok(started) = go_rx.recv() else { return };
            // Starts spread evenly over one chunk interval, as users' prompts would be.
            let offset = Duration::from_micros(i as u64 * PACE_MS * 1000 / n as u64);
            std::thread::sleep((started + offset).saturating_duration_since(Instant::now()));
            post(&addr, Some(&conn), &json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}}));
            let mut seen = Vec::new();
            let mut ended = false;
            // A piece is found by its text alone; only other frames are parsed.
            read_data(&mut stream, |data| {
                if let Some((_, rest)) = data.split_once(r#""text":"t="#) {
                    let stamp: u128 = rest[..rest.find('"').unwrap()].parse().unwrap();
                    let latency = (now_micros() - stamp) as u64;
                    seen.push(Seen { at: started.elapsed().as_micros() as u64, latency });
                    return true;
                }
                let v: serde_json::Value = serde_json::from_str(data).unwrap();
                if v["id"] == 2 {
                    ended = v["result"]["stopReason"] == "end_turn";
                    return false;
                }
                true
            });
            tx.send((seen, ended)).unwrap();
        }).unwrap());
    }
    for _ in 0..n {
        ready_rx.recv().unwrap();
    }
    println!(
        "[{label}] before the prompts: {n} connections with a stream and a session: RSS {} KiB, threads {}",
        proc_status(pid, "VmRSS:"),
        proc_status(pid, "Threads:")
    );
    let me = std::process::id();
    let started = Instant::now();
    for _ in 0..n {
        go_tx.send(started).unwrap();
    }
    // CPU over the steady state: the server, and this process (clients and fake LLM).
    std::thread::sleep((started + WINDOW.0).saturating_duration_since(Instant::now()));
    let (server_before, ours_before, at_before) =
        (cpu_seconds(pid), cpu_seconds(me), Instant::now());
    let threads_before = cpu_by_thread(pid);
    std::thread::sleep((started + WINDOW.1).saturating_duration_since(Instant::now()));
    let threads_after = cpu_by_thread(pid);
    let (server_cpu, ours_cpu, window) = (
        cpu_seconds(pid) - server_before,
        cpu_seconds(me) - ours_before,
        at_before.elapsed().as_secs_f64(),
    );
    let mut all = Vec::new();
    let mut served = 0;
    let mut peak_threads = 0;
    let mut peak_rss = 0;
    for _ in 0..n {
        let (seen, ended) =
            rx.recv_timeout(Duration::from_secs(120)).expect("a connection finished");
        peak_threads = peak_threads.max(proc_status(pid, "Threads:"));
        peak_rss = peak_rss.max(proc_status(pid, "VmRSS:"));
        served += usize::from(ended);
        all.extend(seen);
    }
    let elapsed = started.elapsed();
    for w in workers {
        w.join().unwrap();
    }
    let (from, to) = (WINDOW.0.as_micros() as u64, WINDOW.1.as_micros() as u64);
    let in_window = all.iter().filter(|s| (from..to).contains(&s.at)).count();
    let mut latencies: Vec<u64> = all.iter().map(|s| s.latency).collect();
    latencies.sort();
    let pct = |v: &[u64], p: f64| v[((v.len() - 1) as f64 * p) as usize] as f64 / 1000.0;
    let per_event = server_cpu / in_window.max(1) as f64 * 1e6;
    println!(
        "[{label}] {n} concurrent SSE streams, prompts started over {PACE_MS} ms, {CHUNKS} chunks each {PACE_MS} ms apart: served {served}/{n}; chunk->frame latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; {:.0} events/s; server peak RSS {peak_rss} KiB, peak threads {peak_threads}",
        pct(&latencies, 0.5),
        pct(&latencies, 0.99),
        pct(&latencies, 1.0),
        all.len() as f64 / elapsed.as_secs_f64(),
    );
    println!(
        "[{label}] steady state ({window:.2} s, {in_window} events): server {:.0}% of one core, {per_event:.1} us CPU per event; load generator and fake LLM {:.0}% of one core",
        100.0 * server_cpu / window,
        100.0 * ours_cpu / window,
    );
    let by_kind: Vec<String> = threads_after
        .iter()
        .map(|(kind, after)| (kind, after - threads_before.get(kind).copied().unwrap_or(0.0)))
        .filter(|(_, cpu)| *cpu > 0.0)
        .map(|(kind, cpu)| format!("{kind} {:.1} us", cpu / in_window.max(1) as f64 * 1e6))
        .collect();
    println!("[{label}] server CPU per event by thread: {}", by_kind.join(", "));
    summary::at_most(
        &format!("[{label}] {n} streams: server CPU per event"),
        per_event,
        20.0,
        "us",
    );
    summary::at_most(
        &format!("[{label}] {n} streams: chunk -> frame p99"),
        pct(&latencies, 0.99),
        50.0,
        "ms",
    );
    summary::info(
        &format!("[{label}] {n} streams: events/s"),
        all.len() as f64 / elapsed.as_secs_f64(),
        "/s",
    );
    summary::info(
        &format!("[{label}] {n} streams: load generator CPU"),
        100.0 * ours_cpu / window,
        "%",
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// What one thread hand-off costs on this machine, the floor under every hop an event
/// takes: a sender that sleeps between events (as the fake LLM does) and a receiver parked
/// on a channel; CPU of both per event.
fn hand_off_floor() {
    let process_cpu = || -> f64 {
        let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0.0 };
        tasks.flatten().map(|t| schedstat_seconds(&t.path())).sum()
    };
    let events = 2000u32;
    let (tx, rx) = crossbeam_channel::unbounded::<u32>();
    let receiver = std::thread::spawn(move || rx.iter().count());
    let before = process_cpu();
    for i in 0..events {
        tx.send(i).unwrap();
        std::thread::sleep(Duration::from_micros(500));
    }
    let cpu = process_cpu() - before;
    drop(tx);
    assert_eq!(receiver.join().unwrap(), events as usize);
    let per_event = cpu / f64::from(events) * 1e6;
    println!(
        "one paced hand-off between two threads (a timer sleep and a channel wake): {per_event:.1} us of CPU per event, {:.1} us per wake-up",
        per_event / 2.0
    );
    summary::info("floor: one thread wake-up (paced)", per_event / 2.0, "us");
}

/// What the server's path for one event costs with no work in it: a thread blocked in a
/// read on a loopback TCP socket is woken by a paced 200-byte write (as the prompt thread
/// is by the LLM) and writes the bytes to another loopback socket (as it writes the SSE
/// event), whose reader takes them. The relay thread's own CPU per event is the floor under
/// any design that wakes one thread per event on this machine.
fn relay_floor() {
    use std::net::TcpListener;
    let events = 2000u32;
    let inbound = TcpListener::bind("127.0.0.1:0").unwrap();
    let outbound = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut llm = TcpStream::connect(inbound.local_addr().unwrap()).unwrap();
    let client = TcpStream::connect(outbound.local_addr().unwrap()).unwrap();
    let (mut from_llm, _) = inbound.accept().unwrap();
    let (mut to_client, _) = outbound.accept().unwrap();
    let reader = std::thread::spawn(move || std::io::copy(&mut &client, &mut std::io::sink()));
    let relay = std::thread::spawn(move || {
        let me = Path::new("/proc/thread-self");
        let mut buf = [0u8; 4096];
        let mut before = None;
        loop {
            let n = from_llm.read(&mut buf).unwrap();
            // From the first event on, once its thread is warm.
            let before = *before.get_or_insert_with(|| schedstat_seconds(me));
            if n == 0 {
                return schedstat_seconds(me) - before;
            }
            to_client.write_all(&buf[..n]).unwrap();
        }
    });
    let event = [b'x'; 200];
    for _ in 0..events {
        llm.write_all(&event).unwrap();
        std::thread::sleep(Duration::from_micros(500));
    }
    drop(llm);
    let cpu = relay.join().unwrap();
    assert_eq!(reader.join().unwrap().unwrap(), 200 * u64::from(events));
    let per_event = cpu / f64::from(events) * 1e6;
    println!(
        "one paced event relayed by one thread between two loopback TCP sockets (woken by the read, then one write): {per_event:.1} us of that thread's CPU per event; the server's path for an event is this plus its work"
    );
    summary::info("floor: one event relayed by one thread", per_event, "us");
}

fn churn() {
    let llm = FakeLlm::start(Vec::new());
    let (mut child, addr) = spawn_server(Path::new(env!("CARGO_BIN_EXE_iac-code")), &llm);
    let pid = child.id();
    let settle = |what: &str| -> (u64, usize) {
        // Threads and sockets go away asynchronously; wait until the counts stop moving.
        let mut last = (0, 0);
        for _ in 0..100 {
            let now = (proc_status(pid, "Threads:"), fds(pid));
            if now == last {
                return now;
            }
            last = now;
            std::thread::sleep(Duration::from_millis(100));
        }
        println!("{what}: counts still moving");
        last
    };
    let before = settle("before");
    let started = Instant::now();
    for _ in 0..CHURN {
        let conn = initialize(&addr);
        let mut stream = open_stream(&addr, &conn);
        let mut del = TcpStream::connect(&addr).unwrap();
        write!(del, "DELETE /acp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAcp-Connection-Id: {conn}\r\n\r\n").unwrap();
        let mut sink = Vec::new();
        del.read_to_end(&mut sink).unwrap();
        assert!(sink.starts_with(b"HTTP/1.1 200"));
        read_events(&mut stream, |_| true); // ends when the server ends the stream
    }
    let elapsed = started.elapsed();
    let after = settle("after");
    println!(
        "churn: {CHURN} connect/initialize/GET/DELETE cycles in {:.1} s ({:.0}/s); threads {} -> {}, descriptors {} -> {}",
        elapsed.as_secs_f64(),
        CHURN as f64 / elapsed.as_secs_f64(),
        before.0,
        after.0,
        before.1,
        after.1
    );
    summary::info("churn cycles/s", CHURN as f64 / elapsed.as_secs_f64(), "/s");
    let _ = child.kill();
    let _ = child.wait();
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("run with `cargo bench --bench http` to measure");
        return;
    }
    // `BENCH_CONNECTIONS=n` measures n streams only; by default 1,000 and 250.
    let counts = match std::env::var("BENCH_CONNECTIONS").ok().and_then(|v| v.parse().ok()) {
        Some(n) => vec![n],
        None => vec![CONNECTIONS, 250],
    };
    hand_off_floor();
    relay_floor();
    for (label, bin) in builds::builds() {
        for &n in &counts {
            load(label, &bin, n);
        }
    }
    churn();
    summary::print("http");
}
