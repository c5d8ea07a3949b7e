//! Streamed conversations against the fake LLM: text, reasoning, tool calls, stop reasons,
//! usage, prompt content, and two sessions at once.

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, agent_text, updates, updates_of};
use crate::support::fake_llm::{Event, FakeLlm, Reply, text_reply, tool_replies, tool_reply};
use crate::support::workspace::Workspace;

fn setup(
    name: &str,
    script: Vec<Reply>,
    extra: &[(&str, &str)],
) -> (Workspace, FakeLlm, AcpProcess, String) {
    let ws = Workspace::new(name);
    let llm = FakeLlm::start(script);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, extra);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    (ws, llm, acp, session)
}

#[test]
fn a_plain_reply_streams_and_reports_usage() {
    let (ws, llm, mut acp, session) =
        setup("plain", vec![text_reply("Terraform is declarative.")], &[]);
    ws.write("AGENTS.md", "Always pin provider versions.");
    let (msgs, response) = acp.prompt(&session, "What is Terraform?");
    assert_eq!(agent_text(&msgs), "Terraform is declarative.");
    assert!(updates_of(&msgs, "agent_message_chunk").len() > 1, "streamed in pieces");
    let result = &response["result"];
    assert_eq!(result["stopReason"], "end_turn");
    let pieces = updates_of(&msgs, "agent_message_chunk").len() as u64;
    assert_eq!(
        result["usage"],
        json!({"inputTokens": 10, "outputTokens": pieces, "totalTokens": 10 + pieces,
            "cachedReadTokens": 0, "cachedWriteTokens": 0})
    );
    let usage = updates_of(&msgs, "usage_update");
    assert_eq!(usage.len(), 1);
    assert_eq!(usage[0]["size"], 128000);
    assert_eq!(usage[0]["used"], 10 + pieces);
    for m in &msgs {
        assert_eq!(m["params"]["sessionId"], session.as_str());
    }
    let request = &llm.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    let body = &request.body;
    assert_eq!(body["model"], "fake-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_tokens"], 8192);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    let system = messages[0]["content"].as_str().unwrap();
    assert!(system.contains(&ws.project().display().to_string()), "cwd in the system prompt");
    assert!(system.contains("Always pin provider versions."), "AGENTS.md in the system prompt");
    assert_eq!(messages[1], json!({"role": "user", "content": "What is Terraform?"}));
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "read_file",
            "list_files",
            "glob",
            "grep",
            "write_file",
            "edit_file",
            "bash",
            "web_fetch",
            "agent",
            "update_plan",
            "read_memory",
            "write_memory",
            "skill",
            "ask_user"
        ],
        "exit_plan_mode is offered in plan mode only"
    );
}

#[test]
fn reasoning_streams_as_thoughts() {
    let reply = Reply::Stream(vec![
        Event::Reasoning("Check the backend first.".into()),
        Event::Text("Use an S3 backend.".into()),
        Event::Finish("stop"),
        Event::Usage { prompt: 5, completion: 7 },
        Event::Done,
    ]);
    let (_ws, _llm, mut acp, session) = setup("thoughts", vec![reply], &[]);
    let (msgs, response) = acp.prompt(&session, "state?");
    let kinds: Vec<String> =
        updates(&msgs).iter().map(|u| u["sessionUpdate"].as_str().unwrap().to_string()).collect();
    assert_eq!(
        kinds,
        [
            "session_info_update",
            "agent_thought_chunk",
            "agent_message_chunk",
            "usage_update",
            "session_info_update"
        ]
    );
    assert_eq!(
        updates(&msgs)[1]["content"],
        json!({"type": "text", "text": "Check the backend first."})
    );
    assert_eq!(response["result"]["usage"]["totalTokens"], 12);
}

#[test]
fn a_read_tool_call_runs_without_asking_and_feeds_the_model() {
    let script = vec![
        tool_reply("call_1", "read_file", json!({"path": "main.tf", "start_line": 2})),
        text_reply("It declares a bucket."),
    ];
    let (ws, llm, mut acp, session) = setup("read", script, &[]);
    ws.write("main.tf", "terraform {}\nresource \"aws_s3_bucket\" \"b\" {}\n");
    let (msgs, response) = acp.prompt(&session, "what is in main.tf?");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(msgs.iter().all(|m| m["method"] != "session/request_permission"));
    let call = updates_of(&msgs, "tool_call")[0].clone();
    let main_tf = ws.project().join("main.tf").display().to_string();
    assert_eq!(call["title"], "Read main.tf");
    assert_eq!(call["kind"], "read");
    assert_eq!(call["status"], "pending");
    assert_eq!(call["rawInput"], json!({"path": "main.tf", "start_line": 2}));
    assert_eq!(call["locations"], json!([{"path": main_tf, "line": 2}]));
    let tool_updates = updates_of(&msgs, "tool_call_update");
    let statuses: Vec<&str> = tool_updates.iter().map(|u| u["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["in_progress", "completed"]);
    let done = tool_updates[1];
    assert_eq!(done["toolCallId"], call["toolCallId"]);
    let shown = done["content"][0]["content"]["text"].as_str().unwrap();
    assert!(shown.contains("     2\tresource \"aws_s3_bucket\""), "{shown}");
    assert!(!shown.contains("terraform {}"), "line window respected: {shown}");
    assert_eq!(done["rawOutput"]["totalLines"], 2);
    // The second request carries the call and its result.
    let second = &llm.requests()[1].body["messages"];
    let n = second.as_array().unwrap().len();
    assert_eq!(second[n - 2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(second[n - 2]["tool_calls"][0]["function"]["name"], "read_file");
    assert_eq!(second[n - 1]["role"], "tool");
    assert_eq!(second[n - 1]["tool_call_id"], "call_1");
    assert!(second[n - 1]["content"].as_str().unwrap().contains("aws_s3_bucket"));
    assert_eq!(response["result"]["usage"]["inputTokens"], 30, "summed over both calls");
}

#[test]
fn tool_errors_go_back_to_the_model_and_the_turn_goes_on() {
    let script = vec![
        tool_replies(&[
            ("c1", "launch_missiles", json!({})),
            ("c2", "read_file", json!("{\"path\": ")),
            ("c3", "read_file", json!({"path": "missing.tf"})),
            ("c4", "read_file", json!({"nopath": 1})),
            ("c5", "list_files", json!({})),
        ]),
        text_reply("Recovered."),
    ];
    let (ws, llm, mut acp, session) = setup("tool-errors", script, &[]);
    ws.write("b.tf", "");
    let (msgs, response) = acp.prompt(&session, "go");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let finals: Vec<Value> = updates_of(&msgs, "tool_call_update")
        .into_iter()
        .filter(|u| u["status"] != "in_progress")
        .cloned()
        .collect();
    let statuses: Vec<&str> = finals.iter().map(|u| u["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["failed", "failed", "failed", "failed", "completed"]);
    let body = &llm.requests()[1].body["messages"];
    let results: Vec<&str> = body
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert!(results[0].contains("Unknown tool 'launch_missiles'"), "{}", results[0]);
    assert!(results[1].contains("not valid JSON"), "{}", results[1]);
    assert!(results[2].contains("missing.tf"), "{}", results[2]);
    assert!(results[3].contains("missing field `path`"), "{}", results[3]);
    assert!(results[4].contains("b.tf (0 B)"), "{}", results[4]);
}

#[test]
fn edits_carry_a_diff_and_ambiguous_edits_are_refused() {
    let script = vec![
        tool_reply(
            "e1",
            "edit_file",
            json!({"path": "vars.tf", "old_string": "t2.micro", "new_string": "t3.small"}),
        ),
        tool_reply(
            "e2",
            "edit_file",
            json!({"path": "vars.tf", "old_string": "default", "new_string": "x"}),
        ),
        tool_reply(
            "e3",
            "edit_file",
            json!({"path": "vars.tf", "old_string": "absent", "new_string": "x"}),
        ),
        text_reply("Done."),
    ];
    let (ws, llm, mut acp, session) = setup("edit", script, &[("IAC_CODE_LOG", "info")]);
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "accept_edits"}));
    let before = "variable \"a\" { default = \"t2.micro\" }\nvariable \"b\" { default = 1 }\n";
    ws.write("vars.tf", before);
    let (msgs, _) = acp.prompt(&session, "bump the instance type");
    let after = before.replace("t2.micro", "t3.small");
    assert_eq!(ws.read("vars.tf"), after);
    let done: Vec<&Value> = updates_of(&msgs, "tool_call_update")
        .into_iter()
        .filter(|u| u["status"] != "in_progress")
        .collect();
    assert_eq!(done[0]["status"], "completed");
    let path = ws.project().join("vars.tf").display().to_string();
    assert_eq!(
        done[0]["content"][1],
        json!({"type": "diff", "path": path, "oldText": before, "newText": after})
    );
    assert_eq!(done[1]["status"], "failed");
    assert_eq!(done[2]["status"], "failed");
    let results = contents(&llm, 3, "tool");
    assert!(results[1].contains("matches 2 places"), "{}", results[1]);
    assert!(results[2].contains("was not found"), "{}", results[2]);
}

#[test]
fn stop_reasons_follow_the_model() {
    let length =
        Reply::Stream(vec![Event::Text("cut".into()), Event::Finish("length"), Event::Done]);
    let refusal =
        Reply::Stream(vec![Event::Text("no".into()), Event::Finish("content_filter"), Event::Done]);
    let (_ws, llm, mut acp, session) = setup("stops", vec![length, refusal, text_reply("ok")], &[]);
    assert_eq!(acp.prompt(&session, "a").1["result"]["stopReason"], "max_tokens");
    assert_eq!(acp.prompt(&session, "b").1["result"]["stopReason"], "refusal");
    acp.prompt(&session, "c");
    // ACP: a refused prompt and its reply leave the next context.
    let users = contents(&llm, 2, "user");
    assert_eq!(users, ["a", "c"]);
}

#[test]
fn special_files_are_refused_and_symlinks_are_written_through() {
    let script = vec![
        tool_reply("f1", "read_file", json!({"path": "pipe"})),
        tool_reply("f2", "write_file", json!({"path": "link.tf", "content": "new\n"})),
        text_reply("done"),
    ];
    let (ws, llm, mut acp, session) = setup("special-files", script, &[]);
    let fifo = ws.project().join("pipe");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    ws.write("real.tf", "old\n");
    std::os::unix::fs::symlink(ws.project().join("real.tf"), ws.project().join("link.tf")).unwrap();
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "accept_edits"}));
    let (_, response) = acp.prompt(&session, "go");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let tool_results = contents(&llm, 2, "tool");
    assert!(tool_results[0].contains("not a regular file"), "{}", tool_results[0]);
    assert_eq!(ws.read("real.tf"), "new\n", "written through the link");
    let link = std::fs::symlink_metadata(ws.project().join("link.tf")).unwrap();
    assert!(link.file_type().is_symlink(), "the link itself is kept");
}

#[test]
fn the_turn_request_limit_is_enforced() {
    let script =
        vec![tool_reply("l1", "list_files", json!({})), tool_reply("l2", "list_files", json!({}))];
    let (_ws, llm, mut acp, session) =
        setup("max-turns", script, &[("IAC_CODE_MAX_TURN_REQUESTS", "2")]);
    let (_, response) = acp.prompt(&session, "loop");
    assert_eq!(response["result"]["stopReason"], "max_turn_requests");
    assert_eq!(llm.requests().len(), 2);
    assert_eq!(llm.unexpected_requests(), 0);
}

#[test]
fn usage_is_estimated_and_said_so_when_the_server_reports_none() {
    let reply = Reply::Stream(vec![
        Event::Text("No usage from llama.cpp here.".into()),
        Event::Finish("stop"),
        Event::Done,
    ]);
    let (_ws, _llm, mut acp, session) = setup("estimated", vec![reply], &[]);
    let (msgs, response) = acp.prompt(&session, "hello");
    let usage = &response["result"]["usage"];
    assert!(usage["inputTokens"].as_u64().unwrap() > 100, "system prompt counted: {usage}");
    assert!(usage["outputTokens"].as_u64().unwrap() > 0);
    assert_eq!(response["result"]["_meta"]["iacCode"]["usageEstimated"], true);
    assert_eq!(updates_of(&msgs, "usage_update")[0]["_meta"]["iacCode"]["estimated"], true);
}

#[test]
fn every_kind_of_prompt_content_reaches_the_model() {
    let (_ws, llm, mut acp, session) = setup("content", vec![text_reply("ok")], &[]);
    let prompt = json!([
        {"type": "text", "text": "Review these"},
        {"type": "resource", "resource": {"uri": "file:///p/main.tf", "mimeType": "text/x-terraform", "text": "resource \"x\" {}"}},
        {"type": "resource_link", "uri": "file:///p/vars.tf", "name": "vars.tf"},
        {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
        {"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="},
        {"type": "resource", "resource": {"uri": "file:///p/logo.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="}}
    ]);
    let id = acp_request(&mut acp, &session, prompt);
    let (_, response) = acp.until_response(&id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let user = llm.requests()[0].body["messages"][1]["content"].as_str().unwrap().to_string();
    for want in [
        "Review these",
        "<resource uri='file:///p/main.tf'>\nresource \"x\" {}\n</resource>",
        "<resource_link uri='file:///p/vars.tf' name='vars.tf' />",
        "[image: image/png]",
        "[audio: audio/wav]",
        "[binary resource: file:///p/logo.png (image/png",
    ] {
        assert!(user.contains(want), "{want:?} not in {user}");
    }
}

/// The contents of the messages with `role` in the `n`-th LLM request.
fn contents(llm: &FakeLlm, n: usize, role: &str) -> Vec<String> {
    llm.requests()[n].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == role)
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

fn acp_request(acp: &mut AcpProcess, session: &str, prompt: Value) -> Value {
    acp.request("session/prompt", json!({"sessionId": session, "prompt": prompt}))
}

#[test]
fn two_sessions_prompted_at_once_do_not_cross_talk() {
    let (ws, llm, mut acp, first) =
        setup("two", vec![text_reply("alpha alpha alpha"), text_reply("omega omega omega")], &[]);
    let second = acp.new_session(&ws.project());
    let id1 = acp_request(&mut acp, &first, json!([{"type": "text", "text": "one"}]));
    let id2 = acp_request(&mut acp, &second, json!([{"type": "text", "text": "two"}]));
    let mut text = std::collections::HashMap::<String, String>::new();
    let mut done = 0;
    while done < 2 {
        let msg = acp.recv();
        if msg["id"] == id1 || msg["id"] == id2 {
            assert_eq!(msg["result"]["stopReason"], "end_turn", "{msg}");
            done += 1;
            continue;
        }
        let sid = msg["params"]["sessionId"].as_str().unwrap().to_string();
        if msg["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            text.entry(sid)
                .or_default()
                .push_str(msg["params"]["update"]["content"]["text"].as_str().unwrap());
        }
    }
    let mut got: Vec<String> = vec![text[&first].clone(), text[&second].clone()];
    got.sort();
    assert_eq!(got, ["alpha alpha alpha", "omega omega omega"]);
    // Each session's history holds only its own prompt.
    for request in llm.requests() {
        let users: Vec<&str> = request.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| m["content"].as_str().unwrap())
            .collect();
        assert_eq!(users.len(), 1, "{users:?}");
    }
}

#[test]
fn a_second_prompt_while_one_runs_is_refused() {
    let (_ws, llm, mut acp, session) =
        setup("busy", vec![Reply::Hang(vec![Event::Text("thinking".into())])], &[]);
    let first = acp_request(&mut acp, &session, json!([{"type": "text", "text": "slow"}]));
    llm.wait_for_requests(1, std::time::Duration::from_secs(10));
    let response = acp.call(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "again"}]}),
    );
    assert_eq!(response["error"]["code"], -32602);
    assert!(
        response["error"]["message"].as_str().unwrap().contains("already running"),
        "{response}"
    );
    acp.notify("session/cancel", json!({"sessionId": session}));
    let (_, r) = acp.until_response(&first);
    assert_eq!(r["result"]["stopReason"], "cancelled");
    assert_eq!(llm.requests().len(), 1, "never two loops on one history");
}
