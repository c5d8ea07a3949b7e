//! The hardening, attack by attack, on the real binary: another local user over HTTP
//! without a token, web_fetch to internal addresses (directly, by a redirect, by a name),
//! a swapper racing the file tools with symlinks, secrets in a command's environment, the
//! sensitive names, daemons that try to outlive their call, and strict HTTP framing.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, Permission};
use crate::support::fake_llm::{FakeLlm, text_reply, tool_replies, tool_reply};
use crate::support::http_client::HttpServer;
use crate::support::http_fixture::{HttpFixture, Route};
use crate::support::procs::{alive, parent_of};
use crate::support::skip::{Ci, skip};
use crate::support::workspace::Workspace;
use crate::tools::{run_tool, tool_result};

/// Runs `script` with bash as uid/gid 65534, returning what it printed; `None` (with the
/// reason printed) when this machine cannot do that.
fn as_other_user(script: &str) -> Option<String> {
    // Only root may switch users.
    let root = std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .is_some_and(|l| l.split_whitespace().nth(2) == Some("0"));
    if !root {
        skip("the tests do not run as root, so no client can run as another user", Ci::Skips);
        return None;
    }
    let output = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "bash", "-c", script])
        .output();
    match output {
        Ok(out) if out.status.success() || !out.stdout.is_empty() => {
            Some(String::from_utf8_lossy(&out.stdout).into_owned())
        }
        Ok(out) => {
            skip(
                &format!("setpriv/bash failed: {}", String::from_utf8_lossy(&out.stderr)),
                Ci::Skips,
            );
            None
        }
        Err(err) => {
            skip(&format!("setpriv is not available ({err})"), Ci::Skips);
            None
        }
    }
}

/// Standard base64 of `text` (to pass a script through a shell unquoted).
fn base64(text: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes = text.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A bash script that POSTs `initialize` to `addr` over /dev/tcp with `extra` headers.
fn initialize_script(addr: &str, extra: &str) -> String {
    let (host, port) = addr.rsplit_once(':').unwrap();
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    format!(
        "exec 3<>/dev/tcp/{host}/{port}; printf 'POST /acp HTTP/1.1\\r\\nHost: {addr}\\r\\n\
         Content-Type: application/json\\r\\nAccept: application/json, text/event-stream\\r\\n\
         {extra}Content-Length: {}\\r\\nConnection: close\\r\\n\\r\\n%s' '{body}' >&3; cat <&3",
        body.len()
    )
}

#[test]
fn another_local_user_is_refused_without_a_token_and_served_with_one() {
    let ws = Workspace::new("sec-other-user");
    let open = HttpServer::spawn(&ws, None, &[], &[]);
    // The server's own user is served as before.
    assert!(open.initialize().len() > 10);
    let Some(reply) = as_other_user(&initialize_script(&open.addr, "")) else { return };
    assert!(reply.starts_with("HTTP/1.1 403"), "{reply}");
    assert!(reply.contains("IACCODE_ACP_HTTP_TOKEN"), "the answer says what to set: {reply}");
    assert!(open.wait_log("refused a connection").contains("is not uid"));

    // From another address of this host to 127.0.0.1: still a local user, still checked.
    let source = std::net::UdpSocket::bind("0.0.0.0:0")
        .and_then(|s| s.connect("192.0.2.1:9").and_then(|_| s.local_addr()));
    match source {
        Ok(source) if !source.ip().is_loopback() && !source.ip().is_unspecified() => {
            let (host, port) = open.addr.rsplit_once(':').unwrap();
            let body =
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
            let python = format!(
                "import socket\ns = socket.socket()\ns.bind(('{}', 0))\ns.connect(('{host}', {port}))\n\
                 s.sendall(b'POST /acp HTTP/1.1\\r\\nHost: {}\\r\\nContent-Type: application/json\\r\\n\
                 Content-Length: {}\\r\\nConnection: close\\r\\n\\r\\n{body}')\n\
                 print(s.recv(65536).decode(errors='replace'))",
                source.ip(),
                open.addr,
                body.len()
            );
            let script = format!("python3 -c \"$(printf '%s' '{}' | base64 -d)\"", base64(&python));
            match as_other_user(&script) {
                Some(reply) if reply.starts_with("HTTP/1.1") => {
                    assert!(reply.starts_with("HTTP/1.1 403"), "from {source}: {reply}");
                }
                _ => skip("python3 cannot connect from another local address here", Ci::Skips),
            }
        }
        _ => skip("this host has no non-loopback address to connect from", Ci::Skips),
    }

    let token = "a-long-random-token-for-tests";
    let guarded = HttpServer::spawn(&ws, None, &[], &[("IACCODE_ACP_HTTP_TOKEN", token)]);
    let auth = format!("Authorization: Bearer {token}\\r\\n");
    let reply = as_other_user(&initialize_script(&guarded.addr, &auth)).unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "with the token anyone may connect: {reply}");
    let reply = as_other_user(&initialize_script(&guarded.addr, "")).unwrap();
    assert!(reply.starts_with("HTTP/1.1 401"), "without it, nobody: {reply}");
}

/// One web_fetch in a session of `mode`, questions answered with `permission`.
fn fetch(ws: &Workspace, url: &str, mode: &str, permission: Permission) -> (String, Vec<Value>) {
    let llm = FakeLlm::start(vec![
        tool_reply("f1", "web_fetch", json!({"url": url})),
        text_reply("done"),
    ]);
    let (mut acp, session) = AcpProcess::session_in_mode(ws, &llm, mode);
    acp.set_permission(permission);
    let (msgs, response) = acp.prompt(&session, "go");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{}", acp.context());
    let asked = msgs.iter().filter(|m| m["method"] == "session/request_permission").cloned();
    (tool_result(&llm, 1), asked.collect())
}

#[test]
fn web_fetch_to_internal_addresses_asks_or_is_refused() {
    let ws = Workspace::new("sec-fetch");
    let secret =
        HttpFixture::start(vec![("/latest/meta-data", Route::ok("text/plain", "AKIA-SECRET"))]);
    let url = secret.url("/latest/meta-data");
    // Plan mode: refused without a question, and the server never hears of it.
    let (result, asked) = fetch(&ws, &url, "plan", Permission::AllowOnce);
    assert!(asked.is_empty(), "plan mode refuses outright");
    assert!(result.contains("internal") && result.contains("loopback"), "{result}");
    assert!(secret.hits().is_empty(), "nothing reached the internal server");
    // Default mode: asks every time, never "always"; a refusal sends nothing.
    let (result, asked) = fetch(&ws, &url, "default", Permission::RejectOnce);
    assert_eq!(asked.len(), 1);
    let options = asked[0]["params"]["options"].as_array().unwrap();
    assert!(options.iter().all(|o| !o["kind"].as_str().unwrap().ends_with("always")));
    assert_eq!(result, "Permission denied.");
    assert!(secret.hits().is_empty());
    // Even accept_edits asks; allowed once, it fetches.
    let (result, _) = fetch(&ws, &url, "accept_edits", Permission::AllowOnce);
    assert!(result.contains("AKIA-SECRET"), "{result}");

    // A redirect to an internal address is judged before it is followed.
    let hidden = HttpFixture::start(vec![("/x", Route::ok("text/plain", "HIDDEN"))]);
    let port = hidden.url("/x").rsplit(':').next().unwrap().to_string();
    let hop = format!("http://localhost:{port}");
    let front = HttpFixture::start(vec![("/go", Route::redirect(&format!("{hop}/x")))]);
    let (result, _) = fetch(&ws, &front.url("/go"), "plan", Permission::AllowOnce);
    assert!(result.contains("internal") || result.contains("loopback"), "{result}");
    assert!(front.hits().is_empty() && hidden.hits().is_empty(), "plan mode fetched nothing");
}

#[test]
fn a_redirect_to_loopback_asks_again_and_a_refusal_stops_it() {
    let ws = Workspace::new("sec-redirect");
    let hidden = HttpFixture::start(vec![("/x", Route::ok("text/plain", "HIDDEN"))]);
    let port = hidden.url("/x").rsplit(':').next().unwrap().to_string();
    let front =
        HttpFixture::start(vec![("/go", Route::redirect(&format!("http://localhost:{port}/x")))]);
    let llm = FakeLlm::start(vec![
        tool_reply("f1", "web_fetch", json!({"url": front.url("/go")})),
        text_reply("done"),
    ]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.set_permission(Permission::Manual);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
    );
    let mut answered = 0;
    let response = loop {
        let msg = acp.recv();
        if msg["method"] == "session/request_permission" {
            answered += 1;
            // Allow the first hop, refuse the redirect's.
            let option = if answered == 1 { "allow_once" } else { "reject_once" };
            if answered == 2 {
                let title = msg["params"]["toolCall"]["title"].as_str().unwrap();
                assert!(title.contains("localhost"), "the redirect's target is named: {title}");
            }
            acp.respond(
                msg["id"].clone(),
                json!({"outcome": {"outcome": "selected", "optionId": option}}),
            );
        } else if msg["id"] == id {
            break msg;
        }
    };
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(answered, 2, "each internal hop asks");
    assert_eq!(front.hits(), ["/go"]);
    assert!(hidden.hits().is_empty(), "the refused hop was never fetched");
    assert_eq!(tool_result(&llm, 1), "Permission denied.");
}

#[test]
fn a_name_that_resolves_to_an_internal_address_is_internal() {
    let ws = Workspace::new("sec-fetch-name");
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let name = name.trim().to_ascii_lowercase();
    let resolved: Vec<std::net::IpAddr> =
        std::net::ToSocketAddrs::to_socket_addrs(&(name.as_str(), 80))
            .map(|a| a.map(|a| a.ip()).collect())
            .unwrap_or_default();
    let internal = |ip: &std::net::IpAddr| match ip {
        std::net::IpAddr::V4(v4) => v4.is_loopback() || v4.is_private() || v4.is_link_local(),
        std::net::IpAddr::V6(v6) => v6.is_loopback(),
    };
    if name.is_empty()
        || name == "localhost"
        || resolved.is_empty()
        || !resolved.iter().all(internal)
    {
        skip(
            &format!(
                "the host name {name:?} does not resolve to internal addresses only ({resolved:?})"
            ),
            Ci::Skips,
        );
        return;
    }
    let (result, asked) = fetch(&ws, &format!("http://{name}:9/x"), "plan", Permission::AllowOnce);
    assert!(asked.is_empty());
    assert!(result.contains(&name) && result.contains("internal"), "{result}");
}

#[test]
fn a_racing_swapper_never_gets_an_outside_byte_out() {
    let ws = Workspace::new("sec-race");
    let outside = ws.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("f.txt"), "OUTSIDE-SECRET\n").unwrap();
    std::fs::write(outside.join("only-outside.txt"), "OUTSIDE-SECRET\n").unwrap();
    ws.write("real/f.txt", "inside\n");
    std::os::unix::fs::symlink(&outside, ws.path("link")).unwrap();
    // The swapper: `d` is a real directory, then missing, then a symlink to outside, ...
    let stop = Arc::new(AtomicBool::new(false));
    let (flag, project) = (Arc::clone(&stop), ws.project());
    let swapper = std::thread::spawn(move || {
        let (real, link, d) = (project.join("real"), project.join("link"), project.join("d"));
        let mut flips = 0u64;
        while !flag.load(Ordering::Relaxed) {
            for (from, to) in [(&real, &d), (&d, &real), (&link, &d), (&d, &link)] {
                let _ = std::fs::rename(from, to);
            }
            flips += 1;
        }
        flips
    });
    let round: Vec<(String, &str, Value)> = (0..50)
        .flat_map(|i| {
            [
                (format!("r{i}"), "read_file", json!({"path": "d/f.txt"})),
                (
                    format!("g{i}"),
                    "grep",
                    json!({"pattern": "SECRET", "path": "d", "output_mode": "content"}),
                ),
                (format!("o{i}"), "glob", json!({"pattern": "d/*.txt"})),
                (format!("l{i}"), "list_files", json!({"path": "d"})),
                (
                    format!("w{i}"),
                    "write_file",
                    json!({"path": format!("d/new-{i}.txt"), "content": "x"}),
                ),
            ]
        })
        .collect();
    let rounds = 8;
    let mut script = Vec::new();
    for _ in 0..rounds {
        let calls: Vec<(&str, &str, Value)> =
            round.iter().map(|(id, name, args)| (id.as_str(), *name, args.clone())).collect();
        script.push(tool_replies(&calls));
    }
    script.push(text_reply("done"));
    let llm = FakeLlm::start(script);
    // How long the results are depends on how the race goes (a listed directory or an
    // error), so the context may pass the default compaction threshold, and compacting
    // would ask the LLM for a summary the script does not hold: a big window keeps it out.
    let mut acp =
        AcpProcess::spawn_with_llm(&ws, &llm, &[("IAC_CODE_CONTEXT_WINDOW", "100000000")]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "accept_edits"}));
    // Anything that asks (an outside path judged as such) is refused.
    acp.set_permission(Permission::RejectOnce);
    let (msgs, response) = acp.prompt(&session, "go");
    stop.store(true, Ordering::Relaxed);
    let flips = swapper.join().unwrap();
    assert_eq!(response["result"]["stopReason"], "end_turn", "{}", acp.context());
    assert!(flips > 100, "the swapper ran ({flips} flips)");
    // Every result the model got, and every update the client saw.
    let bodies = llm.bodies();
    let results: Vec<String> = bodies
        .iter()
        .flat_map(|b| b["messages"].as_array().cloned().unwrap_or_default())
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(results.len() >= rounds * round.len(), "{} results", results.len());
    for text in results.iter().chain(msgs.iter().map(|m| m.to_string()).collect::<Vec<_>>().iter())
    {
        assert!(!text.contains("OUTSIDE-SECRET"), "an outside byte got out: {text}");
        assert!(!text.contains("only-outside"), "an outside name got out: {text}");
    }
    let written: Vec<_> =
        std::fs::read_dir(&outside).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(written.len(), 2, "nothing was written outside: {written:?}");
}

#[test]
fn commands_never_see_our_secrets() {
    let ws = Workspace::new("sec-env");
    let llm = FakeLlm::start(vec![
        tool_reply("b1", "bash", json!({"command": "env"})),
        text_reply("done"),
    ]);
    let secrets = [
        ("IAC_CODE_API_KEY", "sk-provider-secret-1"),
        ("IACCODE_API_KEY", "sk-provider-secret-2"),
        ("OPENAI_API_KEY", "sk-provider-secret-3"),
        ("ANTHROPIC_API_KEY", "sk-provider-secret-4"),
        ("IACCODE_ACP_HTTP_TOKEN", "http-token-secret-5"),
        ("IAC_CODE_THINKING_BUDGET", "2048"),
    ];
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &secrets);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    let (_, response) = acp.prompt(&session, "go");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{}", acp.context());
    let result = tool_result(&llm, 1);
    assert!(result.contains("IAC_CODE_TOOL_RUN="), "the marker is kept: {result}");
    assert!(result.contains("HOME="), "the rest of the environment is kept");
    for (name, value) in secrets {
        assert!(!result.contains(value), "{name} reached the command: {result}");
        assert!(!result.contains(&format!("{name}=")), "{name} reached the command");
    }
}

#[test]
fn each_new_sensitive_name_asks() {
    let ws = Workspace::new("sec-names");
    let private_key =
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----\n";
    let reads = [
        ("server.key", "k"),
        ("tls/cert.pem", "k"),
        ("id_dsa", "k"),
        ("terraform.tfstate", "{}"),
        ("env/prod/terraform.tfstate.backup", "{}"),
        ("prod.tfvars", "password = \"x\""),
        (".bash_history", "ls"),
        ("cert.p12", "k"),
        ("notes/deploy-key", private_key),
    ];
    for (rel, body) in reads {
        ws.write(rel, body);
        let run = run_tool(&ws, "read_file", json!({"path": rel}), Permission::RejectOnce);
        assert_eq!(run.asked.len(), 1, "reading {rel} asks");
        let options = run.asked[0]["params"]["options"].as_array().unwrap();
        assert!(options.iter().all(|o| !o["kind"].as_str().unwrap().ends_with("always")), "{rel}");
        assert_eq!(run.result, "Permission denied.", "{rel}");
    }
    let tfstate =
        run_tool(&ws, "read_file", json!({"path": "terraform.tfstate"}), Permission::RejectOnce);
    let title = tfstate.asked[0]["params"]["toolCall"]["title"].as_str().unwrap();
    assert!(title.contains("Terraform state"), "the title says why: {title}");
    for rel in [
        ".zshenv",
        ".gitconfig",
        ".envrc",
        ".config/fish/config.fish",
        ".vscode/tasks.json",
        ".zlogin",
    ] {
        let llm = FakeLlm::start(vec![
            tool_reply("w1", "write_file", json!({"path": rel, "content": "x"})),
            text_reply("done"),
        ]);
        let (mut acp, session) = AcpProcess::session_in_mode(&ws, &llm, "accept_edits");
        acp.set_permission(Permission::RejectOnce);
        let (msgs, _) = acp.prompt(&session, "go");
        let asked = msgs.iter().filter(|m| m["method"] == "session/request_permission").count();
        assert_eq!(asked, 1, "writing {rel} asks even in accept_edits");
        assert!(!ws.exists(rel), "{rel} was not written");
    }
}

/// Starts a daemon that leaves the group, loses its parent and clears its environment.
const ESCAPER: &str = "(env -i setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > escaper); \
    nohup sleep 1001 </dev/null >/dev/null 2>&1 & echo $! > nohup; \
    while [ ! -s escaper ] || [ ! -s nohup ]; do :; done";

fn daemons(ws: &Workspace) -> Vec<u32> {
    // `$!` of `env -i setsid …` is env's pid, which execs into sleep (setsid does not fork
    // when it is not a group leader).
    ["escaper", "nohup"].iter().map(|f| ws.read(f).trim().parse().unwrap()).collect()
}

#[test]
fn daemons_are_killed_on_timeout_and_cancel() {
    let ws = Workspace::new("sec-daemons-timeout");
    let run = run_tool(
        &ws,
        "bash",
        json!({"command": format!("{ESCAPER}; echo ready; sleep 1000"), "timeout": 1}),
        Permission::AllowOnce,
    );
    assert!(run.result.starts_with("Command timed out"), "{}", run.result);
    for pid in daemons(&ws) {
        assert!(!alive(pid), "pid {pid} outlived the timeout");
    }

    let ws = Workspace::new("sec-daemons-cancel");
    let llm = FakeLlm::start(vec![
        tool_reply("b1", "bash", json!({"command": format!("{ESCAPER}; echo ready; sleep 1000")})),
        text_reply("after"),
    ]);
    // Asked and allowed: it runs outside the sandbox, as the user, so its processes are
    // the host's (a sandboxed command's die with it: tests/sandbox.rs).
    let (mut acp, session) = AcpProcess::session_in_mode(&ws, &llm, "default");
    let id = acp.start_prompt(&session, "go");
    acp.answer_until_output("ready", |_| {});
    let pids = daemons(&ws);
    assert!(pids.iter().all(|p| alive(*p)), "both daemons run before the cancel");
    acp.notify("session/cancel", json!({"sessionId": session}));
    let (_, response) = acp.until_response(&id);
    assert_eq!(response["result"]["stopReason"], "cancelled");
    for pid in pids {
        assert!(!alive(pid), "pid {pid} outlived the cancel");
    }
    assert_eq!(children_of(acp.pid()), Vec::<(u32, String)>::new(), "no child left, no zombie");
}

/// The children of `parent` and their states, from /proc.
fn children_of(parent: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let mut fields = stat.rsplit(')').next().unwrap_or("").split_whitespace();
        let state = fields.next().unwrap_or("").to_string();
        if fields.next().and_then(|p| p.parse::<u32>().ok()) == Some(parent) {
            found.push((pid, state));
        }
    }
    found
}

/// A turn whose one command starts the daemons and ends; returns the server, still
/// running, and the command's result.
fn leave_daemons(ws: &Workspace) -> (AcpProcess, String) {
    let llm = FakeLlm::start(vec![
        tool_reply("b1", "bash", json!({"command": format!("{ESCAPER}; echo started")})),
        text_reply("after"),
    ]);
    // Asked and allowed: outside the sandbox (where nothing outlives the command).
    let (mut acp, session) = AcpProcess::session_in_mode(ws, &llm, "default");
    let (_, response) = acp.prompt(&session, "go");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    (acp, tool_result(&llm, 1))
}

#[test]
fn daemons_left_by_a_finished_call_are_named_and_stopped_with_the_server() {
    let ws = Workspace::new("sec-daemons-left");
    let (mut acp, result) = leave_daemons(&ws);
    let pids = daemons(&ws);
    for pid in &pids {
        assert!(alive(*pid), "a finished call's daemon runs on until the session ends");
        // Named by pid with its command line (which may still be `env …` or `nohup …` if
        // the listing caught it between fork and exec).
        assert!(result.contains(&format!("pid {pid} `")), "named: {result}");
    }
    assert!(result.contains("left running:"), "{result}");
    // The server goes away (its client closed stdin): so does everything its calls left.
    acp.close_stdin();
    assert!(acp.wait_exit(std::time::Duration::from_secs(10)).is_some());
    for pid in pids {
        assert!(!alive(pid), "pid {pid} outlived the server");
    }
}

/// Waits (bounded, without sleeping) until `done` holds.
fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::yield_now();
    }
}

#[test]
fn the_server_adopts_reaps_and_stops_what_a_dead_supervisor_leaves() {
    let ws = Workspace::new("sec-reaper");
    let (mut acp, _) = leave_daemons(&ws);
    let [daemon, other] = daemons(&ws)[..] else { panic!("two daemons") };
    let supervisor = parent_of(daemon).expect("the daemon runs");
    assert_ne!(supervisor, acp.pid(), "the daemon hangs below its call's supervisor");
    // Someone kills the supervisor: its daemons come to the server, not to init.
    Command::new("kill").args(["-9", &supervisor.to_string()]).status().unwrap();
    until("the server adopts the daemons", || {
        parent_of(daemon) == Some(acp.pid()) && parent_of(other) == Some(acp.pid())
    });
    // When one ends, the server reaps it: no zombie stays behind.
    Command::new("kill").args(["-9", &daemon.to_string()]).status().unwrap();
    until("the daemon is reaped", || parent_of(daemon).is_none());
    // When the server ends, it stops what it adopted.
    acp.close_stdin();
    assert!(acp.wait_exit(std::time::Duration::from_secs(10)).is_some());
    assert!(!alive(other), "pid {other} outlived the server that adopted it");
}

#[test]
fn content_length_and_chunk_sizes_are_digits_only() {
    let ws = Workspace::new("sec-framing");
    let server = HttpServer::spawn(&ws, None, &[], &[]);
    for head in [
        "POST /acp HTTP/1.1\r\nContent-Length: +5\r\n",
        "POST /acp HTTP/1.1\r\nContent-Length: 0x5\r\n",
        "POST /acp HTTP/1.1\r\nContent-Length:  5 5\r\n",
        "POST /acp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n",
    ] {
        let mut stream = TcpStream::connect(&server.addr).unwrap();
        let body = if head.contains("chunked") { "+5\r\nhello\r\n0\r\n\r\n" } else { "hello" };
        let request =
            format!("{head}Host: {}\r\nContent-Type: application/json\r\n\r\n{body}", server.addr);
        stream.write_all(request.as_bytes()).unwrap();
        let mut reply = String::new();
        let _ = stream.read_to_string(&mut reply);
        assert!(reply.starts_with("HTTP/1.1 400"), "{head:?} → {reply}");
    }
}

#[test]
fn the_log_file_is_private_and_a_planted_session_is_refused() {
    if !crate::support::command::on_file_store() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let ws = Workspace::new("sec-files");
    let log = ws.root().join("iac.log");
    let mut acp = AcpProcess::spawn_with(&ws, &["acp", "--log-file", log.to_str().unwrap()], &[]);
    acp.initialize();
    let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the log file is the user's alone");
    // A session directory that is a symlink (planted elsewhere) is not loaded.
    let elsewhere = ws.root().join("planted");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let id = "0b4b1f34-4f5c-4b7b-9a4e-0123456789ab";
    let line = json!({"v": 1, "ts": "2026-01-01T00:00:00Z", "type": "start", "cwd": ws.project(), "createdAt": "2026-01-01T00:00:00Z"});
    std::fs::write(elsewhere.join("journal.jsonl"), format!("{line}\n")).unwrap();
    std::fs::create_dir_all(ws.config().join("sessions")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, ws.config().join("sessions").join(id)).unwrap();
    let reply = acp
        .request("session/load", json!({"sessionId": id, "cwd": ws.project(), "mcpServers": []}));
    let (_, response) = acp.until_response(&reply);
    let said = format!("{} {}", response["error"]["message"], response["error"]["data"]);
    assert!(said.contains("is a symlink; refusing"), "{response}");
}
