//! The stable features of ACP schema 1.21 we advertise: `messageId` on every message chunk
//! (the same ids again on load), `additionalDirectories`, the boolean config option, the
//! slash commands after the response that opens a session, and `_`-prefixed methods.

use std::time::Duration;

use serde_json::{Value, json};

use crate::sessions::server;
use crate::support::acp_client::{AcpProcess, updates};
use crate::support::command::on_file_store;
use crate::support::fake_llm::{Event, FakeLlm, Reply, text_reply, tool_reply_after};
use crate::support::http_client::HttpServer;
use crate::support::workspace::Workspace;

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
    let before = vec![
        Event::Reasoning("Think".into()),
        Event::Reasoning("ing.".into()),
        Event::Text("Writing ".into()),
        Event::Text("it.".into()),
    ];
    let write = json!({"path": "main.tf", "content": "terraform {}\n"});
    let first = tool_reply_after(before, "w1", "write_file", write);
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
    if !on_file_store() {
        return;
    }
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
            acp.request(
                "session/load",
                json!({"sessionId": id, "cwd": ws.project(),
                                               "mcpServers": []}),
            )
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
    let events =
        sse.until(|e| e.data["params"]["update"]["sessionUpdate"] == "available_commands_update");
    let response = events.iter().position(|e| e.data.get("id") == Some(&json!(2)));
    assert_eq!(response, Some(events.len() - 2), "the response, then the commands: {events:?}");
    let session =
        events[events.len() - 2].data["result"]["sessionId"].as_str().unwrap().to_string();

    let load = json!({"jsonrpc": "2.0", "id": 3, "method": "session/load",
                      "params": {"sessionId": session, "cwd": ws.project(), "mcpServers": []}});
    assert_eq!(server.post(Some(&conn), &load).status, 202);
    let events =
        sse.until(|e| e.data["params"]["update"]["sessionUpdate"] == "available_commands_update");
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

fn asked(msgs: &[Value]) -> usize {
    msgs.iter().filter(|m| m["method"] == "session/request_permission").count()
}

fn read(path: &std::path::Path) -> Reply {
    crate::support::fake_llm::tool_reply("r1", "read_file", json!({"path": path}))
}

#[test]
fn an_additional_directory_is_read_unasked_kept_on_load_and_listed() {
    let ws = Workspace::new("acp-extra-dirs");
    let shared = ws.root().join("shared");
    let elsewhere = ws.root().join("elsewhere");
    for (dir, body) in [(&shared, "variable \"region\" {}\n"), (&elsewhere, "other\n")] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("vars.tf"), body).unwrap();
    }
    let shared = shared.canonicalize().unwrap();
    let elsewhere = elsewhere.canonicalize().unwrap();
    std::fs::write(shared.join("AGENTS.md"), "SHARED-AGENTS-MARKER\n").unwrap();
    let script = vec![
        read(&shared.join("vars.tf")),
        text_reply("read"),
        read(&elsewhere.join("vars.tf")),
        text_reply("read too"),
    ];
    let (llm, mut acp) = server(&ws, script);
    let response = acp.call(
        "session/new",
        json!({"cwd": ws.project(), "mcpServers": [], "additionalDirectories": [shared]}),
    );
    let id = response["result"]["sessionId"].as_str().unwrap().to_string();
    acp.expect_commands(&id);
    let (msgs, response) = acp.prompt(&id, "read the shared vars");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(asked(&msgs), 0, "inside an additional directory: no question");
    let system = llm.requests()[0].body["messages"][0]["content"].to_string();
    assert!(system.contains(&format!("- {}", shared.display())), "named to the model: {system}");
    assert!(!system.contains("SHARED-AGENTS-MARKER"), "AGENTS.md is read from the cwd only");
    let tool = &llm.requests()[1].body["messages"];
    assert!(tool.to_string().contains("region"), "the model got the file: {tool}");
    let (msgs, _) = acp.prompt(&id, "read the other one");
    assert_eq!(asked(&msgs), 1, "outside every root: asked");
    acp.close_stdin();
    assert!(acp.wait_exit(Duration::from_secs(10)).is_some_and(|s| s.success()));

    // Opened again without naming them: they are restored, and listed.
    let (_llm, mut acp) = server(&ws, vec![read(&shared.join("vars.tf")), text_reply("again")]);
    let list = acp.call("session/list", json!({}));
    let entry = &list["result"]["sessions"][0];
    assert_eq!(entry["additionalDirectories"], json!([shared]), "{list}");
    let (_, response) = acp.open_session("session/load", &id, &ws.project());
    assert!(response["result"].is_object(), "{response}");
    let (msgs, _) = acp.prompt(&id, "and again");
    assert_eq!(asked(&msgs), 0, "restored on load");
    // An empty list clears them.
    let cleared = acp.call(
        "session/resume",
        json!({"sessionId": id, "cwd": ws.project(), "additionalDirectories": []}),
    );
    assert!(cleared["result"].is_object(), "{cleared}");
    acp.expect_commands(&id);
    let list = acp.call("session/list", json!({}));
    assert!(list["result"]["sessions"][0].get("additionalDirectories").is_none(), "{list}");
}

#[test]
fn bad_additional_directories_are_invalid_params() {
    let ws = Workspace::new("acp-extra-dirs-bad");
    ws.write("file.txt", "x");
    let llm = FakeLlm::start(Vec::new());
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    let init = acp.initialize();
    let caps = &init["agentCapabilities"]["sessionCapabilities"];
    assert_eq!(caps["additionalDirectories"], json!({}), "advertised: {init}");
    let id = acp.new_session(&ws.project());
    let file = ws.project().join("file.txt");
    for bad in
        [json!(["relative/dir"]), json!(["/definitely/not/here"]), json!([file]), json!(["/"])]
    {
        let new = acp.call(
            "session/new",
            json!({"cwd": ws.project(), "mcpServers": [], "additionalDirectories": bad}),
        );
        assert_eq!(new["error"]["code"], -32602, "{bad}: {new}");
        assert!(new["error"]["message"].as_str().unwrap().contains("additionalDirectories"));
        let load = acp.call(
            "session/load",
            json!({"sessionId": id, "cwd": ws.project(), "mcpServers": [],
                   "additionalDirectories": bad}),
        );
        assert_eq!(load["error"]["code"], -32602, "{bad}: {load}");
    }
}

/// The options of a `session/new` response, by id.
fn option<'a>(response: &'a Value, id: &str) -> Option<&'a Value> {
    response["result"]["configOptions"].as_array()?.iter().find(|o| o["id"] == id)
}

#[test]
fn thinking_is_a_boolean_for_clients_that_take_them_and_a_select_otherwise() {
    let ws = Workspace::new("acp-boolean-option");
    let llm = FakeLlm::start(vec![text_reply("one"), text_reply("two")]);
    let env = [("IAC_CODE_REASONING_EFFORT", "low")];
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &env);
    acp.initialize_with(json!({"session": {"configOptions": {"boolean": {}}}}));
    let new = acp.call("session/new", json!({"cwd": ws.project(), "mcpServers": []}));
    let id = new["result"]["sessionId"].as_str().unwrap().to_string();
    acp.expect_commands(&id);
    let thinking = option(&new, "thinking").unwrap_or_else(|| panic!("no thinking: {new}"));
    assert_eq!((&thinking["type"], &thinking["currentValue"]), (&json!("boolean"), &json!(true)));
    acp.prompt(&id, "first");
    let set = acp.call(
        "session/set_config_option",
        json!({"sessionId": id, "configId": "thinking", "type": "boolean", "value": false}),
    );
    assert_eq!(option(&set, "thinking").unwrap()["currentValue"], false, "{set}");
    acp.prompt(&id, "second");
    let bodies = llm.bodies();
    assert_eq!(bodies[0]["reasoning_effort"], "low");
    assert!(bodies[1].get("reasoning_effort").is_none(), "off: {}", bodies[1]);

    // A client that does not take booleans gets an on/off select, set either way.
    let mut plain = AcpProcess::spawn_with_llm(&ws, &llm, &env);
    plain.initialize();
    let new = plain.call("session/new", json!({"cwd": ws.project(), "mcpServers": []}));
    let id = new["result"]["sessionId"].as_str().unwrap().to_string();
    plain.expect_commands(&id);
    let thinking = option(&new, "thinking").unwrap();
    assert_eq!((&thinking["type"], &thinking["currentValue"]), (&json!("select"), &json!("on")));
    let set =
        plain.call("config/set", json!({"sessionId": id, "configId": "thinking", "value": "off"}));
    assert_eq!(option(&set, "thinking").unwrap()["currentValue"], "off", "{set}");
    let bad = plain.call(
        "session/set_config_option",
        json!({"sessionId": id, "configId": "thinking", "value": "maybe"}),
    );
    assert_eq!(bad["error"]["code"], -32602, "{bad}");

    // Without a reasoning setting there is nothing to switch.
    let mut none = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    none.initialize_with(json!({"session": {"configOptions": {"boolean": {}}}}));
    let new = none.call("session/new", json!({"cwd": ws.project(), "mcpServers": []}));
    assert!(option(&new, "thinking").is_none(), "{new}");
}
