//! `_session/steering`: advertised in `initialize`; a message sent while a tool call waits
//! reaches the model at its next request, after the tool result (journalled, replayed on
//! load); an idle session starts a new turn (`startedNewTurn`, its end told by a
//! `session_info_update`), or answers `promptRequired` when the client asks; over HTTP from
//! another socket of the connection.

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, Permission, agent_text, updates_of};
use crate::support::fake_llm::{FakeLlm, text_reply, tool_reply};
use crate::support::http_client::{Event, HttpServer};
use crate::support::workspace::Workspace;

const STEER: &str = "use eu-west-1 instead";

fn setup(
    name: &str,
    script: Vec<crate::support::fake_llm::Reply>,
) -> (Workspace, FakeLlm, AcpProcess, String) {
    let ws = Workspace::new(name);
    let llm = FakeLlm::start(script);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    let init = acp.initialize();
    assert_eq!(init["_meta"]["steering"]["supported"], true, "{init}");
    let session = acp.new_session(&ws.project());
    (ws, llm, acp, session)
}

fn steering(session: &str, text: &str, meta: Option<Value>) -> Value {
    let mut params = json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    params
}

fn write_reply() -> crate::support::fake_llm::Reply {
    tool_reply("w1", "write_file", json!({"path": "main.tf", "content": "region = \"us\"\n"}))
}

/// Starts a prompt whose write waits at its permission question; returns the prompt's
/// request id and the question.
fn prompt_until_question(acp: &mut AcpProcess, session: &str) -> (Value, Value) {
    acp.set_permission(Permission::Manual);
    let id = acp.start_prompt(session, "write main.tf");
    loop {
        let msg = acp.recv();
        if msg["method"] == "session/request_permission" {
            return (id, msg);
        }
    }
}

fn allow(acp: &mut AcpProcess, question: &Value) {
    let outcome = json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}});
    acp.respond(question["id"].clone(), outcome);
}

/// The roles and texts of the LLM request `n`.
fn messages(llm: &FakeLlm, n: usize) -> Vec<Value> {
    llm.requests()[n].body["messages"].as_array().unwrap().clone()
}

#[test]
fn a_message_sent_during_a_tool_call_follows_its_result_and_is_replayed() {
    let (ws, llm, mut acp, session) =
        setup("steer-running", vec![write_reply(), text_reply("switched")]);
    let (id, question) = prompt_until_question(&mut acp, &session);
    let response = acp.call("_session/steering", steering(&session, STEER, None));
    assert_eq!(response["result"], json!({"outcome": "injected"}));
    assert_eq!(llm.requests().len(), 1, "nothing is sent before the call ends");
    allow(&mut acp, &question);
    let (msgs, response) = acp.until_response(&id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(agent_text(&msgs), "switched");
    let sent = messages(&llm, 1);
    let n = sent.len();
    assert_eq!(sent[n - 2]["role"], "tool", "{sent:?}");
    assert_eq!(sent[n - 1], json!({"role": "user", "content": STEER}));

    // Journalled: a reload replays it as the user's, between the call and the reply.
    acp.call("session/close", json!({"sessionId": session}));
    let (replay, response) = acp.open_session("session/load", &session, &ws.project());
    assert!(response.get("result").is_some(), "{response}");
    let kinds: Vec<&str> = replay
        .iter()
        .filter_map(|m| m["params"]["update"]["sessionUpdate"].as_str())
        .filter(|k| *k != "usage_update")
        .collect();
    let user: Vec<&Value> = updates_of(&replay, "user_message_chunk");
    assert_eq!(user.len(), 2, "{kinds:?}");
    assert_eq!(user[1]["content"]["text"], STEER);
    let steered = kinds.iter().rposition(|k| *k == "user_message_chunk").unwrap();
    let result = kinds.iter().rposition(|k| *k == "tool_call_update").unwrap();
    let reply = kinds.iter().rposition(|k| *k == "agent_message_chunk").unwrap();
    assert!(result < steered && steered < reply, "{kinds:?}");
}

#[test]
fn an_idle_session_starts_a_new_turn() {
    let (_ws, llm, mut acp, session) =
        setup("steer-idle", vec![text_reply("first"), text_reply("second")]);
    let (_, response) = acp.prompt(&session, "hello");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let id = acp.request("_session/steering", steering(&session, "and now?", None));
    let mut seen = Vec::new();
    let mut answered = false;
    let ended = loop {
        let msg = acp.recv();
        if msg["id"] == id && msg.get("method").is_none() {
            assert_eq!(msg["result"], json!({"outcome": "startedNewTurn"}));
            answered = true;
            continue;
        }
        let ended = msg["params"]["update"]["_meta"]["iacCode"]["turnEnded"].clone();
        if !ended.is_null() {
            break ended;
        }
        seen.push(msg);
    };
    assert!(answered, "the steering request is answered before the turn ends");
    assert_eq!(ended["stopReason"], "end_turn", "{ended}");
    assert!(ended["usage"].is_object(), "{ended}");
    assert_eq!(agent_text(&seen), "second");
    let sent = messages(&llm, 1);
    assert_eq!(sent.last().unwrap(), &json!({"role": "user", "content": "and now?"}));
}

#[test]
fn prompt_required_starts_nothing() {
    let (_ws, llm, mut acp, session) =
        setup("steer-required", vec![text_reply("first"), text_reply("next")]);
    acp.prompt(&session, "hello");
    let meta = json!({"steering": {"idleBehavior": "promptRequired"}});
    let response = acp.call("_session/steering", steering(&session, "lost?", Some(meta)));
    assert_eq!(response["result"]["outcome"], "promptRequired", "{response}");
    let (_, response) = acp.prompt(&session, "next one");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(llm.requests().len(), 2);
    let sent = messages(&llm, 1);
    assert!(sent.iter().all(|m| m["content"] != "lost?"), "{sent:?}");
    assert_eq!(sent.last().unwrap()["content"], "next one");
    // Bad params are refused.
    let bad = acp.call("_session/steering", json!({"sessionId": session, "prompt": 7}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let empty = acp.call("_session/steering", json!({"sessionId": session, "prompt": []}));
    assert_eq!(empty["error"]["code"], -32602, "{empty}");
    let unknown = "0b7e6c2a-1f7d-4c9e-9d1b-1a2b3c4d5e6f";
    let stranger = acp.call("_session/steering", steering(unknown, "hi", None));
    assert_eq!(stranger["error"]["code"], -32602, "{stranger}");
    assert!(stranger["error"]["message"].as_str().unwrap().contains("session not found"));
}

#[test]
fn steering_over_http_from_another_socket() {
    let ws = Workspace::new("steer-http");
    let llm = FakeLlm::start(vec![write_reply(), text_reply("switched")]);
    let server = HttpServer::spawn(&ws, Some(&llm), &[], &[]);
    let conn = server.initialize();
    let sse = server.stream(&conn, None, None);
    let rpc = |id: i64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let is_response =
        |id: i64| move |e: &Event| e.data["id"] == json!(id) && e.data.get("method").is_none();
    server
        .post(Some(&conn), &rpc(1, "session/new", json!({"cwd": ws.project(), "mcpServers": []})));
    let events = sse.until(is_response(1));
    let session = events.last().unwrap().data["result"]["sessionId"].as_str().unwrap().to_string();
    let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": "write"}]});
    server.post(Some(&conn), &rpc(2, "session/prompt", prompt));
    let asked = sse.until(|e| e.data["method"] == "session/request_permission");
    let question = asked.last().unwrap().data.clone();
    assert_eq!(
        server
            .post(Some(&conn), &rpc(3, "_session/steering", steering(&session, STEER, None)))
            .status,
        202
    );
    let events = sse.until(is_response(3));
    assert_eq!(events.last().unwrap().data["result"], json!({"outcome": "injected"}));
    let answer = json!({"jsonrpc": "2.0", "id": question["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}});
    server.post(Some(&conn), &answer);
    let events = sse.until(is_response(2));
    assert_eq!(events.last().unwrap().data["result"]["stopReason"], "end_turn");
    let sent = messages(&llm, 1);
    assert_eq!(sent.last().unwrap(), &json!({"role": "user", "content": STEER}));
}
