//! MCP servers beyond stdio and beyond the client's entries: Streamable HTTP and the older
//! HTTP+SSE, an ACP connection over HTTP ended by DELETE, load and resume, sub-agents,
//! `settings.json` and an approved project `.mcp.json`, and the `iac-code mcp` commands.

use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp::{gone, offered, open, status, tool_results};
use crate::support::acp_client::{AcpProcess, Permission, agent_text, updates_of};
use crate::support::command::iac_code;
use crate::support::fake_llm::{FakeLlm, text_reply, tool_reply};
use crate::support::fake_mcp::{
    Behaviour, FakeTool, HttpKind, HttpMcp, Script, TEST_TOKEN, has_method, mcp_json, stdio_entry,
    with_method,
};
use crate::support::http_client::{Event, HttpServer};
use crate::support::workspace::Workspace;

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn streamable_http_sends_its_headers_streams_progress_and_ends_the_session() {
    let ws = Workspace::new("mcp-http");
    let script = Script {
        sse_responses: true,
        ..Script::with_tools(vec![
            FakeTool::new("echo", Behaviour::Echo),
            FakeTool::new("slow", Behaviour::Progress(2)),
        ])
    };
    let server = HttpMcp::start(script, HttpKind::Streamable);
    let llm = FakeLlm::start(vec![
        tool_reply("1", "mcp__web__echo", json!({"text": "over http"})),
        tool_reply("2", "mcp__web__slow", json!({})),
        text_reply("done"),
    ]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    let caps = acp.initialize();
    assert_eq!(caps["agentCapabilities"]["mcpCapabilities"], json!({"http": true, "sse": true}));
    let (session, result) = open(&mut acp, &ws.project(), json!([server.entry("web")]));
    assert_eq!(status(&result, "web")["transport"], "http");
    assert_eq!(status(&result, "web")["status"], "ready");
    acp.set_permission(Permission::AllowAlways);
    let (msgs, response) = acp.prompt(&session, "use the web server");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(tool_results(&llm, 2), ["over http", "done"]);
    let progress = updates_of(&msgs, "tool_call_update")
        .iter()
        .filter(|u| u["content"].to_string().contains("step 1"))
        .count();
    assert!(progress >= 1, "progress over the call's event stream");
    let sessions = server.sessions();
    assert_eq!(sessions.len(), 1);
    let requests = server.requests();
    let posts: Vec<_> = requests.iter().filter(|r| r.method == "POST").collect();
    assert!(posts.len() >= 4, "{}", posts.len());
    for post in &posts {
        assert_eq!(post.header("authorization"), Some(format!("Bearer {TEST_TOKEN}").as_str()));
        let accept = post.header("accept").unwrap_or_default();
        assert!(accept.contains("application/json") && accept.contains("text/event-stream"));
    }
    for post in &posts[1..] {
        assert_eq!(post.header("mcp-session-id"), Some(sessions[0].as_str()));
        assert_eq!(post.header("mcp-protocol-version"), Some("2025-11-25"));
    }
    assert_eq!(server.deleted(), 0);
    acp.call("session/close", json!({"sessionId": session}));
    assert_eq!(server.deleted(), 1, "closing the session ends the MCP session");
}

#[test]
fn the_older_sse_transport_and_a_broken_http_server() {
    let ws = Workspace::new("mcp-sse");
    let legacy = HttpMcp::start(
        Script::with_tools(vec![FakeTool::new("echo", Behaviour::Echo)]),
        HttpKind::LegacySse,
    );
    let broken = HttpMcp::start(
        Script::with_tools(vec![FakeTool::new("boom", Behaviour::Crash)]),
        HttpKind::Streamable,
    );
    let llm = FakeLlm::start(vec![
        tool_reply("1", "mcp__old__echo", json!({"text": "via sse"})),
        tool_reply("2", "mcp__bad__boom", json!({})),
        text_reply("done"),
        text_reply("next"),
    ]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let servers = json!([legacy.entry("old"), broken.entry("bad")]);
    let (session, result) = open(&mut acp, &ws.project(), servers);
    assert_eq!(status(&result, "old")["transport"], "sse");
    assert_eq!(status(&result, "old")["status"], "ready");
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    let (_, response) = acp.prompt(&session, "both");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let results = tool_results(&llm, 2);
    assert_eq!(results[0], "via sse");
    assert!(results[1].contains("MCP server 'bad' failed during the call"), "{}", results[1]);
    let (msgs, _) = acp.prompt(&session, "/mcp");
    let text = agent_text(&msgs);
    assert!(text.contains("`old` (sse, from client): ready, 1 tool"), "{text}");
    assert!(text.contains("`bad` (http, from client): failed"), "{text}");
    let (_, _) = acp.prompt(&session, "after");
    assert!(!offered(&llm, 3).iter().any(|t| t.starts_with("mcp__bad__")), "its tools are gone");
    assert!(offered(&llm, 3).contains(&"mcp__old__echo".to_owned()));
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[test]
fn deleting_an_http_connection_ends_its_servers() {
    let ws = Workspace::new("mcp-acp-http");
    let script = Script::with_tools(vec![FakeTool::new("echo", Behaviour::Echo)]);
    let (entry, handles) = stdio_entry("proc", &script, ws.root());
    // Over HTTP a client's programs start only where the node allows them.
    let server = HttpServer::spawn(&ws, None, &[], &[("IAC_CODE_CLIENT_MCP", "stdio")]);
    let conn = server.initialize();
    let sse = server.stream(&conn, None, None);
    let cwd = ws.project();
    let message = rpc(1, "session/new", json!({"cwd": cwd, "mcpServers": [entry]}));
    assert_eq!(server.post(Some(&conn), &message).status, 202);
    let answered =
        |e: &Event| e.data.get("id") == Some(&json!(1)) && e.data.get("method").is_none();
    let events = sse.until(answered);
    let result = &events.last().unwrap().data["result"];
    assert_eq!(status(result, "proc")["status"], "ready");
    assert_eq!(handles.pids().len(), 1, "the server runs: {:?}", handles.pids());
    let delete = server.request("DELETE", "/acp", &[("Acp-Connection-Id", &conn)], b"");
    assert!(delete.status < 300, "{delete:?}");
    assert!(gone(|| handles.pids()), "left: {:?}", handles.pids());
}

#[test]
fn load_resume_and_fork_attach_the_servers_again_and_sub_agents_get_read_only_ones() {
    let ws = Workspace::new("mcp-reopen");
    let script = Script::with_tools(vec![
        FakeTool::new("write", Behaviour::Echo),
        FakeTool::annotated("read", Behaviour::Echo, json!({"readOnlyHint": true})),
    ]);
    let (entry, server) = stdio_entry("repo", &script, ws.root());
    let explore = json!({"subagent_type": "explore", "description": "look", "prompt": "look"});
    let llm = FakeLlm::start(vec![
        text_reply("first"),
        text_reply("after load"),
        tool_reply("a1", "agent", explore),
        text_reply("the sub-agent's answer"),
        text_reply("parent done"),
    ]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (session, _) = open(&mut acp, &ws.project(), json!([entry]));
    acp.prompt(&session, "hello");
    acp.call("session/close", json!({"sessionId": session}));
    for method in ["session/load", "session/resume"] {
        let params = json!({"sessionId": session, "cwd": ws.project(), "mcpServers": [entry]});
        let id = acp.request(method, params);
        let (_, response) = acp.until_response(&id);
        assert_eq!(status(&response["result"], "repo")["status"], "ready", "{method}");
        acp.expect_commands(&session);
        if method == "session/load" {
            acp.prompt(&session, "still there?");
            assert!(offered(&llm, 1).contains(&"mcp__repo__write".to_owned()), "tools after load");
        }
        acp.call("session/close", json!({"sessionId": session}));
    }
    assert_eq!(with_method(&server.received(), "initialize").len(), 3);
    let params = json!({"sessionId": session, "cwd": ws.project(), "mcpServers": [entry]});
    let response = acp.call("session/fork", params);
    let forked = response["result"]["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(status(&response["result"], "repo")["status"], "ready");
    acp.expect_commands(&forked);
    acp.set_permission(Permission::AllowOnce);
    acp.prompt(&forked, "explore");
    // Request 3 is the sub-agent's: read-only MCP tools only.
    let sub = offered(&llm, 3);
    assert!(sub.contains(&"mcp__repo__read".to_owned()), "{sub:?}");
    assert!(!sub.contains(&"mcp__repo__write".to_owned()), "{sub:?}");
}

/// Writes `settings.json` with these `mcpServers`.
fn settings(ws: &Workspace, servers: Value) {
    std::fs::create_dir_all(ws.config()).unwrap();
    let text = json!({ "mcpServers": servers }).to_string();
    std::fs::write(ws.config().join("settings.json"), text).unwrap();
}

#[test]
fn settings_servers_start_and_a_project_file_waits_for_approval() {
    let ws = Workspace::new("mcp-files");
    let script = Script::with_tools(vec![FakeTool::new("echo", Behaviour::Echo)]);
    let (_, global) = stdio_entry("global", &script, ws.root());
    let (_, project) = stdio_entry("local", &script, ws.root());
    settings(&ws, json!({"global": global.mcp_json_entry()}));
    let file = mcp_json(&[("local", project.mcp_json_entry())]);
    ws.write(".mcp.json", &file.to_string());
    let llm = FakeLlm::start(vec![
        text_reply("one"),
        text_reply("two"),
        text_reply("three"),
        text_reply("four"),
    ]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (session, result) = open(&mut acp, &ws.project(), json!([]));
    assert_eq!(status(&result, "global")["origin"], "settings");
    assert!(result.pointer("/_meta/iacCode/mcpServers/1").is_none(), "not approved: not started");
    // Declined: not started, not asked again in this session.
    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&session, "first");
    let asked: Vec<&Value> =
        msgs.iter().filter(|m| m["method"] == "session/request_permission").collect();
    assert_eq!(asked.len(), 1, "the project file is put to the user");
    assert!(asked[0]["params"]["toolCall"]["title"].as_str().unwrap().contains(".mcp.json"));
    assert!(offered(&llm, 0).contains(&"mcp__global__echo".to_owned()));
    assert!(!offered(&llm, 0).contains(&"mcp__local__echo".to_owned()));
    assert!(project.pids().is_empty());
    let (msgs, _) = acp.prompt(&session, "second");
    assert!(msgs.iter().all(|m| m["method"] != "session/request_permission"), "asked once");
    // Approved in a new session: started for this turn already, and remembered.
    let (session, _) = open(&mut acp, &ws.project(), json!([]));
    acp.set_permission(Permission::AllowAlways);
    acp.prompt(&session, "third");
    assert!(offered(&llm, 2).contains(&"mcp__local__echo".to_owned()), "{:?}", offered(&llm, 2));
    let (_, result) = open(&mut acp, &ws.project(), json!([]));
    assert_eq!(status(&result, "local")["origin"], "project", "approved: starts with sessions");
    // A changed file asks again.
    let changed =
        mcp_json(&[("local", project.mcp_json_entry()), ("other", json!({"command": "x"}))]);
    ws.write(".mcp.json", &changed.to_string());
    let (session, result) = open(&mut acp, &ws.project(), json!([]));
    assert!(result.pointer("/_meta/iacCode/mcpServers/1").is_none(), "{result}");
    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&session, "fourth");
    assert!(msgs.iter().any(|m| m["method"] == "session/request_permission"));
    assert!(global.wait_for(has_method("tools/list"), WAIT).is_some());
    // From a shell: `test` refuses the unapproved file's server, `approve` approves it.
    let (code, _, err) = mcp_cli(&ws, &["test", "local"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not approved"), "{err}");
    let (code, out, _) = mcp_cli(&ws, &["approve"]);
    assert_eq!(code, 0);
    assert!(out.contains("local (") && out.contains("other (x)"), "{out}");
    let (code, out, err) = mcp_cli(&ws, &["test", "local"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("echo\t"), "{out}");
}

fn mcp_cli(ws: &Workspace, args: &[&str]) -> (i32, String, String) {
    let out = iac_code(ws)
        .current_dir(ws.project())
        .arg("mcp")
        .args(args)
        .output()
        .expect("run iac-code mcp");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn the_mcp_command_adds_lists_tests_and_removes_servers() {
    let ws = Workspace::new("mcp-cli");
    let script = Script::with_tools(vec![FakeTool::new("echo", Behaviour::Echo)]);
    let (_, fake) = stdio_entry("cli", &script, ws.root());
    let mut add = vec!["add"];
    let env: Vec<String> = fake.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    for pair in &env {
        add.extend(["-e", pair.as_str()]);
    }
    add.extend(["cli", "--", fake.command.as_str()]);
    add.extend(fake.args.iter().map(String::as_str));
    assert_eq!(mcp_cli(&ws, &add).0, 0);
    let (code, _, err) = mcp_cli(&ws, &add);
    assert_eq!(code, 2, "a name taken: {err}");
    let http = [
        "add",
        "--transport",
        "http",
        "-H",
        "Authorization: Bearer s3cret",
        "web",
        "https://mcp.example/mcp",
    ];
    assert_eq!(mcp_cli(&ws, &http).0, 0);
    assert_eq!(
        mcp_cli(&ws, &["add-json", "raw", r#"{"type":"sse","url":"http://127.0.0.1:1/sse"}"#]).0,
        0
    );
    let (code, _, err) = mcp_cli(&ws, &["add-json", "bad", r#"{"type":"carrier-pigeon"}"#]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown transport type"), "{err}");

    let (code, out, _) = mcp_cli(&ws, &["list"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(out.contains("web\thttp\thttps://mcp.example/mcp\tsettings"), "{out}");
    let (_, out, _) = mcp_cli(&ws, &["get", "web", "--json"]);
    let entry: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(entry["headers"]["Authorization"], "***", "secrets are masked");
    assert!(!out.contains("s3cret"));

    let (code, out, err) = mcp_cli(&ws, &["test", "cli"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("echo\t"), "{out}");
    assert!(err.contains("connected to fake-mcp"), "{err}");
    let (code, _, err) = mcp_cli(&ws, &["test", "raw"]);
    assert_eq!(code, 1, "a server that does not work: {err}");
    let (code, _, _) = mcp_cli(&ws, &["test", "nobody"]);
    assert_eq!(code, 2);

    assert_eq!(mcp_cli(&ws, &["remove", "web"]).0, 0);
    assert_eq!(mcp_cli(&ws, &["remove", "web"]).0, 2);
    let (_, out, _) = mcp_cli(&ws, &["list", "--json"]);
    let names: Vec<String> = serde_json::from_str::<Vec<Value>>(&out)
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["cli", "raw"]);
    // The server reads what the command wrote.
    let llm = FakeLlm::start(vec![text_reply("ok")]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (_, result) = open(&mut acp, &ws.project(), json!([]));
    assert_eq!(status(&result, "cli")["status"], "ready");
    let settings = std::fs::read_to_string(ws.config().join("settings.json")).unwrap();
    let mode = std::fs::metadata(ws.config().join("settings.json")).unwrap();
    assert_eq!(std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o077, 0);
    assert!(settings.contains("mcpServers"));
}

#[test]
fn a_cancel_over_http_tells_the_server_at_once() {
    let ws = Workspace::new("mcp-http-cancel");
    let script = Script::with_tools(vec![FakeTool::new("wait", Behaviour::Hang)]);
    let server = HttpMcp::start(script, HttpKind::Streamable);
    let llm = FakeLlm::start(vec![tool_reply("1", "mcp__web__wait", json!({}))]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (session, _) = open(&mut acp, &ws.project(), json!([server.entry("web")]));
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    let id = acp.start_prompt(&session, "wait");
    assert!(server.wait_for(has_method("tools/call"), WAIT).is_some());
    let started = std::time::Instant::now();
    acp.notify("session/cancel", json!({"sessionId": session}));
    let (_, response) = acp.until_response(&id);
    assert_eq!(response["result"]["stopReason"], "cancelled");
    assert!(started.elapsed() < Duration::from_secs(5), "at once");
    assert!(server.wait_for(has_method("notifications/cancelled"), WAIT).is_some());
    assert!(server.wait_hangs_ended(1, WAIT), "the held request ends");
}
