//! The permission gate: allow/reject once and always, cancelled answers, modes, paths
//! outside the project, and a cancel while a question is open.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, Permission, updates_of};
use crate::support::fake_llm::{FakeLlm, Reply, text_reply, tool_reply};
use crate::support::workspace::Workspace;

fn write(id: &str, path: &str) -> Reply {
    tool_reply(id, "write_file", json!({"path": path, "content": "bucket = true\n"}))
}

fn setup(name: &str, script: Vec<Reply>) -> (Workspace, FakeLlm, AcpProcess, String) {
    let ws = Workspace::new(name);
    let llm = FakeLlm::start(script);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    (ws, llm, acp, session)
}

fn permission_requests(msgs: &[Value]) -> Vec<&Value> {
    msgs.iter().filter(|m| m["method"] == "session/request_permission").collect()
}

fn last_tool_result(llm: &FakeLlm) -> String {
    let requests = llm.requests();
    let messages = requests.last().unwrap().body["messages"].as_array().unwrap().clone();
    let tool = messages.iter().rev().find(|m| m["role"] == "tool").expect("a tool result");
    tool["content"].as_str().unwrap().to_string()
}

#[test]
fn allow_once_runs_the_tool_and_asks_again_next_time() {
    let (ws, _llm, mut acp, session) = setup(
        "allow-once",
        vec![write("w1", "a.tf"), text_reply("ok"), write("w2", "b.tf"), text_reply("ok")],
    );
    let (msgs, response) = acp.prompt(&session, "write a");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(ws.exists("a.tf"));
    let asked = permission_requests(&msgs);
    assert_eq!(asked.len(), 1);
    let params = &asked[0]["params"];
    let call = updates_of(&msgs, "tool_call")[0];
    assert_eq!(
        params["toolCall"]["toolCallId"], call["toolCallId"],
        "asks about the announced call"
    );
    assert_eq!(params["toolCall"]["title"], "Write a.tf");
    assert_eq!(params["toolCall"]["kind"], "edit");
    let kinds: Vec<(&str, &str)> = params["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["optionId"].as_str().unwrap(), o["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("allow_once", "allow_once"),
            ("allow_always", "allow_always"),
            ("reject_once", "reject_once"),
            ("reject_always", "reject_always")
        ]
    );
    let (msgs, _) = acp.prompt(&session, "write b");
    assert_eq!(permission_requests(&msgs).len(), 1, "allow_once is not remembered");
    assert!(ws.exists("b.tf"));
}

#[test]
fn reject_and_cancelled_answers_do_not_run_the_tool() {
    for (name, answer) in
        [("reject-once", Permission::RejectOnce), ("cancelled-answer", Permission::Cancelled)]
    {
        let (ws, llm, mut acp, session) =
            setup(name, vec![write("w1", "a.tf"), text_reply("understood")]);
        acp.set_permission(answer);
        let (msgs, response) = acp.prompt(&session, "write a");
        assert_eq!(response["result"]["stopReason"], "end_turn", "{name}");
        assert!(!ws.exists("a.tf"), "{name}: the file must not be written");
        assert_eq!(last_tool_result(&llm), "Permission denied.", "{name}");
        let done = updates_of(&msgs, "tool_call_update");
        assert_eq!(done.last().unwrap()["status"], "failed", "{name}");
        assert!(done.iter().all(|u| u["status"] != "in_progress"), "{name}: never started");
    }
}

#[test]
fn always_answers_are_remembered_per_tool() {
    let script = vec![write("w1", "a.tf"), write("w2", "b.tf"), text_reply("ok")];
    let (ws, _llm, mut acp, session) = setup("allow-always", script);
    acp.set_permission(Permission::AllowAlways);
    let (msgs, _) = acp.prompt(&session, "write both");
    assert_eq!(permission_requests(&msgs).len(), 1, "the second write is not asked");
    assert!(ws.exists("a.tf") && ws.exists("b.tf"));

    let script = vec![write("w1", "a.tf"), write("w2", "b.tf"), text_reply("ok")];
    let (ws, llm, mut acp, session) = setup("reject-always", script);
    acp.set_permission(Permission::RejectAlways);
    let (msgs, _) = acp.prompt(&session, "write both");
    assert_eq!(permission_requests(&msgs).len(), 1);
    assert!(!ws.exists("a.tf") && !ws.exists("b.tf"));
    assert_eq!(last_tool_result(&llm), "Permission denied.");
}

#[test]
fn modes_change_what_is_asked() {
    let script = vec![
        write("w1", "a.tf"),
        text_reply("ok"),
        write("w2", "b.tf"),
        text_reply("ok"),
        write("w3", "c.tf"),
        text_reply("ok"),
    ];
    let (ws, llm, mut acp, session) = setup("modes", script);
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    let (msgs, _) = acp.prompt(&session, "a");
    assert!(permission_requests(&msgs).is_empty() && ws.exists("a.tf"));
    acp.call(
        "session/set_config_option",
        json!({"sessionId": session, "configId": "mode", "value": "accept_edits"}),
    );
    let (msgs, _) = acp.prompt(&session, "b");
    assert!(permission_requests(&msgs).is_empty() && ws.exists("b.tf"));
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "plan"}));
    let (msgs, _) = acp.prompt(&session, "c");
    assert!(permission_requests(&msgs).is_empty());
    assert!(!ws.exists("c.tf"), "plan mode is read-only");
    assert!(last_tool_result(&llm).contains("Plan mode is read-only"));
}

#[test]
fn writing_outside_the_project_never_offers_always() {
    let (ws, _llm, mut acp, session) =
        setup("outside", vec![write("w1", "../outside.tf"), text_reply("ok")]);
    acp.set_permission(Permission::AllowOnce);
    let (msgs, _) = acp.prompt(&session, "write outside");
    let asked = permission_requests(&msgs);
    assert_eq!(asked.len(), 1);
    let kinds: Vec<&str> = asked[0]["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["allow_once", "reject_once"]);
    assert!(ws.root().join("outside.tf").exists());
}

#[test]
fn cancel_while_waiting_for_permission_ends_the_turn_at_once() {
    let (ws, llm, mut acp, session) = setup("cancel-permission", vec![write("w1", "a.tf")]);
    acp.set_permission(Permission::Manual);
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "write"}]}),
    );
    loop {
        let msg = acp.recv();
        if msg["method"] == "session/request_permission" {
            break;
        }
    }
    let started = Instant::now();
    acp.notify("session/cancel", json!({"sessionId": session}));
    let (_, response) = acp.until_response(&id);
    assert_eq!(response["result"]["stopReason"], "cancelled");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!ws.exists("a.tf"));
    assert_eq!(llm.requests().len(), 1);
}
