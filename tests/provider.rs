//! Provider failures: no configuration, HTTP errors with the provider's message, bounded
//! retries honouring Retry-After, broken and idle streams, unreachable servers.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::acp_client::AcpProcess;
use crate::support::fake_llm::{Event, FakeLlm, Reply, text_reply};
use crate::support::workspace::Workspace;

fn status(code: u16, message: &str, retry_after: Option<&str>) -> Reply {
    Reply::Status {
        code,
        body: json!({"error": {"message": message, "type": "test"}}).to_string(),
        retry_after: retry_after.map(str::to_string),
    }
}

fn run(
    name: &str,
    script: Vec<Reply>,
    extra: &[(&str, &str)],
) -> (FakeLlm, AcpProcess, String, Value) {
    let ws = Workspace::new(name);
    let llm = FakeLlm::start(script);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, extra);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    let (_, response) = acp.prompt(&session, "hello");
    std::mem::forget(ws);
    (llm, acp, session, response)
}

fn error_message(response: &Value) -> String {
    let error = response.get("error").unwrap_or_else(|| panic!("expected an error: {response}"));
    assert_eq!(error["code"], -32603, "{response}");
    error["message"].as_str().unwrap().to_string()
}

/// The kind of provider failure the error's `data` names.
fn error_kind(response: &Value) -> &str {
    assert_eq!(response["error"]["data"]["reason"], "provider_error", "{response}");
    response["error"]["data"]["kind"].as_str().unwrap_or("")
}

#[test]
fn no_provider_fails_the_prompt_naming_what_to_set() {
    let ws = Workspace::new("no-provider");
    let mut acp = AcpProcess::spawn(&ws, &[]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    let (_, response) = acp.prompt(&session, "hello");
    let message = sign_in_message(&response);
    assert!(
        message.contains("IAC_CODE_PROVIDER") && message.contains("IAC_CODE_BASE_URL"),
        "{message}"
    );
    // The server keeps serving.
    assert!(acp.call("session/list", json!({}))["result"].is_object());
    let ws = Workspace::new("no-key");
    let mut acp = AcpProcess::spawn(&ws, &[("IAC_CODE_PROVIDER", "openai")]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    let message = sign_in_message(&acp.prompt(&session, "hello").1);
    assert!(message.contains("IAC_CODE_API_KEY"), "{message}");
}

/// ACP's `auth_required` (-32000), which an editor answers with its sign-in, saying how.
fn sign_in_message(response: &Value) -> String {
    assert_eq!(response["error"]["code"], -32000, "{response}");
    assert_eq!(response["error"]["data"]["reason"], "provider_not_configured", "{response}");
    let message = response["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("iac-code login"), "{message}");
    message
}

#[test]
fn client_errors_are_not_retried_and_show_the_providers_message() {
    let (llm, _acp, _s, response) =
        run("http-401", vec![status(401, "Incorrect API key provided", None)], &[]);
    let message = error_message(&response);
    assert!(
        message.contains("HTTP 401") && message.contains("Incorrect API key provided"),
        "{message}"
    );
    assert_eq!(error_kind(&response), "auth");
    assert_eq!(llm.requests().len(), 1);
}

#[test]
fn transient_errors_are_retried_honouring_retry_after() {
    let script = vec![
        status(429, "slow down", Some("0")),
        status(503, "overloaded", Some("0")),
        text_reply("finally"),
    ];
    let (llm, _acp, _s, response) = run("retry-ok", script, &[]);
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(llm.requests().len(), 3);
}

#[test]
fn retries_are_bounded() {
    let script = (0..3).map(|_| status(503, "still down", Some("0"))).collect();
    let (llm, _acp, _s, response) = run("retry-bounded", script, &[("IAC_CODE_MAX_RETRIES", "2")]);
    let message = error_message(&response);
    assert!(message.contains("HTTP 503") && message.contains("still down"), "{message}");
    assert!(message.contains("3 attempts"), "{message}");
    assert_eq!(error_kind(&response), "server_error");
    assert_eq!(llm.requests().len(), 3);
    assert_eq!(llm.unexpected_requests(), 0);
    let script = (0..2).map(|_| status(429, "slow down", Some("0"))).collect();
    let (_llm, _acp, _s, response) = run("rate-bounded", script, &[("IAC_CODE_MAX_RETRIES", "1")]);
    assert_eq!(error_kind(&response), "rate_limit", "{response}");
}

#[test]
fn a_stream_cut_after_it_started_is_reported_not_truncated() {
    let script = vec![Reply::Cut(vec![Event::Text("Half an ans".into())])];
    let (llm, _acp, _s, response) = run("cut", script, &[]);
    let message = error_message(&response);
    assert!(
        message.contains("ended before the reply was complete") || message.contains("broke"),
        "{message}"
    );
    assert_eq!(llm.requests().len(), 1, "nothing is retried once text streamed");
    assert_eq!(error_kind(&response), "cut_stream");
}

#[test]
fn an_idle_stream_is_cut_by_the_watchdog() {
    let script = vec![Reply::Hang(vec![Event::Text("I will".into())])];
    let (llm, _acp, _s, response) = run("idle", script, &[("IAC_CODE_STREAM_IDLE_TIMEOUT", "0.3")]);
    let message = error_message(&response);
    assert!(message.contains("idle timeout"), "{message}");
    assert_eq!(error_kind(&response), "timeout");
    assert!(llm.wait_hang_dropped(Duration::from_secs(5)));
}

#[test]
fn keep_alive_comments_hold_a_slow_stream_past_the_idle_limit() {
    // 0.3 s of idle limit, a reply that takes 0.6 s but never stays silent for 0.1 s.
    let mut events = vec![Event::Text("I am ".into())];
    for _ in 0..6 {
        events.extend([Event::Pause(100), Event::Raw(": keep-alive\n\n".into())]);
    }
    events.extend([Event::Text("thinking".into()), Event::Finish("stop"), Event::Done]);
    let ws = Workspace::new("keep-alive");
    let llm = FakeLlm::start(vec![Reply::Stream(events)]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[("IAC_CODE_STREAM_IDLE_TIMEOUT", "0.3")]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    let (msgs, response) = acp.prompt(&session, "hello");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(llm.requests().len(), 1, "not cut and retried");
    let text: String = msgs
        .iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|m| m["params"]["update"]["content"]["text"].as_str())
        .collect();
    assert_eq!(text, "I am thinking");
}

#[test]
fn a_malformed_event_is_an_error_not_a_crash() {
    let script = vec![Reply::Stream(vec![Event::Raw("data: {not json\n\n".into()), Event::Done])];
    let (_llm, mut acp, _s, response) = run("malformed", script, &[]);
    let message = error_message(&response);
    assert!(message.contains("malformed event"), "{message}");
    assert_eq!(error_kind(&response), "bad_reply");
    assert!(acp.call("session/list", json!({}))["result"].is_object());
}

#[test]
fn an_unreachable_server_fails_fast_with_a_hint() {
    let ws = Workspace::new("refused");
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/v1");
    let mut acp = AcpProcess::spawn(
        &ws,
        &[("IAC_CODE_BASE_URL", &url), ("IAC_CODE_MODEL", "m"), ("IAC_CODE_MAX_RETRIES", "1")],
    );
    acp.initialize();
    let session = acp.new_session(&ws.project());
    let response = acp.prompt(&session, "hello").1;
    let message = error_message(&response);
    assert!(message.contains("cannot reach the LLM") && message.contains(&url), "{message}");
    assert_eq!(error_kind(&response), "connect");
    assert!(message.contains("2 attempts"), "{message}");
}
