//! The stable features of ACP schema 1.21 we advertise: `messageId` on every message chunk
//! (the same ids again on load), `additionalDirectories`, the boolean config option, the
//! slash commands after the response that opens a session, and `_`-prefixed methods.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, Permission, updates};
use crate::support::fake_llm::{Event, FakeLlm, Reply, text_reply};
use crate::support::http_client::HttpServer;
use crate::support::workspace::Workspace;

fn server(ws: &Workspace, script: Vec<Reply>) -> (FakeLlm, AcpProcess) {
    let llm = FakeLlm::start(script);
    let mut acp = AcpProcess::spawn_with_llm(ws, &llm, &[]);
    acp.set_permission(Permission::AllowOnce);
    acp.initialize();
    (llm, acp)
}

/// (kind, messageId) of every message chunk in `msgs`.
fn chunk_ids(msgs: &[Value]) -> Vec<(String, String)> {
    updates(msgs)
        .iter()
        .filter(|u| u["sessionUpdate"].as_str().is_some_and(|k| k.ends_with("_chunk")))
        .map(|u| {
            let id = u["messageId"].as_str();
            let id = id.unwrap_or_else(|| panic!("a chunk without a messageId: {u}"));
            (u["sessionUpdate"].as_str().unwrap_or("").to_string(), id.to_string())
        })
        .collect()
}

fn is_uuid(id: &str) -> bool {
    let parts: Vec<&str> = id.split('-').collect();
    parts.iter().map(|p| p.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        && parts.iter().all(|p| p.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[test]
fn every_chunk_names_its_message_and_load_replays_the_same_ids() {
    let ws = Workspace::new("acp-message-ids");
    let first = Reply::Stream(vec![
        Event::Reasoning("Think".into()),
        Event::Reasoning("ing.".into()),
        Event::Text("Writing ".into()),
        Event::Text("it.".into()),
        Event::ToolCall {
            index: 0,
            id: "w1".into(),
            name: "write_file".into(),
            args: json!({"path": "main.tf", "content": "terraform {}\n"}),
        },
        Event::Finish("tool_calls"),
        Event::Done,
    ]);
    let (_llm, mut acp) = server(&ws, vec![first, text_reply("Done: main.tf written.")]);
    let id = acp.new_session(&ws.project());
    let (live, response) = acp.prompt(&id, "Create main.tf");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let live = chunk_ids(&live);
    // Two messages: the first's reasoning and text share one id, the answer has another.
    let mut messages: Vec<&str> = live.iter().map(|(_, m)| m.as_str()).collect();
    messages.dedup();
    assert_eq!(messages.len(), 2, "{live:?}");
    assert!(messages.iter().all(|m| is_uuid(m)), "{messages:?}");
    assert_ne!(messages[0], messages[1]);
    assert!(live.iter().any(|(k, _)| k == "agent_thought_chunk"), "{live:?}");
    assert!(live.len() > 4, "several chunks per message: {live:?}");
    acp.close_stdin();
    assert!(acp.wait_exit(Duration::from_secs(10)).is_some_and(|s| s.success()));

    let replays: Vec<Vec<(String, String)>> = (0..2)
        .map(|_| {
            let (_llm, mut acp) = server(&ws, Vec::new());
            let (replay, response) = acp.open_session("session/load", &id, &ws.project());
            assert!(response["result"].is_object(), "{response}");
            chunk_ids(&replay)
        })
        .collect();
    assert_eq!(replays[0], replays[1], "every load gives the same ids");
    let replay = &replays[0];
    assert_eq!(replay[0].0, "user_message_chunk");
    assert!(is_uuid(&replay[0].1));
    let agent: Vec<&str> =
        replay.iter().filter(|(k, _)| k != "user_message_chunk").map(|(_, m)| m.as_str()).collect();
    let mut replayed = agent.clone();
    replayed.dedup();
    assert_eq!(replayed, messages, "the ids streamed live come back on load");
}

#[test]
fn an_old_journal_without_ids_gets_the_same_ids_on_every_load() {
    let ws = Workspace::new("acp-message-ids-old");
    let id = "6f1f7ef4-3b8e-4f43-9d51-1b0f2a4c5d60";
    let dir = ws.config().join("sessions").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let cwd = ws.project();
    let cwd = cwd.to_str().unwrap();
    let lines = [
        json!({"v": 1, "ts": "2026-01-01T00:00:00Z", "type": "start", "cwd": cwd,
               "createdAt": "2026-01-01T00:00:00Z"}),
        json!({"v": 1, "ts": "2026-01-01T00:00:01Z", "type": "user", "text": "hi"}),
        json!({"v": 1, "ts": "2026-01-01T00:00:02Z", "type": "assistant", "text": "hello"}),
    ];
    let journal: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("journal.jsonl"), journal).unwrap();
    let mut seen = Vec::new();
    for _ in 0..2 {
        let (_llm, mut acp) = server(&ws, Vec::new());
        let (replay, response) = acp.open_session("session/load", id, &ws.project());
        assert!(response["result"].is_object(), "{response}");
        seen.push(chunk_ids(&replay));
    }
    assert_eq!(seen[0].len(), 2, "{:?}", seen[0]);
    assert_ne!(seen[0][0].1, seen[0][1].1, "one id per message");
    assert_eq!(seen[0], seen[1]);
}

#[test]
fn the_commands_follow_the_response_that_opens_a_session_over_stdio() {
    let ws = Workspace::new("acp-commands-order");
    let (_llm, mut acp) = server(&ws, vec![text_reply("ok")]);
    for attempt in 0..2 {
        let request = if attempt == 0 {
            acp.request("session/new", json!({"cwd": ws.project(), "mcpServers": []}))
        } else {
            let id = acp.new_session(&ws.project());
            acp.prompt(&id, "hi");
            acp.request("session/load", json!({"sessionId": id, "cwd": ws.project(),
                                               "mcpServers": []}))
        };
        let (before, response) = acp.until_response(&request);
        assert!(response["result"].is_object(), "{response}");
        assert!(
            updates(&before).iter().all(|u| u["sessionUpdate"] != "available_commands_update"),
            "no commands before the response: {before:?}"
        );
        let next = acp.recv();
        assert_eq!(next["params"]["update"]["sessionUpdate"], "available_commands_update");
    }
}

#[test]
fn the_commands_follow_the_response_that_opens_a_session_over_http() {
    let ws = Workspace::new("acp-commands-order-http");
    let server = HttpServer::spawn(&ws, None, &[], &[]);
    let conn = server.initialize();
    let sse = server.stream(&conn, None, None);
    let new = json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                     "params": {"cwd": ws.project(), "mcpServers": []}});
    assert_eq!(server.post(Some(&conn), &new).status, 202);
    let events = sse.until(|e| e.data["params"]["update"]["sessionUpdate"] == "available_commands_update");
    let response = events.iter().position(|e| e.data.get("id") == Some(&json!(2)));
    assert_eq!(response, Some(events.len() - 2), "the response, then the commands: {events:?}");
    let session = events[events.len() - 2].data["result"]["sessionId"].as_str().unwrap().to_string();

    let load = json!({"jsonrpc": "2.0", "id": 3, "method": "session/load",
                      "params": {"sessionId": session, "cwd": ws.project(), "mcpServers": []}});
    assert_eq!(server.post(Some(&conn), &load).status, 202);
    let events = sse.until(|e| e.data["params"]["update"]["sessionUpdate"] == "available_commands_update");
    let response = events.iter().position(|e| e.data.get("id") == Some(&json!(3)));
    assert_eq!(response, Some(events.len() - 2), "{events:?}");
}

#[test]
fn unknown_extension_requests_are_method_not_found_and_notifications_are_ignored() {
    let ws = Workspace::new("acp-extensions");
    let (_llm, mut acp) = server(&ws, Vec::new());
    let response = acp.call("_iac/unknown", json!({"x": 1}));
    assert_eq!(response["error"]["code"], -32601, "{response}");
    acp.notify("_iac/unknown", json!({"x": 1}));
    acp.notify("_zed/whatever", json!({}));
    // The next message is the answer to the next request: nothing answered the notifications.
    let id = acp.request("session/list", json!({}));
    let next = acp.recv();
    assert_eq!(next["id"], id, "{next}");
    assert!(next["result"]["sessions"].is_array(), "{next}");
}
