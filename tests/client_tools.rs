//! The client's files and terminals: a test editor that serves buffers unlike the disk,
//! records writes instead of writing, and runs terminals for real, driven over stdio.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, updates_of};
use crate::support::fake_llm::{FakeLlm, text_reply, tool_reply};
use crate::support::workspace::Workspace;

/// The editor's side of the fs and terminal methods.
#[derive(Default)]
struct Editor {
    /// Open buffers, by absolute path (what the editor shows, not what is on disk).
    buffers: HashMap<PathBuf, String>,
    /// Every fs request, in order: (method, path).
    asked: Vec<(String, String)>,
    /// Writes received: (path, content).
    writes: Vec<(String, String)>,
    /// Answer fs requests with this error instead.
    fail: bool,
    /// The answer to permission questions.
    allow: bool,
    terminals: HashMap<String, (Child, PathBuf)>,
    waits: Vec<(Value, String)>,
    killed: Vec<String>,
    released: Vec<String>,
    dir: PathBuf,
}

impl Editor {
    fn new(ws: &Workspace) -> Editor {
        let dir = ws.root().join("editor");
        std::fs::create_dir_all(&dir).unwrap();
        let mut editor = Editor::default();
        editor.allow = true;
        editor.dir = dir;
        editor
    }

    /// Answers the agent's requests until the response to `id`.
    fn drive(&mut self, acp: &mut AcpProcess, id: &Value) -> (Vec<Value>, Value) {
        let mut seen = Vec::new();
        loop {
            self.finish_waits(acp);
            let Some(msg) = acp.recv_timeout(Duration::from_millis(20)) else { continue };
            if msg.get("method").is_none() && &msg["id"] == id {
                return (seen, msg);
            }
            if let (Some(method), Some(req)) = (msg["method"].as_str(), msg.get("id")) {
                self.answer(acp, method, req.clone(), &msg["params"]);
            }
            seen.push(msg);
        }
    }

    fn answer(&mut self, acp: &mut AcpProcess, method: &str, id: Value, params: &Value) {
        let path = params["path"].as_str().unwrap_or("").to_string();
        let terminal = params["terminalId"].as_str().unwrap_or("").to_string();
        if method.starts_with("fs/") {
            self.asked.push((method.to_string(), path.clone()));
            if self.fail {
                return acp.respond_error(id, -32603, "the editor cannot do that now");
            }
        }
        match method {
            "session/request_permission" => {
                let option = if self.allow { "allow_once" } else { "reject_once" };
                acp.respond(id, json!({"outcome": {"outcome": "selected", "optionId": option}}));
            }
            "fs/read_text_file" => match self.buffers.get(&PathBuf::from(&path)) {
                Some(text) => {
                    let from = params["line"].as_u64().unwrap_or(1).max(1) as usize - 1;
                    let limit = params["limit"].as_u64().map_or(usize::MAX, |l| l as usize);
                    let lines: Vec<&str> = text.lines().skip(from).take(limit).collect();
                    acp.respond(id, json!({"content": lines.join("\n") + "\n"}));
                }
                None => acp.respond_error(id, -32002, "Resource not found"),
            },
            "fs/write_text_file" => {
                self.writes.push((path, params["content"].as_str().unwrap_or("").to_string()));
                acp.respond(id, Value::Null);
            }
            "terminal/create" => {
                let name = format!("term-{}", self.terminals.len() + 1);
                let log = self.dir.join(&name);
                let args: Vec<String> = params["args"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap().to_string())
                    .collect();
                let mut command = Command::new(params["command"].as_str().unwrap());
                command.args(&args).current_dir(params["cwd"].as_str().unwrap());
                for var in params["env"].as_array().unwrap() {
                    command.env(var["name"].as_str().unwrap(), var["value"].as_str().unwrap());
                }
                let out = File::create(&log).unwrap();
                let child = command
                    .process_group(0)
                    .stdin(Stdio::null())
                    .stdout(out.try_clone().unwrap())
                    .stderr(out)
                    .spawn()
                    .unwrap();
                self.terminals.insert(name.clone(), (child, log));
                acp.respond(id, json!({"terminalId": name}));
            }
            "terminal/wait_for_exit" => self.waits.push((id, terminal)),
            "terminal/kill" => {
                kill_group(&self.terminals[&terminal].0);
                self.killed.push(terminal);
                acp.respond(id, json!({}));
            }
            "terminal/output" => {
                let (child, log) = self.terminals.get_mut(&terminal).unwrap();
                let output = std::fs::read_to_string(log).unwrap();
                let status = child.try_wait().unwrap().map(exit_status);
                acp.respond(
                    id,
                    json!({"output": output, "truncated": false, "exitStatus": status}),
                );
            }
            "terminal/release" => {
                self.released.push(terminal);
                acp.respond(id, json!({}));
            }
            other => panic!("unexpected agent request {other}"),
        }
    }

    fn finish_waits(&mut self, acp: &mut AcpProcess) {
        let mut still = Vec::new();
        for (id, terminal) in std::mem::take(&mut self.waits) {
            match self.terminals.get_mut(&terminal).unwrap().0.try_wait().unwrap() {
                Some(status) => acp.respond(id, exit_status(status)),
                None => still.push((id, terminal)),
            }
        }
        self.waits = still;
    }
}

/// Kills a terminal's whole process group, as an editor does.
fn kill_group(child: &Child) {
    let group = format!("-{}", child.id());
    let _ = Command::new("kill").args(["-9", "--", &group]).status();
}

impl Drop for Editor {
    fn drop(&mut self) {
        for (child, _) in self.terminals.values_mut() {
            kill_group(child);
            let _ = child.wait();
        }
    }
}

fn exit_status(status: std::process::ExitStatus) -> Value {
    use std::os::unix::process::ExitStatusExt;
    json!({"exitCode": status.code(), "signal": status.signal().map(|s| format!("SIG{s}"))})
}

/// A session whose client offers its files and terminals, running `calls` one per reply.
fn session(ws: &Workspace, calls: Vec<(&str, Value)>) -> (FakeLlm, AcpProcess, String) {
    let mut script: Vec<_> = calls
        .into_iter()
        .enumerate()
        .map(|(i, (n, a))| tool_reply(&format!("c{i}"), n, a))
        .collect();
    script.push(text_reply("done"));
    let llm = FakeLlm::start(script);
    let mut acp = AcpProcess::spawn_with_llm(ws, &llm, &[]);
    acp.initialize_with(
        json!({"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": true}),
    );
    let session = acp.new_session(&ws.project());
    (llm, acp, session)
}

#[test]
fn files_go_through_the_editor_after_our_rules() {
    let ws = Workspace::new("client-files");
    ws.write("main.tf", "on disk\n");
    let main = ws.project().join("main.tf");
    let mut editor = Editor::new(&ws);
    editor.buffers.insert(main.clone(), "resource \"x\" {}\n# unsaved edit\n".into());
    let (llm, mut acp, session) = session(
        &ws,
        vec![
            ("read_file", json!({"path": "main.tf"})),
            (
                "edit_file",
                json!({"path": "main.tf", "old_string": "unsaved edit", "new_string": "kept"}),
            ),
            ("write_file", json!({"path": "new.tf", "content": "output \"y\" {}\n"})),
        ],
    );
    let id = acp.start_prompt(&session, "go");
    let (msgs, response) = editor.drive(&mut acp, &id);
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let read = crate::tools::tool_result(&llm, 1);
    assert!(read.contains("# unsaved edit") && !read.contains("on disk"), "{read}");
    assert_eq!(editor.writes.len(), 2, "{:?}", editor.writes);
    assert_eq!(
        editor.writes[0],
        (main.display().to_string(), "resource \"x\" {}\n# kept\n".into())
    );
    assert_eq!(ws.read("main.tf"), "on disk\n", "the disk file is not touched by us");
    assert!(!ws.exists("new.tf"), "new files are the editor's to create");
    let diffs = updates_of(&msgs, "tool_call_update")
        .into_iter()
        .flat_map(|u| u["content"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["type"] == "diff")
        .count();
    assert_eq!(diffs, 2, "both edits keep their diff");
}

#[test]
fn an_outside_path_asks_before_the_editor_is_called_and_a_refusal_never_reaches_it() {
    let ws = Workspace::new("client-outside");
    let mut editor = Editor::new(&ws);
    editor.allow = false;
    let outside = ws.root().join("secret.tf");
    let (_llm, mut acp, session) = session(
        &ws,
        vec![
            ("read_file", json!({"path": outside})),
            ("write_file", json!({"path": ".envrc", "content": "x"})),
        ],
    );
    let id = acp.start_prompt(&session, "go");
    let (msgs, _) = editor.drive(&mut acp, &id);
    let asked = msgs.iter().filter(|m| m["method"] == "session/request_permission").count();
    assert_eq!(asked, 2);
    assert!(editor.asked.is_empty(), "refused calls never reach the editor: {:?}", editor.asked);
}

#[test]
fn an_editor_error_reaches_the_model_without_a_local_fallback() {
    let ws = Workspace::new("client-error");
    ws.write("main.tf", "on disk\n");
    let mut editor = Editor::new(&ws);
    editor.fail = true;
    let (llm, mut acp, session) = session(
        &ws,
        vec![
            ("read_file", json!({"path": "main.tf"})),
            ("write_file", json!({"path": "main.tf", "content": "new\n"})),
        ],
    );
    let id = acp.start_prompt(&session, "go");
    let (_, response) = editor.drive(&mut acp, &id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let read = crate::tools::tool_result(&llm, 1);
    assert!(read.contains("cannot do that now") && !read.contains("on disk"), "{read}");
    let write = crate::tools::tool_result(&llm, 2);
    assert!(write.contains("cannot write"), "{write}");
    assert_eq!(ws.read("main.tf"), "on disk\n", "never written locally instead");
}

#[test]
fn commands_run_in_the_editors_terminal() {
    let ws = Workspace::new("client-terminal");
    let mut editor = Editor::new(&ws);
    let (llm, mut acp, session) = session(
        &ws,
        vec![
            ("bash", json!({"command": "echo hello from $TF_INPUT; exit 3"})),
            ("bash", json!({"command": "sleep 1000", "timeout": 1})),
        ],
    );
    let id = acp.start_prompt(&session, "go");
    let (msgs, response) = editor.drive(&mut acp, &id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let first = crate::tools::tool_result(&llm, 1);
    assert!(first.contains("hello from 0") && first.ends_with("Exit code: 3"), "{first}");
    let second = crate::tools::tool_result(&llm, 2);
    assert!(second.starts_with("Command timed out after 1 s"), "{second}");
    assert_eq!(editor.killed, ["term-2"], "the timeout killed the terminal");
    assert_eq!(editor.released, ["term-1", "term-2"], "every terminal is released");
    let shown = updates_of(&msgs, "tool_call_update")
        .into_iter()
        .filter(|u| u["content"][0]["type"] == "terminal")
        .count();
    assert!(shown >= 2, "the tool calls show the live terminals");
}

#[test]
fn a_cancel_kills_the_terminal_and_ends_at_once() {
    let ws = Workspace::new("client-terminal-cancel");
    let mut editor = Editor::new(&ws);
    let (_llm, mut acp, session) = session(&ws, vec![("bash", json!({"command": "sleep 1000"}))]);
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    let id = acp.start_prompt(&session, "go");
    loop {
        let msg = acp.recv();
        if let (Some(method), Some(req)) = (msg["method"].as_str(), msg.get("id")) {
            editor.answer(&mut acp, method, req.clone(), &msg["params"]);
            if method == "terminal/wait_for_exit" {
                break;
            }
        }
    }
    acp.notify("session/cancel", json!({"sessionId": session}));
    let (_, response) = editor.drive(&mut acp, &id);
    assert_eq!(response["result"]["stopReason"], "cancelled");
    // The kill and the release were sent (their answers are not waited for).
    let mut until_released = 0;
    while editor.released.is_empty() && until_released < 200 {
        if let Some(msg) = acp.recv_timeout(Duration::from_millis(20))
            && let (Some(method), Some(req)) = (msg["method"].as_str(), msg.get("id"))
        {
            editor.answer(&mut acp, method, req.clone(), &msg["params"]);
        }
        until_released += 1;
    }
    assert_eq!(editor.killed, ["term-1"]);
    assert_eq!(editor.released, ["term-1"]);
}

#[test]
fn over_http_the_editor_answers_on_post_and_the_plan_arrives_on_the_stream() {
    use crate::support::http_client::HttpServer;
    let ws = Workspace::new("client-http");
    ws.write("main.tf", "on disk\n");
    let llm = FakeLlm::start(vec![
        tool_reply("r1", "read_file", json!({"path": "main.tf"})),
        tool_reply("p1", "update_plan", json!({"entries": [{"content": "apply"}]})),
        text_reply("done"),
    ]);
    let server = HttpServer::spawn(&ws, Some(&llm), &[], &[]);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true}}}});
    let response = server.post(None, &init);
    let conn = response.header("acp-connection-id").expect("a connection").to_string();
    let sse = server.stream(&conn, None, None);
    let new = json!({"jsonrpc": "2.0", "id": 1, "method": "session/new",
        "params": {"cwd": ws.project(), "mcpServers": []}});
    server.post(Some(&conn), &new);
    let created = sse.until(|e| e.data["id"] == 1 && e.data.get("result").is_some());
    let session = created.last().unwrap().data["result"]["sessionId"].as_str().unwrap().to_string();
    let prompt = json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}});
    server.post(Some(&conn), &prompt);
    let asked = sse.until(|e| e.data["method"] == "fs/read_text_file");
    let request = &asked.last().unwrap().data;
    assert_eq!(request["params"]["path"], ws.project().join("main.tf").display().to_string());
    let answer =
        json!({"jsonrpc": "2.0", "id": request["id"], "result": {"content": "from the editor\n"}});
    assert_eq!(server.post(Some(&conn), &answer).status, 202);
    let events = sse.until(|e| e.data["id"] == 2 && e.data.get("method").is_none());
    assert_eq!(events.last().unwrap().data["result"]["stopReason"], "end_turn");
    let read = crate::tools::tool_result(&llm, 1);
    assert!(read.contains("from the editor") && !read.contains("on disk"), "{read}");
    let plans =
        events.iter().filter(|e| e.data["params"]["update"]["sessionUpdate"] == "plan").count();
    assert_eq!(plans, 1, "the plan arrives on the stream");
}

#[test]
fn a_link_to_a_name_that_is_not_utf8_is_a_tool_error_never_a_panic() {
    use std::os::unix::ffi::OsStrExt;
    let ws = Workspace::new("client-odd-name");
    let odd = ws.project().join(std::ffi::OsStr::from_bytes(b"odd-\xff.tf"));
    std::fs::write(&odd, "on disk\n").unwrap();
    std::os::unix::fs::symlink(&odd, ws.project().join("link.tf")).unwrap();
    let mut editor = Editor::new(&ws);
    let (llm, mut acp, session) = session(
        &ws,
        vec![
            ("read_file", json!({"path": "link.tf"})),
            ("write_file", json!({"path": "link.tf", "content": "new\n"})),
        ],
    );
    let id = acp.start_prompt(&session, "go");
    let (_, response) = editor.drive(&mut acp, &id);
    assert_eq!(response["result"]["stopReason"], "end_turn", "the turn goes on: {response}");
    for n in [1, 2] {
        let result = crate::tools::tool_result(&llm, n);
        assert!(result.contains("odd-") && result.contains("not valid UTF-8"), "{result}");
    }
    assert!(editor.asked.is_empty(), "nothing reached the editor: {:?}", editor.asked);
    assert_eq!(std::fs::read_to_string(&odd).unwrap(), "on disk\n");
}
