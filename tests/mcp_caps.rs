//! What one MCP server can cost a session, bounded: the tool definitions that go with every
//! LLM request (a budget, the rest left out and said so), tools with long names (offered
//! under a hashed name, the overlong ones said so), images (checked against their bytes,
//! only the most recent sent again), a log flood (rate-limited, the drops counted), and
//! the streams of a closed session (ended at once: no thread or socket left behind).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp::{offered, open, status, tool_results};
use crate::support::acp_client::{AcpProcess, Permission, agent_text};
use crate::support::command::iac_code;
use crate::support::fake_llm::{FakeLlm, text_reply, tool_reply};
use crate::support::fake_mcp::{
    Behaviour, FLOOD_LINE, FakeTool, HttpKind, HttpMcp, Script, has_method, stdio_entry,
};
use crate::support::workspace::Workspace;

const WAIT: Duration = Duration::from_secs(10);

/// The MCP tool definitions (`mcp__…`) of the `n`th LLM request, and their size in bytes
/// (name, description and parameters as JSON).
fn mcp_defs(llm: &FakeLlm, n: usize) -> (usize, usize) {
    let tools = llm.requests()[n].body["tools"].as_array().cloned().unwrap_or_default();
    let ours: Vec<&Value> = tools
        .iter()
        .map(|t| &t["function"])
        .filter(|f| f["name"].as_str().is_some_and(|n| n.starts_with("mcp__")))
        .collect();
    let size = ours
        .iter()
        .map(|f| {
            f["name"].as_str().unwrap().len()
                + f["description"].as_str().unwrap().len()
                + f["parameters"].to_string().len()
        })
        .sum();
    (ours.len(), size)
}

/// Twenty tools of about 30 KiB each (a 2,000-character description, a 28 KB schema).
fn big_tools() -> Vec<FakeTool> {
    (0..20)
        .map(|i| {
            let schema = json!({"type": "object", "properties": {"p": {"type": "string",
                "description": "d".repeat(28_000)}}});
            let mut tool = FakeTool::with_schema(&format!("t{i:02}"), Behaviour::Echo, schema);
            tool.description = "w".repeat(2000);
            tool
        })
        .collect()
}

#[test]
fn tool_definitions_are_capped_per_session_and_the_rest_said() {
    let ws = Workspace::new("mcp-caps-defs");
    let (entry, _server) = stdio_entry("big", &Script::with_tools(big_tools()), ws.root());
    let llm = FakeLlm::start(vec![text_reply("one")]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (session, result) = open(&mut acp, &ws.project(), json!([entry]));
    acp.prompt(&session, "hello");
    let (count, size) = mcp_defs(&llm, 0);
    assert!(size <= 256 * 1024, "{size} bytes of MCP tool definitions in one request");
    assert!(count > 0 && count < 20, "some fit, some not: {count}");
    let left = status(&result, "big")["leftOut"][0].as_str().unwrap_or_default().to_owned();
    assert!(left.starts_with(&format!("{} tool(s) whose definitions", 20 - count)), "{left}");
    assert_eq!(status(&result, "big")["tools"], count, "the tools offered, not listed");
    let (msgs, _) = acp.prompt(&session, "/mcp");
    let text = agent_text(&msgs);
    assert!(text.contains("left out: ") && text.contains("IAC_CODE_MCP_TOOLS_MAX_BYTES"), "{text}");
    assert!(text.contains(&format!("{count} tools")), "{text}");
    assert!(acp.stderr().contains("MCP server big: left out"), "told in the log too");
    acp.close_stdin();
    assert!(acp.wait_exit(WAIT).is_some());

    // Configurable: the variable, and the settings key under it.
    let mut acp =
        AcpProcess::spawn_with_llm(&ws, &llm, &[("IAC_CODE_MCP_TOOLS_MAX_BYTES", "1048576")]);
    acp.initialize();
    let (session, _) = open(&mut acp, &ws.project(), json!([entry]));
    llm.push(text_reply("two"));
    acp.prompt(&session, "hello");
    assert_eq!(mcp_defs(&llm, 1).0, 20, "a larger budget offers them all");
    acp.close_stdin();
    assert!(acp.wait_exit(WAIT).is_some());
    std::fs::create_dir_all(ws.config()).unwrap();
    let settings = json!({"mcpToolsMaxBytes": 70000}).to_string();
    std::fs::write(ws.config().join("settings.json"), settings).unwrap();
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (session, _) = open(&mut acp, &ws.project(), json!([entry]));
    llm.push(text_reply("three"));
    acp.prompt(&session, "hello");
    let (count, size) = mcp_defs(&llm, 2);
    assert!(size <= 70000 && count < 3, "{count} tools, {size} bytes");
    let bad = iac_code(&ws)
        .arg("acp")
        .env("IAC_CODE_MCP_TOOLS_MAX_BYTES", "lots")
        .output()
        .expect("run iac-code");
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("IAC_CODE_MCP_TOOLS_MAX_BYTES"), "{err}");
}

#[test]
fn long_tool_names_are_offered_and_those_left_out_are_said() {
    let ws = Workspace::new("mcp-caps-names");
    let long = "n".repeat(300);
    let overlong = "m".repeat(2000);
    let tools = vec![
        FakeTool::new(&long, Behaviour::Echo),
        FakeTool::new(&overlong, Behaviour::Echo),
        FakeTool::new("", Behaviour::Echo),
        FakeTool::new("ok", Behaviour::Echo),
    ];
    let (entry, server) = stdio_entry("names", &Script::with_tools(tools), ws.root());
    let llm = FakeLlm::start(vec![text_reply("listed")]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (session, _) = open(&mut acp, &ws.project(), json!([entry]));
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    acp.prompt(&session, "list");
    let names = offered(&llm, 0);
    let hashed: Vec<&String> = names.iter().filter(|n| n.starts_with("mcp__names__nnn")).collect();
    assert_eq!(hashed.len(), 1, "a 300-character name is offered: {names:?}");
    assert!(hashed[0].len() <= 64, "{}", hashed[0]);
    assert!(names.contains(&"mcp__names__ok".to_owned()), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("mcp__names__mmm")), "{names:?}");
    // The call reaches the server under the tool's own name.
    llm.push(tool_reply("1", hashed[0], json!({"text": "long name works"})));
    llm.push(text_reply("done"));
    acp.prompt(&session, "call it");
    assert_eq!(tool_results(&llm, 2), ["long name works"]);
    let call = server.wait_for(has_method("tools/call"), WAIT).expect("a call");
    assert_eq!(call["params"]["name"], long.as_str());
    let (msgs, _) = acp.prompt(&session, "/mcp");
    let text = agent_text(&msgs);
    assert!(text.contains("left out: 1 tool(s) without a name"), "{text}");
    assert!(text.contains("1 tool(s) named with more than 1024 bytes"), "{text}");
    assert!(text.contains("(2000 bytes)"), "{text}");
    let log = acp.stderr();
    assert!(log.contains("MCP server names: left out 1 tool(s) named with more"), "{log}");
}

/// A result of four PNG images of `kib` KiB of base64 each (a PNG signature, then zeros).
fn four_images(kib: usize) -> Value {
    let data = format!("iVBORw0KGgo{}", "A".repeat(kib * 1024 - 11));
    let image = json!({"type": "image", "mimeType": "image/png", "data": data});
    json!({"content": [{"type": "text", "text": "shots"}, image, image, image, image]})
}

/// The image data URLs of the `n`th LLM request.
fn images_sent(llm: &FakeLlm, n: usize) -> Vec<usize> {
    let body = &llm.requests()[n].body;
    let mut sizes = Vec::new();
    let mut walk = vec![body.clone()];
    while let Some(value) = walk.pop() {
        match value {
            Value::String(s) if s.starts_with("data:image/") => sizes.push(s.len()),
            Value::Array(items) => walk.extend(items),
            Value::Object(map) => walk.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
    sizes
}

#[test]
fn images_are_checked_and_only_the_most_recent_are_sent_again() {
    let ws = Workspace::new("mcp-caps-images");
    let gif_as_png = json!({"content": [{"type": "image", "mimeType": "image/png",
        "data": "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"}]});
    let tools = vec![
        FakeTool::new("shots", Behaviour::Raw(four_images(2816))),
        FakeTool::new("liar", Behaviour::Raw(gif_as_png)),
    ];
    let (entry, _server) = stdio_entry("cam", &Script::with_tools(tools), ws.root());
    let llm = FakeLlm::start(vec![
        tool_reply("1", "mcp__cam__liar", json!({})),
        tool_reply("2", "mcp__cam__shots", json!({})),
        text_reply("seen"),
    ]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[("IAC_CODE_IMAGES", "true")]);
    acp.set_timeout(Duration::from_secs(60));
    acp.initialize();
    let (session, _) = open(&mut acp, &ws.project(), json!([entry]));
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    let (_, response) = acp.prompt(&session, "take pictures");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let liar = &tool_results(&llm, 1)[0];
    assert!(liar.contains("not shown: it says image/png, but its bytes are image/gif"), "{liar}");
    assert!(images_sent(&llm, 1).is_empty(), "an image that is not what it says is not sent");
    let sent = images_sent(&llm, 2);
    let total: usize = sent.iter().sum();
    assert!(total <= 10 * 1024 * 1024 + 4 * 64, "{} images, {total} bytes", sent.len());
    assert!(!sent.is_empty() && sent.len() < 4, "the most recent only: {}", sent.len());
    let text = &tool_results(&llm, 2)[1];
    let notes = text.matches("no longer sent").count();
    assert_eq!(notes + sent.len(), 4, "each image left out is said: {text}");
    // The next turn sends no more than that again.
    llm.push(text_reply("still"));
    acp.prompt(&session, "and now?");
    assert_eq!(images_sent(&llm, 3).len(), sent.len());
}

#[test]
fn a_log_flood_is_rate_limited_and_the_drops_counted() {
    let ws = Workspace::new("mcp-caps-flood");
    let total = 5_000usize;
    let tools = vec![FakeTool::new("flood", Behaviour::LogFlood(total))];
    let (entry, _server) = stdio_entry("noisy", &Script::with_tools(tools), ws.root());
    let llm =
        FakeLlm::start(vec![tool_reply("1", "mcp__noisy__flood", json!({})), text_reply("ok")]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.set_timeout(Duration::from_secs(60));
    acp.initialize();
    let (session, _) = open(&mut acp, &ws.project(), json!([entry]));
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    let before = acp.stderr().len();
    let (_, response) = acp.prompt(&session, "flood");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(tool_results(&llm, 1), ["flooded"]);
    let log = acp.stderr();
    let grown = log.len() - before;
    assert!(grown < 1 << 20, "{grown} bytes of log for {total} messages of 430 bytes");
    let logged = log.matches(FLOOD_LINE).count();
    let dropped: usize = log
        .lines()
        .filter_map(|line| line.split("MCP server noisy: ").nth(1))
        .filter_map(|rest| {
            rest.strip_suffix(" log messages dropped (it sent more than 10 a second)")
        })
        .map(|n| n.parse::<usize>().expect("a count"))
        .sum();
    assert!(logged > 0 && dropped > 0, "{logged} logged, {dropped} dropped");
    assert_eq!(logged + dropped, total, "every message is logged or counted");
}

/// Threads of process `pid` now.
fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count)
}

#[test]
fn closing_a_session_ends_its_silent_http_streams_at_once() {
    let ws = Workspace::new("mcp-caps-streams");
    let tools = || vec![FakeTool::new("echo", Behaviour::Echo)];
    let script = Script { get_stream: true, ignore_delete: true, ..Script::with_tools(tools()) };
    let streamable = HttpMcp::start(script, HttpKind::Streamable);
    let legacy = HttpMcp::start(Script::with_tools(tools()), HttpKind::LegacySse);
    let llm = FakeLlm::start(vec![]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.set_permission(Permission::RejectOnce);
    acp.initialize();
    let pid = acp.pid();
    let idle = threads(pid);
    let n = 15;
    let entries = json!([streamable.entry("web"), legacy.entry("old")]);
    let sessions: Vec<String> =
        (0..n).map(|_| open(&mut acp, &ws.project(), entries.clone()).0).collect();
    assert!(streamable.wait_streams(n, WAIT) && legacy.wait_streams(n, WAIT), "every stream open");
    let busy = threads(pid);
    assert!(busy >= idle + 2 * n, "a thread per stream: {idle} idle, {busy} with {n} sessions");
    for session in &sessions {
        acp.call("session/close", json!({"sessionId": session}));
    }
    let deadline = Instant::now() + WAIT;
    while (streamable.streams_open() + legacy.streams_open() > 0 || threads(pid) > idle + 2)
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let (web, old) = (streamable.streams_open(), legacy.streams_open());
    assert_eq!((web, old), (0, 0), "the sockets are closed");
    let after = threads(pid);
    assert!(after <= idle + 2, "{idle} threads idle, {busy} with {n} sessions, {after} after");
}
