//! What MCP entries may make the node do: an approved project `.mcp.json` starts its
//! programs only as they were approved (a rewritten server script asks before it is written
//! and is not started until approved again); a client's URLs do not reach internal addresses
//! unless the node allows it, and a failed server's error names the status, never the body;
//! over HTTP, a client's stdio entries start nothing unless the node allows it.

use serde_json::{Value, json};

use crate::mcp::{open, status};
use crate::support::acp_client::{AcpProcess, Permission};
use crate::support::command::iac_code;
use crate::support::fake_llm::{FakeLlm, text_reply, tool_reply};
use crate::support::fake_mcp::{
    Behaviour, FakeTool, HttpKind, HttpMcp, Script, StdioHandles, mcp_json, stdio_entry,
};
use crate::support::http_client::{Event, HttpServer};
use crate::support::http_fixture::{HttpFixture, Route};
use crate::support::workspace::Workspace;

fn echo_script() -> Script {
    Script::with_tools(vec![FakeTool::new("echo", Behaviour::Echo)])
}

/// A shell script that becomes the fake stdio server of `handles` (as its entry would).
fn launcher(handles: &StdioHandles) -> String {
    let quoted: Vec<String> = handles.args[2..].iter().map(|a| format!("'{a}'")).collect();
    format!("exec 3>&1 1>&2; exec {}\n", quoted.join(" "))
}

fn permission_requests(msgs: &[Value]) -> Vec<&Value> {
    msgs.iter().filter(|m| m["method"] == "session/request_permission").collect()
}

fn option_kinds(request: &Value) -> Vec<String> {
    let options = request["params"]["options"].as_array().unwrap();
    options.iter().map(|o| o["kind"].as_str().unwrap().to_owned()).collect()
}

fn set_mode(acp: &mut AcpProcess, session: &str, mode: &str) {
    let response = acp.call("session/set_mode", json!({"sessionId": session, "modeId": mode}));
    assert!(response.get("error").is_none(), "{response}");
}

#[test]
fn an_approved_project_server_runs_only_the_program_that_was_approved() {
    let ws = Workspace::new("mcp-trust-program");
    let (_, handles) = stdio_entry("local", &echo_script(), ws.root());
    // The server is a script of the project, run by the shell the file names.
    let original = launcher(&handles);
    ws.write("mcp/server.sh", &original);
    let env: serde_json::Map<String, Value> =
        handles.env.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    let entry = json!({"command": "/bin/sh", "args": ["mcp/server.sh"], "env": env});
    ws.write(".mcp.json", &mcp_json(&[("local", entry)]).to_string());
    let approve = iac_code(&ws).current_dir(ws.project()).args(["mcp", "approve"]).output();
    let approve = approve.expect("run iac-code mcp approve");
    assert_eq!(approve.status.code(), Some(0), "{}", String::from_utf8_lossy(&approve.stderr));

    let ran = ws.root().join("tampered-ran");
    let tampered = format!("touch '{}'\n{original}", ran.display());
    let append = "echo 'touch pwned' >> mcp/server.sh";
    let llm = FakeLlm::start(vec![
        tool_reply("1", "write_file", json!({"path": "notes.txt", "content": "fine"})),
        tool_reply("2", "write_file", json!({"path": "mcp/server.sh", "content": tampered})),
        tool_reply("3", "bash", json!({"command": append})),
        text_reply("held"),
        tool_reply("4", "write_file", json!({"path": "mcp/server.sh", "content": tampered})),
        text_reply("written"),
        text_reply("next session"),
    ]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (session, result) = open(&mut acp, &ws.project(), json!([]));
    assert_eq!(status(&result, "local")["status"], "ready", "approved: it starts");

    // accept_edits: another file is written unasked; the server's script asks, twice,
    // never offering "always".
    set_mode(&mut acp, &session, "accept_edits");
    acp.set_permission(Permission::RejectOnce);
    let (msgs, response) = acp.prompt(&session, "edit");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(ws.read("notes.txt"), "fine", "an ordinary file is written unasked");
    let asked = permission_requests(&msgs);
    assert_eq!(asked.len(), 2, "the write_file and the bash redirection ask: {asked:?}");
    for request in &asked {
        let title = request["params"]["toolCall"]["title"].as_str().unwrap();
        assert!(title.contains("mcp/server.sh") || title.contains(".mcp.json"), "{title}");
        assert!(title.contains("MCP servers of"), "says why: {title}");
        assert!(!option_kinds(request).contains(&"allow_always".to_owned()), "{request}");
    }
    assert_eq!(ws.read("mcp/server.sh"), original, "refused: nothing written");

    // Written anyway (bypass): the next session does not start it and asks again.
    set_mode(&mut acp, &session, "bypass_permissions");
    let (msgs, _) = acp.prompt(&session, "write it");
    assert!(permission_requests(&msgs).is_empty(), "bypass asks nothing");
    assert_eq!(ws.read("mcp/server.sh"), tampered);
    let starts = || handles.received().iter().filter(|m| m["method"] == "initialize").count();
    assert_eq!(starts(), 1);
    let (session, result) = open(&mut acp, &ws.project(), json!([]));
    let servers = result.pointer("/_meta/iacCode/mcpServers").and_then(Value::as_array);
    assert!(servers.is_none_or(|s| s.is_empty()), "not started: {result}");
    let (msgs, _) = acp.prompt(&session, "hello");
    let asked = permission_requests(&msgs);
    assert_eq!(asked.len(), 1, "{asked:?}");
    let title = asked[0]["params"]["toolCall"]["title"].as_str().unwrap();
    assert!(title.contains("Changed since it was approved"), "{title}");
    assert!(title.contains(&ws.path("mcp/server.sh").display().to_string()), "{title}");
    assert_eq!(starts(), 1, "declined: the rewritten program never ran");
    assert!(!ran.exists(), "the rewritten program never ran");
    let out = iac_code(&ws).current_dir(ws.project()).args(["mcp", "test", "local"]).output();
    let out = out.expect("run iac-code mcp test");
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!ran.exists(), "`iac-code mcp test` does not run it either");
}

/// `session/new` over HTTP with `servers`; the result.
fn open_over_http(server: &HttpServer, cwd: &std::path::Path, servers: Value) -> Value {
    let conn = server.initialize();
    let sse = server.stream(&conn, None, None);
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "session/new",
        "params": {"cwd": cwd, "mcpServers": servers}});
    assert_eq!(server.post(Some(&conn), &message).status, 202);
    let answered =
        |e: &Event| e.data.get("id") == Some(&json!(1)) && e.data.get("method").is_none();
    let events = sse.until(answered);
    events.last().unwrap().data["result"].clone()
}

#[test]
fn a_clients_internal_mcp_url_is_refused_over_http_unless_the_node_allows_it() {
    let ws = Workspace::new("mcp-trust-internal");
    let web = HttpMcp::start(echo_script(), HttpKind::Streamable);
    let old = HttpMcp::start(echo_script(), HttpKind::LegacySse);
    // The node's own settings may name a loopback server: its operator chose it.
    let own = HttpMcp::start(echo_script(), HttpKind::Streamable);
    let text = json!({"mcpServers": {"own": own.mcp_json_entry()}}).to_string();
    std::fs::write(ws.config().join("settings.json"), text).unwrap();
    let server = HttpServer::spawn(&ws, None, &[], &[]);
    let result =
        open_over_http(&server, &ws.project(), json!([web.entry("web"), old.entry("old")]));
    for name in ["web", "old"] {
        let failed = status(&result, name);
        assert_eq!(failed["status"], "failed", "{result}");
        let error = failed["error"].as_str().unwrap();
        assert!(error.contains("a loopback address"), "{error}");
        assert!(error.contains("IAC_CODE_MCP_INTERNAL=allow"), "names the switch: {error}");
    }
    assert!(web.requests().is_empty() && old.requests().is_empty(), "never reached");
    assert_eq!(status(&result, "own")["status"], "ready", "{result}");

    let allowed = [("IAC_CODE_MCP_INTERNAL", "allow")];
    let server = HttpServer::spawn(&ws, None, &[], &allowed);
    let result =
        open_over_http(&server, &ws.project(), json!([web.entry("web"), old.entry("old")]));
    assert_eq!(status(&result, "web")["status"], "ready", "{result}");
    assert_eq!(status(&result, "old")["status"], "ready", "{result}");

    // Over stdio the client already runs us: allowed unless the node denies it.
    let mut acp = AcpProcess::spawn(&ws, &[("IAC_CODE_MCP_INTERNAL", "deny")]);
    acp.initialize();
    let (_, result) = open(&mut acp, &ws.project(), json!([web.entry("web")]));
    assert_eq!(status(&result, "web")["status"], "failed", "{result}");
    let mut acp = AcpProcess::spawn(&ws, &[]);
    acp.initialize();
    let (_, result) = open(&mut acp, &ws.project(), json!([web.entry("web")]));
    assert_eq!(status(&result, "web")["status"], "ready", "{result}");
}

#[test]
fn a_failed_http_servers_error_names_the_status_never_the_body() {
    let ws = Workspace::new("mcp-trust-body");
    let fixture = HttpFixture::start(vec![
        ("/error", Route::status(500, "SECRET-BODY-1234 internal details")),
        ("/json", Route::ok("application/json", r#"{"token": "SECRET-JSON-5678"}"#)),
        ("/text", Route::ok("text/plain", "SECRET-TEXT-9012")),
    ]);
    let entry =
        |name: &str, path: &str| json!({"type": "http", "name": name, "url": fixture.url(path)});
    let mut acp = AcpProcess::spawn(&ws, &[]);
    acp.initialize();
    let servers = json!([entry("error", "/error"), entry("json", "/json"), entry("text", "/text")]);
    let (_, result) = open(&mut acp, &ws.project(), servers);
    let error = status(&result, "error")["error"].as_str().unwrap().to_owned();
    assert!(error.contains("HTTP 500"), "the status is named: {error}");
    for name in ["json", "text"] {
        assert_eq!(status(&result, name)["status"], "failed", "{result}");
    }
    assert!(!result.to_string().contains("SECRET"), "no body in {result}");
    assert_eq!(fixture.hits().len(), 3, "each was asked once: {:?}", fixture.hits());
}

#[test]
fn over_http_a_clients_stdio_entry_starts_nothing_unless_the_node_allows_it() {
    let ws = Workspace::new("mcp-trust-stdio");
    let (entry, handles) = stdio_entry("proc", &echo_script(), ws.root());
    let server = HttpServer::spawn(&ws, None, &[], &[]);
    let result = open_over_http(&server, &ws.project(), json!([entry]));
    let refused = status(&result, "proc");
    assert_eq!(refused["status"], "failed", "{result}");
    let error = refused["error"].as_str().unwrap();
    assert!(error.contains("IAC_CODE_CLIENT_MCP=http"), "names the setting: {error}");
    assert!(error.contains("does not start programs"), "{error}");
    assert!(handles.received().is_empty() && handles.pids().is_empty(), "nothing ran");

    let server = HttpServer::spawn(&ws, None, &[], &[("IAC_CODE_CLIENT_MCP", "stdio")]);
    let result = open_over_http(&server, &ws.project(), json!([entry]));
    assert_eq!(status(&result, "proc")["status"], "ready", "allowed by the node: {result}");

    let web = HttpMcp::start(echo_script(), HttpKind::Streamable);
    let env = [("IAC_CODE_CLIENT_MCP", "none"), ("IAC_CODE_MCP_INTERNAL", "allow")];
    let server = HttpServer::spawn(&ws, None, &[], &env);
    let result = open_over_http(&server, &ws.project(), json!([web.entry("web")]));
    let error = status(&result, "web")["error"].as_str().unwrap();
    assert!(error.contains("IAC_CODE_CLIENT_MCP=none"), "{error}");
    assert!(web.requests().is_empty(), "never reached");

    // A bad value stops the node at start-up, naming the variable.
    let out = iac_code(&ws).args(["config", "show"]).env("IAC_CODE_CLIENT_MCP", "all").output();
    let out = out.expect("run iac-code config show");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("IAC_CODE_CLIENT_MCP"));
    let out = iac_code(&ws).args(["config", "show"]).output().expect("run iac-code config show");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("clientMcp") && shown.contains("mcpInternal"), "{shown}");
}
