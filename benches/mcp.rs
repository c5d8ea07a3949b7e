//! MCP client benchmarks: the round trip of an `echo` tool over stdio and over Streamable
//! HTTP through our client, beside a bare client talking to the same server (the difference
//! is our cost); `session/new` with 0, 1 and 5 stdio servers through the real binary (the
//! servers start in parallel); and the RSS each connected stdio server costs the agent.
//! Run with `cargo bench --bench mcp`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[allow(dead_code)]
#[path = "support/agent.rs"]
mod agent;
#[path = "support/builds.rs"]
mod builds;
#[path = "support/mcp_echo.rs"]
mod mcp_echo;
#[allow(dead_code)]
#[path = "support/summary.rs"]
mod summary;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agent::Agent;
use iac_code::mcp::{Origin, ServerSpec, Transport};
use mcp_echo::answer;
use serde_json::{Value, json};

const CALLS: usize = 5_000;

/// The echo server (`support/mcp_echo.rs`) built with rustc: its own cost is the floor
/// the bare client measures.
fn build_server() -> PathBuf {
    let dir = std::env::temp_dir().join("iac-code-bench-mcp");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("echo_server");
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/support/mcp_echo.rs");
    let built = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .args(["--edition", "2021", "-C", "opt-level=2", "-o"])
        .arg(&out)
        .arg(source)
        .output()
        .expect("rustc");
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    out
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn call_line(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{}}}}}}"#
    )
}

/// Round trips of our client over `spec`.
fn ours(spec: &ServerSpec) -> Duration {
    let setup = iac_code::mcp::setup(
        &std::env::temp_dir(),
        Duration::from_secs(10),
        Duration::from_secs(10),
        None,
    );
    let (conn, tools) = iac_code::mcp::connect(spec, &setup).expect("connect");
    assert_eq!(tools.len(), 1);
    let mut times = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let start = Instant::now();
        conn.call_tool("echo", json!({}), Duration::from_secs(10)).expect("call");
        times.push(start.elapsed());
    }
    conn.close();
    median(times)
}

fn stdio(server: &Path) {
    let mut child =
        Command::new(server).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut bare = Vec::with_capacity(CALLS);
    for id in 0..CALLS {
        let start = Instant::now();
        writeln!(input, "{}", call_line(id)).unwrap();
        input.flush().unwrap();
        line.clear();
        output.read_line(&mut line).unwrap();
        bare.push(start.elapsed());
    }
    drop(input);
    let _ = child.wait();
    let bare = median(bare);
    let spec = ServerSpec {
        name: "echo".into(),
        transport: Transport::Stdio {
            command: server.display().to_string(),
            args: Vec::new(),
            env: Vec::new(),
        },
        origin: Origin::Client,
    };
    let ours = ours(&spec);
    println!("stdio echo round trip: ours {:.1} µs, bare client {:.1} µs", us(ours), us(bare));
    summary::info("stdio echo: round trip through our client (median)", us(ours), "µs");
    summary::at_most("stdio echo: ours - bare client", us(ours.saturating_sub(bare)), 500.0, "µs");
}

/// A keep-alive HTTP server answering each POST with `answer` as JSON.
fn http_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || serve(stream));
        }
    });
    format!("http://{addr}/mcp")
}

fn serve(stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let body = String::from_utf8_lossy(&body);
        let reply = match answer(&body) {
            Some(json) => format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\n\
                 Content-Length: {}\r\n\r\n{json}",
                json.len()
            ),
            None => "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_string(),
        };
        if out.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

fn http() {
    let url = http_server();
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let stream = TcpStream::connect(&addr).unwrap();
    stream.set_nodelay(true).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    let mut bare = Vec::with_capacity(CALLS);
    for id in 0..CALLS {
        let body = call_line(id);
        let start = Instant::now();
        write!(
            out,
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut length = 0;
        let mut line = String::new();
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut answer = vec![0; length];
        reader.read_exact(&mut answer).unwrap();
        bare.push(start.elapsed());
    }
    let bare = median(bare);
    let spec = ServerSpec {
        name: "echo".into(),
        transport: Transport::Http { url, headers: Vec::new() },
        origin: Origin::Client,
    };
    let ours = ours(&spec);
    println!("http echo round trip: ours {:.1} µs, bare client {:.1} µs", us(ours), us(bare));
    summary::info("http echo: round trip through our client (median)", us(ours), "µs");
    summary::at_most("http echo: ours - bare client", us(ours.saturating_sub(bare)), 500.0, "µs");
}

/// The floor for starting `n` servers at once: spawn them in parallel and wait for each
/// one's answer to `initialize`, from threads of this process (median of 11).
fn bare_start(server: &Path, n: usize) -> Duration {
    let mut runs = Vec::new();
    for _ in 0..11 {
        let start = Instant::now();
        let threads: Vec<_> = (0..n)
            .map(|_| {
                let server = server.to_path_buf();
                std::thread::spawn(move || {
                    let mut child = Command::new(&server)
                        .current_dir(std::env::temp_dir())
                        .stdin(Stdio::piped())
                        .stdout(Stdio::piped())
                        .spawn()
                        .unwrap();
                    let mut input = child.stdin.take().unwrap();
                    let init = r#"{"id":0,"jsonrpc":"2.0","method":"initialize","params":{}}"#;
                    writeln!(input, "{init}").unwrap();
                    let mut line = String::new();
                    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
                    drop(input);
                    child
                })
            })
            .collect();
        let children: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        runs.push(start.elapsed());
        for mut child in children {
            let _ = child.wait();
        }
    }
    median(runs)
}

fn entry(server: &Path, n: usize) -> Value {
    json!({"name": format!("echo{n}"), "command": server, "args": [], "env": []})
}

/// `session/new` with 0, 1 and 5 stdio servers, and RSS per connected server.
fn sessions(label: &str, bin: &Path, server: &Path) {
    let cwd = std::env::temp_dir();
    let mut agent = Agent::spawn_bin(bin, &[]);
    agent.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}}));
    let mut time = |servers: usize| {
        let mut runs = Vec::new();
        for _ in 0..11 {
            let list: Vec<Value> = (0..servers).map(|n| entry(server, n)).collect();
            let start = Instant::now();
            let response = agent.call("session/new", json!({"cwd": cwd, "mcpServers": list}));
            runs.push(start.elapsed());
            let id = response["result"]["sessionId"].clone();
            let ready = response.pointer("/result/_meta/iacCode/mcpServers").map_or(0, |s| {
                s.as_array().unwrap().iter().filter(|s| s["status"] == "ready").count()
            });
            assert_eq!(ready, servers, "{response}");
            agent.call("session/close", json!({"sessionId": id}));
        }
        median(runs)
    };
    let (none, one, five) = (time(0), time(1), time(5));
    let (bare_one, bare_five) = (bare_start(server, 1), bare_start(server, 5));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "[{label}] session/new: no server {:.2} ms, 1 stdio server {:.2} ms, 5 {:.2} ms; \
         bare start and initialize of 1 server {:.2} ms, of 5 at once {:.2} ms",
        ms(none),
        ms(one),
        ms(five),
        ms(bare_one),
        ms(bare_five)
    );
    summary::info(&format!("[{label}] session/new, 1 stdio server"), ms(one), "ms");
    summary::info(&format!("[{label}] session/new, 5 stdio servers"), ms(five), "ms");
    summary::info(&format!("[{label}] bare: 5 servers started at once"), ms(bare_five), "ms");
    // In parallel, five servers cost what starting five at once costs the machine (on two
    // cores that is not one server's time), plus what a session costs without servers.
    let extra = ms(five.saturating_sub(none));
    summary::at_most(
        &format!("[{label}] session/new: 5 servers over none, / bare 5 at once"),
        extra / ms(bare_five).max(1e-6),
        1.5,
        "x",
    );

    let base = agent.rss_kib();
    const SERVERS: usize = 20;
    for s in 0..SERVERS / 5 {
        let list: Vec<Value> = (0..5).map(|n| entry(server, s * 5 + n)).collect();
        agent.call("session/new", json!({"cwd": cwd, "mcpServers": list}));
    }
    let per = (agent.rss_kib().saturating_sub(base)) as f64 / SERVERS as f64;
    println!("[{label}] RSS per connected stdio server: {per:.1} KiB");
    summary::at_most(&format!("[{label}] RSS per connected stdio server"), per, 64.0, "KiB");
}

fn main() {
    iac_code::child::init();
    let server = build_server();
    stdio(&server);
    http();
    for (label, bin) in builds::builds() {
        sessions(label, &bin, &server);
    }
    summary::print("mcp");
}
