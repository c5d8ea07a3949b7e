//! What an editor sees beyond the reply: the plan, leaving plan mode, session info and
//! settings changes, `$/cancel_request`, and the interoperability fixes for clients found in
//! the wild.

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, Permission, updates_of};
use crate::support::fake_llm::{Event, FakeLlm, Reply, text_reply, tool_reply};
use crate::support::workspace::Workspace;

fn plan_args() -> Value {
    json!({"entries": [
        {"content": "terraform plan", "priority": "high", "status": "completed"},
        {"content": "review the changes", "status": "in_progress"},
        {"content": "terraform apply", "priority": "low"}
    ]})
}

#[test]
fn the_plan_reaches_the_client_live_and_again_on_load() {
    let ws = Workspace::new("editor-plan");
    let llm = FakeLlm::start(vec![tool_reply("p1", "update_plan", plan_args()), text_reply("ok")]);
    let (mut acp, session) = AcpProcess::session_in_mode(&ws, &llm, "plan");
    let (msgs, response) = acp.prompt(&session, "plan the rollout");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(msgs.iter().all(|m| m["method"] != "session/request_permission"), "never asks");
    let plans = updates_of(&msgs, "plan");
    assert_eq!(plans.len(), 1);
    let entries = plans[0]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3);
    assert_eq!(
        entries[2],
        json!({"content": "terraform apply", "priority": "low", "status": "pending"})
    );
    let call = updates_of(&msgs, "tool_call");
    assert_eq!(call[0]["kind"], "think");
    drop(acp);

    // Another process loads the session: the plan is replayed where it was set.
    let mut again = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    again.initialize();
    let (replayed, _) = again.open_session("session/load", &session, &ws.project());
    let plans = updates_of(&replayed, "plan");
    assert_eq!(plans.len(), 1, "{replayed:?}");
    assert_eq!(plans[0]["entries"].as_array().unwrap().len(), 3);
}

/// A session in plan mode whose model calls exit_plan_mode once.
fn leave_plan(ws: &Workspace, answer: &str) -> (FakeLlm, Vec<Value>, AcpProcess, String) {
    let llm = FakeLlm::start(vec![
        tool_reply("x1", "exit_plan_mode", json!({"plan": "1. plan\n2. apply"})),
        text_reply("ok"),
    ]);
    let (mut acp, session) = AcpProcess::session_in_mode(ws, &llm, "plan");
    acp.set_permission(Permission::Manual);
    let id = acp.start_prompt(&session, "go");
    let mut msgs = Vec::new();
    let response = loop {
        let msg = acp.recv();
        if msg["method"] == "session/request_permission" {
            let ids: Vec<&str> = msg["params"]["options"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["optionId"].as_str().unwrap())
                .collect();
            assert_eq!(ids, ["accept_edits", "default", "plan"]);
            let title = msg["params"]["toolCall"]["title"].as_str().unwrap();
            assert!(title.contains("2. apply"), "the plan is shown: {title}");
            acp.respond(
                msg["id"].clone(),
                json!({"outcome": {"outcome": "selected", "optionId": answer}}),
            );
        } else if msg["id"] == id {
            break msg;
        }
        msgs.push(msg);
    };
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    (llm, msgs, acp, session)
}

#[test]
fn exit_plan_mode_switches_to_the_mode_chosen_and_tells_the_client() {
    for (answer, mode) in [("accept_edits", "accept_edits"), ("default", "default")] {
        let ws = Workspace::new("editor-exit-plan");
        let (llm, msgs, mut acp, session) = leave_plan(&ws, answer);
        let modes = updates_of(&msgs, "current_mode_update");
        assert_eq!(modes.len(), 1, "{answer}");
        assert_eq!(modes[0]["currentModeId"], mode);
        let options = updates_of(&msgs, "config_option_update");
        assert_eq!(options[0]["configOptions"][0]["currentValue"], mode);
        let result = crate::tools::tool_result(&llm, 1);
        assert!(result.contains(&format!("now in {mode} mode")), "{result}");
        // The next request offers no exit_plan_mode: the session left plan mode.
        let tools: Vec<String> = llm.requests()[1].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect();
        assert!(!tools.contains(&"exit_plan_mode".to_string()), "{tools:?}");
        // The mode was journalled: a load restores it.
        drop(acp);
        acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
        acp.initialize();
        let (_, loaded) = acp.open_session("session/load", &session, &ws.project());
        assert_eq!(loaded["result"]["modes"]["currentModeId"], mode);
    }
    let ws = Workspace::new("editor-keep-planning");
    let (llm, msgs, _acp, _) = leave_plan(&ws, "plan");
    assert!(updates_of(&msgs, "current_mode_update").is_empty(), "still planning");
    assert!(crate::tools::tool_result(&llm, 1).contains("keep planning"));
}

#[test]
fn the_title_and_the_last_change_reach_the_client() {
    let ws = Workspace::new("editor-info");
    let llm = FakeLlm::start(vec![text_reply("hi"), text_reply("renamed")]);
    let (mut acp, session) = AcpProcess::session_in_mode(&ws, &llm, "default");
    let (msgs, _) = acp.prompt(&session, "Fix the VPC module\nwith details");
    let info = updates_of(&msgs, "session_info_update");
    assert_eq!(info.len(), 2, "{info:?}");
    assert_eq!(info[0]["title"], "Fix the VPC module");
    assert!(info[1]["updatedAt"].as_str().is_some_and(|t| t.ends_with('Z')));
    assert!(info[1].get("title").is_none(), "only what changed");
    let (msgs, _) = acp.prompt(&session, "/rename Prod network");
    let info = updates_of(&msgs, "session_info_update");
    assert_eq!(info[0]["title"], "Prod network");
}

#[test]
fn cancel_request_stops_a_pending_prompt() {
    let ws = Workspace::new("editor-cancel-request");
    let llm = FakeLlm::start(vec![Reply::Hang(vec![Event::Text("thinking about it".into())])]);
    let (mut acp, session) = AcpProcess::session_in_mode(&ws, &llm, "default");
    let id = acp.start_prompt(&session, "go");
    loop {
        let msg = acp.recv();
        if msg["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            break;
        }
    }
    acp.notify("$/cancel_request", json!({"requestId": 424242}));
    acp.notify("$/cancel_request", json!({"requestId": id}));
    let (_, response) = acp.until_response(&id);
    assert_eq!(response["result"]["stopReason"], "cancelled");
    // A cancelled turn that streamed text reports estimated usage, never real-looking zeros.
    let usage = &response["result"]["usage"];
    assert!(usage["outputTokens"].as_u64().unwrap() > 0, "{response}");
    assert_eq!(response["result"]["_meta"]["iacCode"]["usageEstimated"], true);
    assert!(acp.call("session/list", json!({}))["result"].is_object(), "still serving");
}

#[test]
fn a_string_protocol_version_is_read_as_a_number() {
    let ws = Workspace::new("editor-version");
    let mut acp = AcpProcess::spawn(&ws, &[]);
    for asked in [json!("1"), json!("v2-draft")] {
        let reply = acp.call("initialize", json!({"protocolVersion": asked}));
        assert_eq!(reply["result"]["protocolVersion"], 1, "{reply}");
    }
    // Initialized: later requests work.
    let session = acp.new_session(&ws.project());
    assert!(!session.is_empty());
    let refused = acp.call("initialize", json!({"protocolVersion": {"major": 1}}));
    assert_eq!(refused["error"]["code"], -32602);
}
