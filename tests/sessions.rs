//! Durable sessions: round trips across processes, replay before the load response, resume,
//! fork, delete, list, repair of torn journals and interrupted tool calls, hostile ids, two
//! processes fighting over one session, and a SIGKILL crash test.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, Permission, updates, updates_of};
use crate::support::command::on_file_store;
use crate::support::fake_llm::{Event, FakeLlm, Reply, text_reply, tool_reply, tool_reply_after};
use crate::support::workspace::Workspace;

/// A server on `ws` talking to a fresh fake LLM with `script`, every permission allowed
/// once, initialized.
pub fn server(ws: &Workspace, script: Vec<Reply>) -> (FakeLlm, AcpProcess) {
    let llm = FakeLlm::start(script);
    let mut acp = AcpProcess::spawn_with_llm(ws, &llm, &[]);
    acp.set_permission(Permission::AllowOnce);
    acp.initialize();
    (llm, acp)
}

fn session_dir(ws: &Workspace, id: &str) -> PathBuf {
    ws.config().join("sessions").join(id)
}

fn error_code(response: &Value) -> i64 {
    response["error"]["code"].as_i64().unwrap_or_else(|| panic!("expected an error: {response}"))
}

/// The roles and tool-call pairing of what the model was sent in `request`.
fn roles(llm: &FakeLlm, request: usize) -> Vec<String> {
    let body = &llm.requests()[request].body;
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_string())
        .collect()
}

/// A turn with a thought, a tool call and an answer.
fn thoughtful_turn() -> Vec<Reply> {
    vec![
        tool_reply_after(
            vec![Event::Reasoning("Need the file.".into()), Event::Text("Writing it.".into())],
            "w1",
            "write_file",
            json!({"path": "main.tf", "content": "terraform {}\n"}),
        ),
        text_reply("Done: main.tf written."),
    ]
}

#[test]
fn a_session_survives_its_process_with_replay_before_the_load_response() {
    let ws = Workspace::new("sessions-roundtrip");
    let (_llm, mut acp) = server(&ws, thoughtful_turn());
    let id = acp.new_session(&ws.project());
    let (_, response) = acp.prompt(&id, "Create main.tf\nwith a terraform block");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    acp.call("session/set_mode", json!({"sessionId": id, "modeId": "plan"}));
    acp.close_stdin();
    assert!(acp.wait_exit(std::time::Duration::from_secs(10)).unwrap().success());

    let (llm, mut acp) = server(&ws, vec![text_reply("Still here.")]);
    let list = acp.call("session/list", json!({"cwd": ws.project()}));
    let entry = &list["result"]["sessions"][0];
    assert_eq!(entry["sessionId"], id.as_str());
    assert_eq!(entry["title"], "Create main.tf");
    assert_eq!(entry["_meta"]["messageCount"], 4);

    let (replay, response) = acp.open_session("session/load", &id, &ws.project());
    assert!(response["result"].is_object(), "{response}");
    assert!(response["result"].get("sessionId").is_none());
    assert_eq!(response["result"]["modes"]["currentModeId"], "plan", "the mode was restored");
    let kinds: Vec<String> =
        updates(&replay).iter().map(|u| u["sessionUpdate"].as_str().unwrap().to_string()).collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "agent_thought_chunk",
            "agent_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk"
        ]
    );
    let call = updates_of(&replay, "tool_call")[0];
    assert_eq!(call["title"], "Write main.tf");
    assert_eq!(call["kind"], "edit");
    let done = updates_of(&replay, "tool_call_update")[0];
    assert_eq!(done["toolCallId"], call["toolCallId"]);
    assert_eq!(done["status"], "completed");
    assert_eq!(updates(&replay)[0]["content"]["text"], "Create main.tf\nwith a terraform block");

    // The model gets the whole context back.
    acp.call("session/set_mode", json!({"sessionId": id, "modeId": "default"}));
    let (_, response) = acp.prompt(&id, "anything else?");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(roles(&llm, 0), ["system", "user", "assistant", "tool", "assistant", "user"]);
    let updated = acp.call("session/list", json!({}));
    assert!(updated["result"]["sessions"][0]["updatedAt"].as_str() >= entry["updatedAt"].as_str());
}

#[test]
fn resume_restores_without_replay_and_fork_copies_everything() {
    let ws = Workspace::new("sessions-resume-fork");
    let (_llm, mut acp) = server(&ws, thoughtful_turn());
    let id = acp.new_session(&ws.project());
    acp.prompt(&id, "Create main.tf");

    // Fork while the source is open here; the copy holds the whole history.
    let (before, forked) = acp.open_session("session/fork", &id, &ws.project());
    assert!(before.is_empty(), "fork does not replay");
    let fork = forked["result"]["sessionId"].as_str().unwrap().to_string();
    assert_ne!(fork, id);
    if on_file_store() {
        let meta: Value = serde_json::from_slice(
            &std::fs::read(session_dir(&ws, &fork).join("meta.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(meta["forkedFrom"], id.as_str());
    }
    drop(acp);

    let (llm, mut acp) = server(&ws, vec![text_reply("resumed"), text_reply("forked")]);
    let (before, response) = acp.open_session("session/resume", &id, &ws.project());
    assert!(before.is_empty(), "resume must not replay: {before:?}");
    assert!(response["result"].is_object());
    acp.prompt(&id, "go on");
    assert_eq!(roles(&llm, 0), ["system", "user", "assistant", "tool", "assistant", "user"]);

    let (replay, _) = acp.open_session("session/load", &fork, &ws.project());
    assert_eq!(updates_of(&replay, "tool_call").len(), 1, "the fork kept the history on disk");
    acp.prompt(&fork, "and the fork?");
    assert_eq!(roles(&llm, 1), ["system", "user", "assistant", "tool", "assistant", "user"]);
}

#[test]
fn delete_removes_the_files_and_unknown_ids_are_fine() {
    if !on_file_store() {
        return;
    }
    let ws = Workspace::new("sessions-delete");
    let (_llm, mut acp) = server(&ws, vec![]);
    let id = acp.new_session(&ws.project());
    assert!(session_dir(&ws, &id).exists());
    assert_eq!(acp.call("session/delete", json!({"sessionId": id}))["result"], json!({}));
    assert!(!session_dir(&ws, &id).exists());
    assert_eq!(acp.call("session/list", json!({}))["result"]["sessions"], json!([]));
    let (_, response) = acp.open_session("session/load", &id, &ws.project());
    assert_eq!(error_code(&response), -32602);
    let unknown = uuid_like(7);
    assert_eq!(acp.call("session/delete", json!({"sessionId": unknown}))["result"], json!({}));
}

#[test]
fn hostile_ids_never_reach_a_path() {
    let ws = Workspace::new("sessions-hostile");
    let (_llm, mut acp) = server(&ws, vec![]);
    let long = "a".repeat(10_240);
    for id in ["../../etc", "", long.as_str(), "..", "/tmp/x", "0b0c8f4e3f0a4c1e9d3a2b6f1e4d5c7a"] {
        for method in ["session/load", "session/resume", "session/fork"] {
            let (_, response) = acp.open_session(method, id, &ws.project());
            assert_eq!(error_code(&response), -32602, "{method} {id:.20}");
        }
        let response = acp.call("session/delete", json!({"sessionId": id}));
        assert_eq!(error_code(&response), -32602, "delete {id:.20}");
    }
    let entries: Vec<_> = std::fs::read_dir(ws.config())
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(entries.iter().all(|e| e == "sessions"), "{entries:?}");
}

#[test]
fn two_processes_never_drive_one_session() {
    let ws = Workspace::new("sessions-lock");
    let (_llm, mut first) = server(&ws, vec![Reply::Hang(vec![Event::Text("thinking".into())])]);
    let id = first.new_session(&ws.project());
    let (_llm2, mut second) = server(&ws, vec![]);
    let (_, response) = second.open_session("session/load", &id, &ws.project());
    assert_eq!(error_code(&response), -32001, "{response}");
    let message = response["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("in use by another iac-code process")
            || message.contains("in use by node"),
        "{message}"
    );
    let response = second.call("session/delete", json!({"sessionId": id}));
    assert_eq!(error_code(&response), -32001, "a held session cannot be deleted");
    // Close while a prompt runs: the prompt answers `cancelled` first, then the close, and
    // the lock is free at once.
    let prompt = first.request(
        "session/prompt",
        json!({"sessionId": id, "prompt": [{"type": "text", "text": "go"}]}),
    );
    assert_eq!(first.recv()["params"]["update"]["sessionUpdate"], "session_info_update");
    assert_eq!(first.recv()["params"]["update"]["sessionUpdate"], "agent_message_chunk");
    let close = first.request("session/close", json!({"sessionId": id}));
    let (_, cancelled) = first.until_response(&prompt);
    assert_eq!(cancelled["result"]["stopReason"], "cancelled");
    let (_, closed) = first.until_response(&close);
    assert_eq!(closed["result"], json!({}));
    let upper = id.to_uppercase();
    let (_, response) = second.open_session("session/load", &upper, &ws.project());
    assert!(response["result"].is_object(), "{response}");
    second.call("session/set_mode", json!({"sessionId": upper, "modeId": "plan"}));
    let listed = second.call("session/list", json!({}));
    assert_eq!(listed["result"]["sessions"][0]["sessionId"], id.as_str());
}

#[test]
fn a_lost_meta_file_is_rebuilt_from_the_journal() {
    if !on_file_store() {
        return;
    }
    let ws = Workspace::new("sessions-lost-meta");
    let (_llm, mut acp) = server(&ws, vec![text_reply("hello")]);
    let id = acp.new_session(&ws.project());
    acp.prompt(&id, "Plan the network");
    drop(acp);
    std::fs::write(session_dir(&ws, &id).join("meta.json"), "").unwrap();
    let (llm, mut acp) = server(&ws, vec![text_reply("again")]);
    let list = acp.call("session/list", json!({}));
    let entry = &list["result"]["sessions"][0];
    assert_eq!(entry["sessionId"], id.as_str());
    assert_eq!(entry["cwd"], ws.project().display().to_string());
    assert_eq!(entry["title"], "Plan the network");
    let (replay, response) = acp.open_session("session/load", &id, &ws.project());
    assert!(response["result"].is_object(), "{response}");
    assert_eq!(updates_of(&replay, "agent_message_chunk").len(), 1);
    acp.prompt(&id, "more");
    assert_eq!(roles(&llm, 0), ["system", "user", "assistant", "user"]);
}

/// A UUID-shaped id from a number (stable, valid).
fn uuid_like(n: u64) -> String {
    format!("00000000-0000-4000-8000-{n:012x}")
}

/// Writes a session straight to disk in the documented format.
fn write_session(ws: &Workspace, id: &str, cwd: &str, updated: &str, journal: &str) {
    let dir = session_dir(ws, id);
    std::fs::create_dir_all(&dir).unwrap();
    let meta = json!({"v": 1, "sessionId": id, "cwd": cwd, "title": format!("t {id}"),
        "createdAt": updated, "updatedAt": updated, "messages": 0});
    std::fs::write(dir.join("meta.json"), meta.to_string()).unwrap();
    std::fs::write(dir.join("journal.jsonl"), journal).unwrap();
}

#[test]
fn torn_and_garbage_lines_are_survived_and_interrupted_calls_repaired_once() {
    if !on_file_store() {
        return;
    }
    let ws = Workspace::new("sessions-repair");
    let id = uuid_like(1);
    let cwd = ws.project().display().to_string();
    let journal = concat!(
        r#"{"v":1,"ts":"t","type":"user","text":"plan the vpc"}"#,
        "\n",
        "this line is garbage\n",
        r#"{"v":99,"ts":"t","type":"from_the_future"}"#,
        "\n",
        r#"{"v":1,"ts":"t","type":"assistant","text":"running","toolCalls":[{"id":"b1","name":"bash","arguments":"{\"command\":\"terraform plan\"}"}]}"#,
        "\n",
        r#"{"v":1,"ts":"t","type":"tool_res"#
    );
    write_session(&ws, &id, &cwd, "2026-01-01T00:00:00Z", journal);
    let (llm, mut acp) = server(&ws, vec![text_reply("ok")]);
    let (replay, response) = acp.open_session("session/load", &id, &ws.project());
    assert!(response["result"].is_object(), "{response}");
    let done = updates_of(&replay, "tool_call_update");
    assert_eq!(done.len(), 1);
    assert_eq!(done[0]["status"], "failed");
    assert!(done[0]["content"][0]["content"]["text"].as_str().unwrap().contains("interrupted"));
    let text = std::fs::read_to_string(session_dir(&ws, &id).join("journal.jsonl")).unwrap();
    assert!(text.ends_with('\n'), "the torn line was cut");
    for line in text.lines().filter(|l| *l != "this line is garbage") {
        assert!(serde_json::from_str::<Value>(line).is_ok(), "torn line left behind: {line}");
    }
    assert_eq!(text.matches("interrupted").count(), 1);
    acp.prompt(&id, "continue");
    assert_eq!(roles(&llm, 0), ["system", "user", "assistant", "tool", "user"]);
    drop(acp);
    let (_llm, mut acp) = server(&ws, vec![]);
    acp.open_session("session/load", &id, &ws.project());
    let text = std::fs::read_to_string(session_dir(&ws, &id).join("journal.jsonl")).unwrap();
    assert_eq!(text.matches("interrupted").count(), 1, "the repair happened once");
}

#[test]
fn list_pages_through_a_thousand_sessions_newest_first() {
    if !on_file_store() {
        return;
    }
    let ws = Workspace::new("sessions-list");
    let here = ws.project().display().to_string();
    for n in 0..1000u64 {
        let cwd = if n % 4 == 0 { "/somewhere/else".to_string() } else { here.clone() };
        let updated = format!("2026-01-01T00:{:02}:{:02}Z", n / 60 % 60, n % 60);
        write_session(&ws, &uuid_like(n), &cwd, &updated, "");
    }
    std::fs::create_dir_all(ws.config().join("sessions/not-a-session")).unwrap();
    let (_llm, mut acp) = server(&ws, vec![]);
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cwd": here, "cursor": c}),
            None => json!({"cwd": here}),
        };
        let page = acp.call("session/list", params);
        for s in page["result"]["sessions"].as_array().unwrap() {
            seen.push(s["updatedAt"].as_str().unwrap().to_string());
        }
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(seen.len(), 750);
    assert!(seen.windows(2).all(|w| w[0] >= w[1]), "newest first");
}

#[test]
fn slash_commands_rename_clear_compact_and_help() {
    let ws = Workspace::new("sessions-commands");
    let (llm, mut acp) = server(
        &ws,
        vec![
            text_reply("first answer"),
            text_reply("second answer"),
            text_reply("SUMMARY: user asked twice"),
            text_reply("after compact"),
            text_reply("after clear"),
        ],
    );
    let id = acp.new_session(&ws.project());
    acp.prompt(&id, "first");
    acp.prompt(&id, "second");
    let (msgs, response) = acp.prompt(&id, "/help");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(updates(&msgs)[0]["content"]["text"].as_str().unwrap().contains("/rename <new title>"));
    acp.prompt(&id, "/rename Prod VPC");
    let list = acp.call("session/list", json!({}));
    assert_eq!(list["result"]["sessions"][0]["title"], "Prod VPC");
    let (msgs, _) = acp.prompt(&id, "/compact");
    let notice = updates(&msgs)[0]["content"]["text"].as_str().unwrap().to_string();
    assert!(notice.starts_with("[Context compacted: "), "{notice}");
    let summary_request = &llm.requests()[2].body;
    assert!(summary_request["messages"][0]["content"].as_str().unwrap().starts_with("You compact"));
    assert!(notice.contains(" saved]"), "says what it saved: {notice}");
    acp.prompt(&id, "third");
    let messages = llm.requests()[3].body["messages"].clone();
    let before = &llm.requests()[1].body;
    assert_eq!(messages[0], before["messages"][0], "the system prompt survives a compaction");
    assert_eq!(llm.requests()[3].body["tools"], before["tools"], "and so do the tools");
    assert!(
        messages[1]["content"].as_str().unwrap().contains("SUMMARY: user asked twice"),
        "{messages}"
    );
    acp.prompt(&id, "/clear");
    acp.prompt(&id, "fourth");
    assert_eq!(roles(&llm, 4), ["system", "user"], "after /clear the model starts afresh");
    assert_eq!(llm.requests().len(), 5, "/help, /rename and /clear made no LLM request");
    drop(acp);
    // The journal rebuilds the same context in a new process.
    let (llm, mut acp) = server(&ws, vec![text_reply("fifth answer")]);
    let (replay, _) = acp.open_session("session/load", &id, &ws.project());
    assert_eq!(updates_of(&replay, "user_message_chunk").len(), 4, "the replay keeps every prompt");
    acp.prompt(&id, "fifth");
    assert_eq!(roles(&llm, 0), ["system", "user", "assistant", "user"]);
    let list = acp.call("session/list", json!({}));
    assert_eq!(list["result"]["sessions"][0]["title"], "Prod VPC");
}

#[test]
fn a_long_conversation_is_compacted_automatically() {
    let ws = Workspace::new("sessions-autocompact");
    ws.write("big.txt", &"terraform state line\n".repeat(400));
    let llm = FakeLlm::start(vec![
        tool_reply("r1", "read_file", json!({"path": "big.txt"})),
        text_reply("SUMMARY: read big.txt"),
        text_reply("done"),
    ]);
    let env = [("IAC_CODE_CONTEXT_WINDOW", "4096"), ("IAC_CODE_COMPACT_THRESHOLD", "50")];
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &env);
    acp.initialize();
    let id = acp.new_session(&ws.project());
    let (msgs, response) = acp.prompt(&id, "read big.txt");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{}", acp.context());
    let text: String = updates_of(&msgs, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert!(text.contains("[Context compacted: "), "{text}");
    let last = &llm.requests()[2].body["messages"];
    assert!(last[1]["content"].as_str().unwrap().contains("SUMMARY: read big.txt"), "{last}");
    // The journal keeps everything: a replay still shows the read.
    drop(acp);
    let (_llm, mut acp) = server(&ws, vec![]);
    let (replay, _) = acp.open_session("session/load", &id, &ws.project());
    assert_eq!(updates_of(&replay, "tool_call").len(), 1);
}

/// xorshift64: a fixed pseudo-random sequence, so a failure can be replayed.
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn sigkill_at_random_moments_never_breaks_a_session() {
    let ws = Workspace::new("sessions-crash");
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let trials = 50;
    // Completed tool calls the client saw, per session: the replay must show at least these.
    let mut seen = std::collections::HashMap::new();
    for trial in 0..trials {
        let mut script: Vec<Reply> = (0..4)
            .map(|i| match i % 2 {
                0 => tool_reply(
                    &format!("w{i}"),
                    "write_file",
                    json!({"path": format!("f{trial}-{i}.tf"), "content": "x\n"}),
                ),
                _ => tool_reply(
                    &format!("b{i}"),
                    "bash",
                    json!({"command": format!("echo step {i}")}),
                ),
            })
            .collect();
        script.push(text_reply("all done"));
        let (_llm, mut acp) = server(&ws, script);
        let id = acp.new_session(&ws.project());
        acp.call("session/set_mode", json!({"sessionId": id, "modeId": "bypass_permissions"}));
        acp.request("session/prompt", json!({"sessionId": id, "prompt": [{"type": "text", "text": format!("trial {trial}")}]}));
        let frames = 1 + next(&mut seed) % 26;
        let mut completed = 0;
        for _ in 0..frames {
            match acp.recv_timeout(std::time::Duration::from_secs(10)) {
                Some(msg) if msg.get("result").is_some() => break,
                Some(msg) => {
                    let update = &msg["params"]["update"];
                    if update["sessionUpdate"] == "tool_call_update"
                        && update["status"] == "completed"
                    {
                        completed += 1;
                    }
                }
                None => break,
            }
        }
        acp.kill();
        seen.insert(id, completed);
    }

    let replies = (0..trials).map(|_| text_reply("fine")).collect();
    let (llm, mut acp) = server(&ws, replies);
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let page = acp.call("session/list", params);
        ids.extend(
            page["result"]["sessions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["sessionId"].as_str().unwrap().to_string()),
        );
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(ids.len(), trials as usize);
    for (n, id) in ids.iter().enumerate() {
        let (replay, response) = acp.open_session("session/load", id, &ws.project());
        assert!(response["result"].is_object(), "{id}: {response}");
        let replayed = updates_of(&replay, "tool_call_update")
            .iter()
            .filter(|u| u["status"] == "completed")
            .count();
        assert!(
            replayed >= seen[id],
            "{id}: the client saw {} completed calls, the replay shows {replayed}",
            seen[id]
        );
        for call in updates_of(&replay, "tool_call") {
            let ended = updates_of(&replay, "tool_call_update").iter().any(|u| {
                u["toolCallId"] == call["toolCallId"]
                    && (u["status"] == "completed" || u["status"] == "failed")
            });
            assert!(ended, "{id}: tool call without a result in the replay");
        }
        let (_, response) = acp.prompt(id, "still fine?");
        assert_eq!(response["result"]["stopReason"], "end_turn", "{id}");
        // Every tool call the model sees has its result.
        let messages = llm.requests()[n].body["messages"].as_array().unwrap().clone();
        for (i, m) in messages.iter().enumerate() {
            for call in m["tool_calls"].as_array().into_iter().flatten() {
                let answered = messages[i + 1..]
                    .iter()
                    .any(|r| r["role"] == "tool" && r["tool_call_id"] == call["id"]);
                assert!(answered, "{id}: unanswered call {call}");
            }
        }
    }
}
