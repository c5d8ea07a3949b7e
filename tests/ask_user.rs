//! `ask_user`: with a client that declared `elicitation.form`, the question goes out as
//! `elicitation/create` scoped to the session and the tool call, and the answer (checked
//! against the form), a decline, or a cancel that withdraws the question reaches the
//! model; without it, the question is the turn's last message and the user answers in the
//! next prompt (over ACP and in `-p`).

use std::process::Stdio;

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, agent_text, updates_of};
use crate::support::command::{TestCommand, iac_code};
use crate::support::fake_llm::{FakeLlm, Reply, text_reply, tool_reply};
use crate::support::workspace::Workspace;

fn ask(id: &str, args: Value) -> Reply {
    tool_reply(id, "ask_user", args)
}

fn which_environment() -> Value {
    json!({"question": "Which environment?", "options": ["staging", "production"]})
}

/// A form with a required text field and a bounded number (the terminal client's tests
/// answer it too).
pub fn bucket_form() -> Value {
    json!({
        "question": "Bucket details?",
        "fields": {
            "bucket": {"type": "string", "description": "its name"},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 3}
        },
        "required": ["bucket"]
    })
}

/// A session whose client renders forms when `forms`.
fn setup(name: &str, script: Vec<Reply>, forms: bool) -> (Workspace, FakeLlm, AcpProcess, String) {
    let ws = Workspace::new(name);
    let llm = FakeLlm::start(script);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    let mut caps =
        json!({"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false});
    if forms {
        caps["elicitation"] = json!({"form": {}});
    }
    acp.initialize_with(caps);
    let session = acp.new_session(&ws.project());
    (ws, llm, acp, session)
}

/// Reads messages until the agent's next `elicitation/create`; returns it and what came
/// before.
fn until_elicitation(acp: &mut AcpProcess) -> (Vec<Value>, Value) {
    let mut before = Vec::new();
    loop {
        let msg = acp.recv();
        if msg["method"] == "elicitation/create" {
            return (before, msg);
        }
        before.push(msg);
    }
}

/// The tool results of the LLM's last request, in order.
fn tool_results(llm: &FakeLlm) -> Vec<String> {
    let requests = llm.requests();
    let messages = requests.last().unwrap().body["messages"].as_array().unwrap().clone();
    messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn an_accepted_answer_reaches_the_model() {
    let script = vec![ask("q1", which_environment()), text_reply("planning staging")];
    let (_ws, llm, mut acp, session) = setup("ask-accept", script, true);
    let id = acp.start_prompt(&session, "deploy it");
    let (before, asked) = until_elicitation(&mut acp);
    let call = updates_of(&before, "tool_call")[0].clone();
    assert_eq!(call["kind"], "think");
    assert_eq!(call["title"], "Ask: Which environment?");
    let params = &asked["params"];
    assert_eq!(params["sessionId"], session.as_str());
    assert_eq!(params["toolCallId"], call["toolCallId"], "scoped to the announced call");
    assert_eq!(params["mode"], "form");
    assert_eq!(params["message"], "Which environment?");
    let schema = &params["requestedSchema"];
    assert_eq!(schema["properties"]["answer"]["enum"], json!(["staging", "production"]));
    assert_eq!(schema["required"], json!(["answer"]));
    assert!(before.iter().all(|m| m["method"] != "session/request_permission"), "never asks");
    acp.respond(asked["id"].clone(), json!({"action": "accept", "content": {"answer": "staging"}}));
    let (msgs, response) = acp.until_response(&id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(tool_results(&llm), ["The user chose: staging"]);
    let done = updates_of(&msgs, "tool_call_update");
    assert_eq!(done.last().unwrap()["status"], "completed");
    assert_eq!(agent_text(&msgs), "planning staging");
}

#[test]
fn a_form_declined_or_answered_wrongly_is_told_to_the_model() {
    let form = bucket_form();
    let script = vec![
        ask("q1", form.clone()),
        ask("q2", form),
        ask("q3", which_environment()),
        text_reply("fine"),
    ];
    let (_ws, llm, mut acp, session) = setup("ask-decline", script, true);
    let id = acp.start_prompt(&session, "make a bucket");
    let (_, first) = until_elicitation(&mut acp);
    let schema = &first["params"]["requestedSchema"];
    assert_eq!(
        schema["properties"]["replicas"],
        json!({"type": "integer", "minimum": 1, "maximum": 3})
    );
    assert_eq!(schema["required"], json!(["bucket"]));
    // Out of bounds: the model hears that the answer does not fit.
    let bad = json!({"action": "accept", "content": {"bucket": "logs", "replicas": 9}});
    acp.respond(first["id"].clone(), bad);
    let (_, second) = until_elicitation(&mut acp);
    let good = json!({"action": "accept", "content": {"bucket": "logs", "replicas": 2}});
    acp.respond(second["id"].clone(), good);
    let (_, third) = until_elicitation(&mut acp);
    acp.respond(third["id"].clone(), json!({"action": "decline"}));
    let (_, response) = acp.until_response(&id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let results = tool_results(&llm);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(
        results[0].contains("does not fit the form") && results[0].contains("above the maximum"),
        "{}",
        results[0]
    );
    assert_eq!(results[1], r#"The user answered: {"bucket":"logs","replicas":2}"#);
    assert!(results[2].starts_with("The user declined to answer."), "{}", results[2]);
}

#[test]
fn session_cancel_withdraws_a_pending_question() {
    let script = vec![ask("q1", which_environment()), text_reply("never sent")];
    let (_ws, llm, mut acp, session) = setup("ask-cancel", script, true);
    let id = acp.start_prompt(&session, "deploy it");
    let (_, asked) = until_elicitation(&mut acp);
    acp.notify("session/cancel", json!({"sessionId": session}));
    let (msgs, response) = acp.until_response(&id);
    assert_eq!(response["result"]["stopReason"], "cancelled");
    let withdrawn: Vec<&Value> =
        msgs.iter().filter(|m| m["method"] == "$/cancel_request").collect();
    assert_eq!(withdrawn.len(), 1, "{msgs:?}");
    assert_eq!(withdrawn[0]["params"]["requestId"], asked["id"]);
    let done = updates_of(&msgs, "tool_call_update");
    assert_eq!(done.last().unwrap()["status"], "failed");
    assert_eq!(llm.requests().len(), 1, "the model is not called again");
    // A late answer to the withdrawn question is ignored, and the session goes on.
    acp.respond(asked["id"].clone(), json!({"action": "accept", "content": {"answer": "staging"}}));
    llm.push(text_reply("next"));
    let (_, response) = acp.prompt(&session, "again");
    assert_eq!(response["result"]["stopReason"], "end_turn");
}

#[test]
fn without_forms_the_question_ends_the_turn_and_the_next_prompt_answers_it() {
    let script = vec![ask("q1", which_environment()), text_reply("planning production")];
    let (ws, llm, mut acp, session) = setup("ask-text", script, false);
    let (msgs, response) = acp.prompt(&session, "deploy it");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(msgs.iter().all(|m| m["method"] != "elicitation/create"));
    let question = "Which environment?\n\n1. staging\n2. production";
    assert_eq!(agent_text(&msgs), question, "the question is the agent's message");
    assert_eq!(llm.requests().len(), 1, "the turn stops without calling the model again");

    let (_, response) = acp.prompt(&session, "production");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let messages = llm.requests()[1].body["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles[roles.len() - 4..],
        ["assistant", "tool", "assistant", "user"],
        "{messages:?}"
    );
    let n = messages.len();
    assert!(messages[n - 3]["content"].as_str().unwrap().contains("their answer comes"));
    assert_eq!(messages[n - 2]["content"], question);
    assert_eq!(messages[n - 1]["content"], "production");

    // A reload shows the question where it was asked.
    acp.call("session/close", json!({"sessionId": session}));
    let (replay, response) = acp.open_session("session/load", &session, &ws.project());
    assert!(response.get("result").is_some(), "{response}");
    assert!(agent_text(&replay).starts_with(question), "{}", agent_text(&replay));
}

#[test]
fn one_shot_mode_prints_the_question_and_stops() {
    let ws = Workspace::new("ask-oneshot");
    let llm = FakeLlm::start(vec![ask("q1", which_environment()), text_reply("unused")]);
    let mut command = iac_code(&ws);
    command.fake_llm(&llm);
    let out = command.args(["-p", "deploy it"]).stdin(Stdio::null()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("Which environment?\n\n1. staging\n2. production"), "{stdout}");
    assert_eq!(llm.requests().len(), 1);
}
