//! MCP servers, end to end: the real binary, the fake LLM and the scripted fake MCP servers
//! over stdio, Streamable HTTP and the older HTTP+SSE. Tools offered with their schemas,
//! the permission gate, results, progress, list changes, cancel, failures, restarts and
//! clean-up of every server process.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, Permission, agent_text, updates_of};
use crate::support::fake_llm::{FakeLlm, text_reply, tool_replies, tool_reply};
use crate::support::fake_mcp::{
    BIG_HEAD, BIG_TAIL, Behaviour, FakeTool, Script, has_method, stdio_entry, with_method,
};
use crate::support::workspace::Workspace;

const WAIT: Duration = Duration::from_secs(10);

/// `session/new` with `servers`; returns the session id and the result.
pub fn open(acp: &mut AcpProcess, cwd: &Path, servers: Value) -> (String, Value) {
    let response = acp.call("session/new", json!({"cwd": cwd, "mcpServers": servers}));
    let Some(session) = response.pointer("/result/sessionId").and_then(Value::as_str) else {
        panic!("session/new failed: {response}{}", acp.context());
    };
    let session = session.to_owned();
    acp.expect_commands(&session);
    (session, response["result"].clone())
}

/// The MCP status of one server in a session response's `_meta`.
pub fn status<'a>(result: &'a Value, name: &str) -> &'a Value {
    let servers = result.pointer("/_meta/iacCode/mcpServers").and_then(Value::as_array);
    servers
        .into_iter()
        .flatten()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no status for {name} in {result}"))
}

/// The tool names of the `n`th LLM request.
pub fn offered(llm: &FakeLlm, n: usize) -> Vec<String> {
    let requests = llm.requests();
    let tools = requests[n].body["tools"].as_array().cloned().unwrap_or_default();
    tools.iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()
}

/// The tool results the `n`th LLM request carries, in order.
pub fn tool_results(llm: &FakeLlm, n: usize) -> Vec<String> {
    let requests = llm.requests();
    let messages = requests[n].body["messages"].as_array().cloned().unwrap_or_default();
    messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

fn permission_requests(msgs: &[Value]) -> Vec<&Value> {
    msgs.iter().filter(|m| m["method"] == "session/request_permission").collect()
}

fn option_kinds(request: &Value) -> Vec<String> {
    let options = request["params"]["options"].as_array().unwrap();
    options.iter().map(|o| o["kind"].as_str().unwrap().to_owned()).collect()
}

/// Waits (bounded) until `pids()` is empty: the processes belong to another program.
pub fn gone(pids: impl Fn() -> Vec<u32>) -> bool {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if pids().is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn calls(received: &[Value]) -> Vec<&Value> {
    with_method(received, "tools/call")
}

#[test]
fn stdio_tools_reach_the_model_and_a_call_runs_after_allow_once() {
    let ws = Workspace::new("mcp-stdio");
    let schema = json!({"type": "object", "properties": {"text": {"type": "string",
        "description": "what to say"}}, "required": ["text"]});
    let script = Script::with_tools(vec![
        FakeTool::with_schema("echo", Behaviour::Echo, schema.clone()),
        FakeTool::annotated("look", Behaviour::Echo, json!({"readOnlyHint": true})),
    ]);
    let script = Script { page_size: Some(1), ..script };
    let (entry, server) = stdio_entry("fs", &script, ws.root());
    let llm = FakeLlm::start(vec![
        tool_reply("c1", "mcp__fs__echo", json!({"text": "hello mcp"})),
        text_reply("done"),
    ]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (session, result) = open(&mut acp, &ws.project(), json!([entry]));
    let fs = status(&result, "fs");
    assert_eq!(
        (&fs["status"], &fs["transport"], &fs["tools"]),
        (&json!("ready"), &json!("stdio"), &json!(2))
    );

    let (msgs, response) = acp.prompt(&session, "say hello");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let names = offered(&llm, 0);
    assert!(
        names.contains(&"mcp__fs__echo".to_owned()) && names.contains(&"mcp__fs__look".to_owned()),
        "{names:?}"
    );
    assert!(names.contains(&"read_file".to_owned()), "built-in tools stay: {names:?}");
    let def = &llm.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__fs__echo")
        .unwrap()
        .clone();
    assert_eq!(def["function"]["parameters"], schema, "the schema passes through");
    assert!(def["function"]["description"].as_str().unwrap().contains("echo"));

    let asked = permission_requests(&msgs);
    assert_eq!(asked.len(), 1, "an MCP tool asks");
    assert_eq!(
        option_kinds(asked[0]),
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    let call = updates_of(&msgs, "tool_call")[0];
    let title = call["title"].as_str().unwrap();
    assert!(title.contains("echo") && title.contains("fs"), "names server and tool: {title}");
    assert_eq!(call["kind"], "other");
    assert_eq!(call["rawInput"], json!({"text": "hello mcp"}));
    let done = updates_of(&msgs, "tool_call_update");
    let last = done.last().unwrap();
    assert_eq!(last["status"], "completed");
    assert!(last["content"].to_string().contains("hello mcp"), "{last}");
    assert_eq!(tool_results(&llm, 1), ["hello mcp"]);

    let received = server.received();
    let init = with_method(&received, "initialize")[0];
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25", "asks for the newest version");
    assert!(init["params"]["capabilities"]["roots"].is_object(), "roots are advertised");
    assert!(init["params"]["capabilities"].get("sampling").is_none(), "sampling is not");
    assert_eq!(with_method(&received, "notifications/initialized").len(), 1);
    let pages = with_method(&received, "tools/list");
    assert_eq!(pages.len(), 2, "every page of the tool list is read");
    assert!(pages[1]["params"]["cursor"].is_string());
    let sent = calls(&received);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["params"]["name"], "echo");
    assert_eq!(sent[0]["params"]["arguments"], json!({"text": "hello mcp"}));
}

#[test]
fn the_gate_holds_reject_always_plan_and_bypass() {
    let ws = Workspace::new("mcp-gate");
    let script = Script::with_tools(vec![
        FakeTool::new("write", Behaviour::Echo),
        FakeTool::annotated("peek", Behaviour::Echo, json!({"readOnlyHint": true})),
    ]);
    let (entry, server) = stdio_entry("db", &script, ws.root());
    let w = |id: &str| (id.to_owned(), "mcp__db__write", json!({"text": id}));
    let llm = FakeLlm::start(vec![
        // 1: rejected once.
        tool_reply("r1", "mcp__db__write", json!({"text": "r1"})),
        text_reply("ok"),
        // 2: allowed always: the second call is not asked.
        tool_replies(&[(&w("a1").0, w("a1").1, w("a1").2), (&w("a2").0, w("a2").1, w("a2").2)]),
        text_reply("ok"),
        // 3: plan mode: the writer is refused unasked, the reader asks without always.
        tool_replies(&[
            ("p1", "mcp__db__write", json!({"text": "p1"})),
            ("p2", "mcp__db__peek", json!({"text": "p2"})),
        ]),
        text_reply("ok"),
        // 4: bypass: nothing asked.
        tool_reply("b1", "mcp__db__peek", json!({"text": "b1"})),
        text_reply("ok"),
    ]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (session, _) = open(&mut acp, &ws.project(), json!([entry]));

    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&session, "one");
    assert_eq!(permission_requests(&msgs).len(), 1);
    assert_eq!(tool_results(&llm, 1), ["Permission denied."]);
    assert!(calls(&server.received()).is_empty(), "a rejected call never reaches the server");

    acp.set_permission(Permission::AllowAlways);
    let (msgs, _) = acp.prompt(&session, "two");
    assert_eq!(permission_requests(&msgs).len(), 1, "allow_always is remembered for the tool");
    let texts: Vec<Value> = calls(&server.received())
        .iter()
        .map(|c| c["params"]["arguments"]["text"].clone())
        .collect();
    assert_eq!(texts, [json!("a1"), json!("a2")]);

    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "plan"}));
    acp.set_permission(Permission::AllowOnce);
    let before = calls(&server.received()).len();
    let (msgs, _) = acp.prompt(&session, "three");
    let asked = permission_requests(&msgs);
    assert_eq!(asked.len(), 1, "only the read-only tool is asked about in plan mode");
    assert_eq!(option_kinds(asked[0]), ["allow_once", "reject_once"], "never always in plan mode");
    let results = tool_results(&llm, 5);
    assert!(results[results.len() - 2].contains("Plan mode"), "{results:?}");
    assert_eq!(results[results.len() - 1], "p2");
    let received = server.received();
    let sent: Vec<Value> =
        calls(&received)[before..].iter().map(|c| c["params"]["name"].clone()).collect();
    assert_eq!(sent, [json!("peek")], "the writer never ran in plan mode");

    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    let (msgs, _) = acp.prompt(&session, "four");
    assert!(permission_requests(&msgs).is_empty(), "bypass never asks");
    assert_eq!(tool_results(&llm, 7).last().unwrap(), "b1");
}

#[test]
fn results_errors_images_resources_and_big_output_reach_the_model() {
    let ws = Workspace::new("mcp-results");
    let script = Script::with_tools(vec![
        FakeTool::new("fails", Behaviour::Error("the bucket is locked".into())),
        FakeTool::new("picture", Behaviour::Image),
        FakeTool::new("docs", Behaviour::Resource),
        FakeTool::new("huge", Behaviour::Big(400_000)),
        FakeTool::new("structured", Behaviour::Structured),
    ]);
    let (entry, _server) = stdio_entry("res", &script, ws.root());
    let call = |id: &str, tool: &str| (id.to_owned(), format!("mcp__res__{tool}"));
    let ids = [
        call("1", "fails"),
        call("2", "picture"),
        call("3", "docs"),
        call("4", "huge"),
        call("5", "structured"),
    ];
    let replies: Vec<(&str, &str, Value)> =
        ids.iter().map(|(id, name)| (id.as_str(), name.as_str(), json!({}))).collect();
    let llm = FakeLlm::start(vec![tool_replies(&replies), text_reply("noted")]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (session, _) = open(&mut acp, &ws.project(), json!([entry]));
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    let (msgs, response) = acp.prompt(&session, "try them all");
    assert_eq!(response["result"]["stopReason"], "end_turn", "an error does not end the turn");
    let results = tool_results(&llm, 1);
    assert_eq!(results[0], "the bucket is locked");
    let statuses: Vec<&Value> = updates_of(&msgs, "tool_call_update")
        .into_iter()
        .filter(|u| u.get("status").is_some_and(|s| s == "failed" || s == "completed"))
        .map(|u| &u["status"])
        .collect();
    assert_eq!(statuses[0], "failed", "isError is a failed call");
    assert!(
        results[1].contains("an image") && results[1].contains("[image (image/png"),
        "{}",
        results[1]
    );
    assert!(
        results[2].contains("[resource ") && results[2].contains("[resource link: "),
        "{}",
        results[2]
    );
    assert!(
        results[3].starts_with(BIG_HEAD) && results[3].ends_with(BIG_TAIL),
        "head and tail kept"
    );
    assert!(
        results[3].len() < 200_000 && results[3].contains("characters omitted"),
        "capped with a marker: {} bytes",
        results[3].len()
    );
    assert!(results[4].contains("\"answer\": 42"), "structured content as JSON: {}", results[4]);
}

#[test]
fn progress_logs_and_roots_and_a_changed_tool_list() {
    let ws = Workspace::new("mcp-live");
    let mut script = Script::with_tools(vec![
        FakeTool::new("slow", Behaviour::Progress(3)),
        FakeTool::new("roots", Behaviour::AskRoots),
        FakeTool::new("logs", Behaviour::Log),
        FakeTool::new("change", Behaviour::ChangeList),
    ]);
    script.tools_after_change = vec![FakeTool::new("fresh", Behaviour::Echo)];
    let (entry, server) = stdio_entry("live", &script, ws.root());
    let llm = FakeLlm::start(vec![
        tool_replies(&[
            ("1", "mcp__live__slow", json!({})),
            ("2", "mcp__live__roots", json!({})),
            ("3", "mcp__live__logs", json!({})),
        ]),
        tool_reply("4", "mcp__live__change", json!({})),
        tool_reply("5", "mcp__live__fresh", json!({"text": "new tool works"})),
        text_reply("done"),
    ]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (session, _) = open(&mut acp, &ws.project(), json!([entry]));
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    let (msgs, response) = acp.prompt(&session, "go");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let progress: Vec<String> = updates_of(&msgs, "tool_call_update")
        .iter()
        .filter(|u| u.get("status").is_none() || u["status"] == "in_progress")
        .map(|u| u["content"].to_string())
        .filter(|c| c.contains("step"))
        .collect();
    assert!(progress.len() >= 2, "progress shows live: {progress:?}");
    let results = tool_results(&llm, 1);
    assert_eq!(results[0], "done");
    let project = ws.project().canonicalize().unwrap();
    assert!(
        results[1].contains(&format!("file://{}", project.display())),
        "roots/list: {}",
        results[1]
    );
    assert_eq!(results[2], "logged");
    assert!(acp.stderr().contains("fake log line"), "server logs reach our log");
    assert!(offered(&llm, 1).contains(&"mcp__live__change".to_owned()));
    let after = offered(&llm, 2);
    assert!(
        after.contains(&"mcp__live__fresh".to_owned()),
        "the next request sees the new list: {after:?}"
    );
    assert!(!after.contains(&"mcp__live__change".to_owned()), "{after:?}");
    assert_eq!(tool_results(&llm, 3).last().unwrap(), "new tool works");
    let lists = with_method(&server.received(), "tools/list").len();
    assert_eq!(lists, 2, "read again once after list_changed");
}

#[test]
fn cancel_tells_the_server_and_ends_cancelled_at_once() {
    let ws = Workspace::new("mcp-cancel");
    let script = Script::with_tools(vec![FakeTool::new("wait", Behaviour::Hang)]);
    let (entry, server) = stdio_entry("slow", &script, ws.root());
    let llm = FakeLlm::start(vec![tool_reply("h1", "mcp__slow__wait", json!({}))]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (session, _) = open(&mut acp, &ws.project(), json!([entry]));
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    let id = acp.start_prompt(&session, "wait forever");
    let call =
        server.wait_for(has_method("tools/call"), WAIT).expect("the call reached the server");
    let started = Instant::now();
    acp.notify("session/cancel", json!({"sessionId": session}));
    let (_, response) = acp.until_response(&id);
    assert_eq!(response["result"]["stopReason"], "cancelled");
    assert!(started.elapsed() < Duration::from_secs(5), "at once, not at a timeout");
    let cancelled = server.wait_for(has_method("notifications/cancelled"), WAIT).expect("told");
    assert_eq!(cancelled["params"]["requestId"], call["id"]);
}

#[test]
fn servers_that_fail_never_break_the_session() {
    let ws = Workspace::new("mcp-fail");
    let hang = Script {
        hang_initialize: true,
        ..Script::with_tools(vec![FakeTool::new("x", Behaviour::Echo)])
    };
    let (hanging, _) = stdio_entry("hangs", &hang, ws.root());
    let garbage = Script {
        garbage_first: true,
        ..Script::with_tools(vec![FakeTool::new("x", Behaviour::Echo)])
    };
    let (noisy, _) = stdio_entry("noisy", &garbage, ws.root());
    let old = Script { protocol_version: Some("1999-01-01".into()), ..Script::default() };
    let (ancient, _) = stdio_entry("ancient", &old, ws.root());
    let servers = json!([
        {"name": "missing", "command": "/nonexistent/mcp-server", "args": [], "env": []},
        {"name": "odd", "type": "websocket", "url": "ws://127.0.0.1:1"},
        hanging, noisy, ancient,
    ]);
    let llm = FakeLlm::start(vec![text_reply("still here")]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[("IAC_CODE_MCP_CONNECT_TIMEOUT", "2")]);
    acp.initialize();
    let started = Instant::now();
    let (session, result) = open(&mut acp, &ws.project(), servers);
    assert!(started.elapsed() < Duration::from_secs(8), "bounded by the connect timeout");
    let reason = |name: &str| {
        let s = status(&result, name);
        assert_eq!(s["status"], "failed", "{name}: {s}");
        s["error"].as_str().unwrap().to_owned()
    };
    assert!(reason("missing").contains("cannot start"), "{}", reason("missing"));
    assert!(reason("odd").contains("unknown transport type 'websocket'"), "{}", reason("odd"));
    assert!(reason("hangs").contains("initialize"), "{}", reason("hangs"));
    assert!(reason("noisy").contains("not JSON-RPC"), "{}", reason("noisy"));
    assert!(reason("ancient").contains("1999-01-01"), "{}", reason("ancient"));
    let (msgs, response) = acp.prompt(&session, "hello");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let text = agent_text(&msgs);
    for name in ["missing", "odd", "hangs", "noisy", "ancient"] {
        assert!(text.contains(&format!("MCP server '{name}'")), "told about {name}: {text}");
    }
    assert!(offered(&llm, 0).iter().all(|t| !t.starts_with("mcp__")), "no tools of failed servers");
    let (msgs, _) = {
        llm.push(text_reply("again"));
        acp.prompt(&session, "again")
    };
    assert!(!agent_text(&msgs).contains("MCP server"), "told once");
}

#[test]
fn a_crash_mid_call_fails_the_call_and_the_server_restarts_once() {
    let ws = Workspace::new("mcp-crash");
    let script = Script::with_tools(vec![
        FakeTool::new("boom", Behaviour::Crash),
        FakeTool::new("echo", Behaviour::Echo),
    ]);
    let (entry, server) = stdio_entry("fragile", &script, ws.root());
    let llm = FakeLlm::start(vec![
        tool_reply("1", "mcp__fragile__boom", json!({})),
        tool_reply("2", "mcp__fragile__echo", json!({"text": "back again"})),
        text_reply("done"),
    ]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (session, _) = open(&mut acp, &ws.project(), json!([entry]));
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    let (_, response) = acp.prompt(&session, "crash it");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let results = tool_results(&llm, 2);
    assert!(
        results[0].contains("failed during the call") && results[0].contains("exit"),
        "{}",
        results[0]
    );
    assert_eq!(results[1], "back again", "restarted on the next call");
    assert_eq!(with_method(&server.received(), "initialize").len(), 2);
}

#[test]
fn no_server_process_outlives_its_session_or_the_agent() {
    let ws = Workspace::new("mcp-procs");
    let script = Script::with_tools(vec![FakeTool::new("echo", Behaviour::Echo)]);
    let (first, one) = stdio_entry("one", &script, ws.root());
    let (second, two) = stdio_entry("two", &script, ws.root());
    let llm = FakeLlm::start(vec![]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (a, _) = open(&mut acp, &ws.project(), json!([first]));
    let (_b, _) = open(&mut acp, &ws.project(), json!([second, first]));
    assert_eq!(one.pids().len(), 2, "each session has its own server: {:?}", one.pids());
    acp.call("session/close", json!({"sessionId": a}));
    assert!(
        gone(|| if one.pids().len() < 2 { Vec::new() } else { one.pids() }),
        "closing a session ends its server"
    );
    assert_eq!(one.pids().len(), 1, "the other session's server stays");
    acp.close_stdin();
    assert!(acp.wait_exit(WAIT).is_some());
    assert!(gone(|| one.pids()), "left: {:?}", one.pids());
    assert!(gone(|| two.pids()), "left: {:?}", two.pids());
}

#[test]
fn a_call_timeout_fails_the_call_not_the_agent() {
    let ws = Workspace::new("mcp-timeout");
    let script = Script::with_tools(vec![
        FakeTool::new("wait", Behaviour::Hang),
        FakeTool::new("echo", Behaviour::Echo),
    ]);
    let (entry, server) = stdio_entry("lim", &script, ws.root());
    let llm = FakeLlm::start(vec![
        tool_reply("1", "mcp__lim__wait", json!({})),
        tool_reply("2", "mcp__lim__echo", json!({"text": "back again"})),
        text_reply("survived"),
    ]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[("IAC_CODE_MCP_CALL_TIMEOUT", "4")]);
    acp.initialize();
    let (session, _) = open(&mut acp, &ws.project(), json!([entry]));
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    let (_, response) = acp.prompt(&session, "go");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let results = tool_results(&llm, 2);
    assert!(results[0].contains("gave no answer to a call in 4 s"), "{}", results[0]);
    let cancelled = server.wait_for(has_method("notifications/cancelled"), WAIT);
    let methods: Vec<Value> = server.received().iter().map(|m| m["method"].clone()).collect();
    assert!(cancelled.is_some(), "the server is told to stop: {methods:?}");
    let inits = with_method(&server.received(), "initialize").len();
    assert_eq!(inits, 2, "a server that does not answer is failed, and restarted once");
    assert!(results[1].contains("back again"), "the restarted server answers: {}", results[1]);
}

#[test]
fn a_flood_fails_the_call_at_the_line_cap_not_the_agent() {
    // No call timeout that a slow machine could reach first (the default, 600 s, and the
    // harness waits as long as it takes): the 16 MiB line cap alone ends the call.
    let ws = Workspace::new("mcp-flood");
    let script = Script::with_tools(vec![FakeTool::new("flood", Behaviour::Big(50 << 20))]);
    let (entry, _server) = stdio_entry("lim", &script, ws.root());
    let llm =
        FakeLlm::start(vec![tool_reply("1", "mcp__lim__flood", json!({})), text_reply("survived")]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.set_timeout(Duration::from_secs(300));
    acp.initialize();
    let (session, _) = open(&mut acp, &ws.project(), json!([entry]));
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    let (_, response) = acp.prompt(&session, "go");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let results = tool_results(&llm, 1);
    assert!(results[0].contains("line over 16 MiB"), "{}", results[0]);
    let (msgs, _) = {
        llm.push(text_reply("ok"));
        acp.prompt(&session, "/mcp")
    };
    assert!(agent_text(&msgs).contains("line over 16 MiB"), "{}", agent_text(&msgs));
}

#[test]
fn an_image_reaches_a_model_that_takes_images() {
    let ws = Workspace::new("mcp-image");
    let script = Script::with_tools(vec![FakeTool::new("shot", Behaviour::Image)]);
    let (entry, _server) = stdio_entry("cam", &script, ws.root());
    let llm =
        FakeLlm::start(vec![tool_reply("1", "mcp__cam__shot", json!({})), text_reply("a dot")]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[("IAC_CODE_IMAGES", "true")]);
    acp.initialize();
    let (session, _) = open(&mut acp, &ws.project(), json!([entry]));
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    let (_, response) = acp.prompt(&session, "take a picture");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(tool_results(&llm, 1)[0].contains("[image (image/png, 1 KiB) attached]"));
    let messages = llm.requests()[1].body["messages"].as_array().unwrap().clone();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user", "the image follows the tool message");
    let url = last["content"][1]["image_url"]["url"].as_str().unwrap();
    assert!(url.starts_with("data:image/png;base64,iVBOR"), "{url}");
    // It is journalled: after a restart the model still sees it.
    acp.close_stdin();
    assert!(acp.wait_exit(WAIT).is_some());
    llm.push(text_reply("still a dot"));
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[("IAC_CODE_IMAGES", "true")]);
    acp.initialize();
    let (_, response) = acp.open_session("session/load", &session, &ws.project());
    assert!(response.get("result").is_some(), "{response}");
    acp.prompt(&session, "what was it?");
    let body = llm.requests()[2].body.to_string();
    assert!(body.contains("data:image/png;base64,iVBOR"), "the image is in the context again");
}
