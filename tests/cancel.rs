//! Cancellation: during an idle LLM stream, the LLM connection dropped, nothing sent after
//! the response; and a client that goes away mid-prompt.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::acp_client::AcpProcess;
use crate::support::fake_llm::{Event, FakeLlm, Reply, text_reply};
use crate::support::workspace::Workspace;

#[test]
fn cancel_during_an_idle_stream_answers_cancelled_and_drops_the_llm() {
    let ws = Workspace::new("cancel-idle");
    let llm = FakeLlm::start(vec![
        Reply::Hang(vec![Event::Text("Planning the VPC".into())]),
        text_reply("next"),
    ]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
    );
    // Wait for the first chunk (after the title the first prompt gave the session): the
    // stream is now idle.
    let title = acp.recv();
    assert_eq!(title["params"]["update"]["sessionUpdate"], "session_info_update");
    let chunk = acp.recv();
    assert_eq!(chunk["params"]["update"]["sessionUpdate"], "agent_message_chunk");
    acp.notify("session/cancel", json!({"sessionId": session}));
    let (between, response) = acp.until_response(&id);
    let kinds: Vec<&Value> =
        between.iter().map(|m| &m["params"]["update"]["sessionUpdate"]).collect();
    assert_eq!(kinds, ["session_info_update"], "only the session's new updatedAt: {between:?}");
    assert_eq!(response["result"]["stopReason"], "cancelled");
    assert!(llm.wait_hang_dropped(Duration::from_secs(5)), "the LLM connection was dropped");
    // Nothing for that turn after the response: the next frame answers the next request.
    let list = acp.request("session/list", json!({}));
    let next = acp.recv();
    assert_eq!(next["id"], list, "unexpected frame after the cancelled response: {next}");
    // The session still works, and the model sees what it had said.
    let (_, response) = acp.prompt(&session, "continue");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let messages = llm.requests()[1].body["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(messages[2]["content"], "Planning the VPC");
}

#[test]
fn stdin_eof_mid_prompt_cancels_and_exits_zero() {
    let ws = Workspace::new("eof-mid-prompt");
    let llm = FakeLlm::start(vec![Reply::Hang(vec![Event::Text("...".into())])]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
    );
    llm.wait_for_requests(1, Duration::from_secs(10));
    acp.close_stdin();
    let status = acp.wait_exit(Duration::from_secs(10)).expect("exits");
    assert!(status.success(), "{status:?}");
    // The prompt was answered `cancelled` before the process went away.
    let mut answered = false;
    while let Some(msg) = acp.recv_timeout(Duration::from_secs(1)) {
        if msg.get("result").is_some() {
            assert_eq!(msg["result"]["stopReason"], "cancelled", "{msg}");
            answered = true;
        }
    }
    assert!(answered, "the prompt got its answer before exit");
    assert!(llm.wait_hang_dropped(Duration::from_secs(5)));
}
