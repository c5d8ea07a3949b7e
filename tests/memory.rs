//! Project memory through the real binary: write_memory in one session is in the next
//! session's system prompt (ACP and `-p`, from anywhere in the repository), a secret is
//! refused before anything is asked or written, the gate asks like an edit, read_memory
//! returns the index and a topic, and `/memory` shows the index and its directory.

use std::path::PathBuf;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, Permission, agent_text, updates_of};
use crate::support::command::{TestCommand, iac_code};
use crate::support::fake_llm::{FakeLlm, Reply, text_reply, tool_reply};
use crate::support::workspace::Workspace;

const INDEX_LINE: &str = "- [terraform-state](terraform-state.md) (project): where the state lives";

fn remember(id: &str, name: &str, content: &str) -> Reply {
    tool_reply(
        id,
        "write_memory",
        json!({
            "name": name,
            "type": "project",
            "description": "where the state lives",
            "content": content,
        }),
    )
}

fn state() -> Reply {
    remember("m1", "terraform-state", "State: S3 bucket acme-tfstate, lock table tf-locks.")
}

/// A workspace whose project is a git repository with a subdirectory.
fn repository(name: &str) -> Workspace {
    let ws = Workspace::new(name);
    ws.write(".git/HEAD", "ref: refs/heads/main\n");
    ws.write("envs/prod/main.tf", "terraform {}\n");
    ws
}

fn session(ws: &Workspace, llm: &FakeLlm, mode: &str) -> (AcpProcess, String) {
    AcpProcess::session_in_mode(ws, llm, mode)
}

/// The memory directories under the config dir (one per project).
fn memory_dirs(ws: &Workspace) -> Vec<PathBuf> {
    match std::fs::read_dir(ws.config().join("memory")) {
        Ok(entries) => entries.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    }
}

fn asked(msgs: &[Value]) -> Vec<&Value> {
    msgs.iter().filter(|m| m["method"] == "session/request_permission").collect()
}

fn system_prompt(request: &Value) -> String {
    let first = &request["messages"][0];
    assert_eq!(first["role"], "system");
    first["content"].as_str().unwrap().to_string()
}

/// The text of the last tool result the model was sent.
fn last_tool_result(llm: &FakeLlm) -> String {
    let body = llm.requests().last().unwrap().body.clone();
    let messages = body["messages"].as_array().unwrap();
    let tool = messages.iter().rev().find(|m| m["role"] == "tool").expect("a tool result");
    tool["content"].as_str().unwrap().to_string()
}

#[test]
fn memory_written_in_one_session_is_in_the_next_ones_system_prompt() {
    let ws = repository("memory-next");
    let llm = FakeLlm::start(vec![state(), text_reply("saved"), text_reply("hello")]);
    let (mut acp, first) = session(&ws, &llm, "default");
    let (_, response) = acp.prompt(&first, "remember where the state lives");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(!system_prompt(&llm.requests()[0].body).contains("# Memory"), "nothing yet");
    assert!(last_tool_result(&llm).contains(INDEX_LINE), "{}", last_tool_result(&llm));
    let dirs = memory_dirs(&ws);
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let topic = std::fs::read_to_string(dirs[0].join("terraform-state.md")).unwrap();
    assert!(topic.contains("type: project") && topic.contains("acme-tfstate"), "{topic}");

    // A new session of the same repository, opened in a subdirectory.
    let next = acp.new_session(&ws.path("envs/prod"));
    let (_, response) = acp.prompt(&next, "hi");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let system = system_prompt(&llm.requests()[2].body);
    let memory = &system[system.find("# Memory").expect("a memory section")..];
    assert!(memory.contains(INDEX_LINE), "{memory}");
    assert!(memory.contains("read_memory") && memory.contains("Never save secrets"), "{memory}");

    // And in a one-shot run, a new process in the same repository.
    let llm = FakeLlm::start(vec![text_reply("ok")]);
    let mut command = iac_code(&ws);
    command.fake_llm(&llm);
    let out = command
        .args(["-p", "what do you remember?"])
        .current_dir(ws.path("envs/prod"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(system_prompt(&llm.requests()[0].body).contains(INDEX_LINE));
    // Another project has a memory of its own: none yet.
    let other = Workspace::new("memory-other");
    let llm = FakeLlm::start(vec![text_reply("ok")]);
    let (mut acp, session) = AcpProcess::session_in_mode(&other, &llm, "default");
    acp.prompt(&session, "hi");
    assert!(!system_prompt(&llm.requests()[0].body).contains("# Memory"));
}

#[test]
fn a_secret_is_refused_and_nothing_is_written() {
    let ws = repository("memory-secret");
    let key = "AKIAZ7QW4N2KX5RT3HVB";
    let content = format!("Deploy with aws_access_key_id = {key}");
    let llm = FakeLlm::start(vec![remember("m1", "deploy", &content), text_reply("understood")]);
    let (mut acp, session) = session(&ws, &llm, "bypass_permissions");
    let (msgs, response) = acp.prompt(&session, "remember the deploy key");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(asked(&msgs).is_empty(), "refused before anything is asked");
    let result = last_tool_result(&llm);
    assert!(result.contains("Refused") && result.contains("AWS access key id"), "{result}");
    assert!(!result.contains(key), "the reason never repeats the secret: {result}");
    let done = updates_of(&msgs, "tool_call_update");
    assert_eq!(done.last().unwrap()["status"], "failed");
    assert!(memory_dirs(&ws).is_empty(), "nothing on disk");
}

#[test]
fn write_memory_asks_like_an_edit() {
    let ws = repository("memory-asks");
    let script =
        vec![state(), text_reply("no"), state(), text_reply("ok"), state(), text_reply("x")];
    let llm = FakeLlm::start(script);
    let (mut acp, session) = session(&ws, &llm, "default");
    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&session, "remember");
    let questions = asked(&msgs);
    assert_eq!(questions.len(), 1, "asked in default mode");
    let call = &questions[0]["params"]["toolCall"];
    assert_eq!(call["kind"], "edit");
    assert_eq!(call["title"], "Remember terraform-state (project)");
    assert_eq!(last_tool_result(&llm), "Permission denied.");
    assert!(memory_dirs(&ws).is_empty(), "a rejected write writes nothing");

    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "accept_edits"}));
    let (msgs, _) = acp.prompt(&session, "remember");
    assert!(asked(&msgs).is_empty(), "accept_edits allows it");
    assert_eq!(memory_dirs(&ws).len(), 1);
    let done = updates_of(&msgs, "tool_call_update");
    let diff = done
        .iter()
        .flat_map(|u| u["content"].as_array().into_iter().flatten())
        .find(|c| c["type"] == "diff");
    let diff = diff.expect("a diff for the client");
    assert!(diff["path"].as_str().unwrap().ends_with("terraform-state.md"), "{diff}");
    assert!(diff["newText"].as_str().unwrap().contains("acme-tfstate"), "{diff}");

    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "plan"}));
    acp.prompt(&session, "remember");
    assert!(last_tool_result(&llm).contains("Plan mode is read-only"));
}

#[test]
fn read_memory_returns_the_index_and_a_topic_without_asking() {
    let ws = repository("memory-read");
    let llm = FakeLlm::start(vec![
        tool_reply("r0", "read_memory", json!({})),
        state(),
        tool_reply("r1", "read_memory", json!({})),
        tool_reply("r2", "read_memory", json!({"name": "terraform-state"})),
        tool_reply("r3", "read_memory", json!({"name": "../../session-key"})),
        text_reply("done"),
    ]);
    let (mut acp, session) = session(&ws, &llm, "default");
    acp.set_permission(Permission::AllowOnce);
    let (msgs, _) = acp.prompt(&session, "what do you remember?");
    assert_eq!(asked(&msgs).len(), 1, "only the write asks");
    let results: Vec<String> = llm.requests()[1..]
        .iter()
        .map(|r| {
            let messages = r.body["messages"].as_array().unwrap();
            let tool = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
            tool["content"].as_str().unwrap().to_string()
        })
        .collect();
    assert!(results[0].contains("Nothing is remembered"), "{}", results[0]);
    assert!(
        results[2].starts_with("# Memory") && results[2].contains(INDEX_LINE),
        "{}",
        results[2]
    );
    assert!(results[3].contains("name: terraform-state") && results[3].contains("tf-locks"));
    assert!(results[4].contains("invalid memory name"), "{}", results[4]);
}

#[test]
fn slash_memory_shows_the_index_and_where_it_lives() {
    let ws = repository("memory-slash");
    let llm = FakeLlm::start(vec![state(), text_reply("saved")]);
    let (mut acp, session) = session(&ws, &llm, "accept_edits");
    let (msgs, _) = acp.prompt(&session, "/memory");
    let text = agent_text(&msgs);
    assert!(text.contains("Nothing is remembered"), "{text}");
    let config = ws.config().join("memory").display().to_string();
    assert!(text.contains(&config), "names the directory: {text}");
    acp.prompt(&session, "remember");
    let (msgs, _) = acp.prompt(&session, "/memory");
    let text = agent_text(&msgs);
    assert!(text.contains(INDEX_LINE) && text.contains(&config), "{text}");
    assert_eq!(llm.requests().len(), 2, "/memory asks no LLM");
    let (msgs, _) = acp.prompt(&session, "/help");
    assert!(agent_text(&msgs).contains("/memory"));
}
