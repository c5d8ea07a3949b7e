//! The Anthropic Messages provider against the fake LLM's Anthropic mode: thinking with
//! signatures sent back, tool_use, usage, stop reasons, errors mid-stream, 429 with
//! Retry-After, model switching kept across a reload, and a proxy (and NO_PROXY) on loopback.

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, Permission, agent_text, updates_of};
use crate::support::command::iac_code;
use crate::support::fake_llm::{Event, FakeLlm, Reply, text_reply};
use crate::support::workspace::Workspace;

fn anthropic(ws: &Workspace, llm: &FakeLlm, extra: &[(&str, &str)]) -> (AcpProcess, String) {
    let mut acp = spawn_anthropic(ws, llm, extra);
    let session = acp.new_session(&ws.project());
    (acp, session)
}

/// The agent speaking Anthropic to `llm`, initialized.
fn spawn_anthropic(ws: &Workspace, llm: &FakeLlm, extra: &[(&str, &str)]) -> AcpProcess {
    let base = llm.base_url();
    let mut env = vec![
        ("IAC_CODE_PROVIDER", "anthropic_compatible"),
        ("IAC_CODE_BASE_URL", base.as_str()),
        ("IAC_CODE_API_KEY", "sk-ant-test"),
        ("IAC_CODE_MODEL", "claude-test"),
    ];
    env.extend_from_slice(extra);
    let mut acp = AcpProcess::spawn(ws, &env);
    acp.set_permission(Permission::AllowOnce);
    acp.initialize();
    acp
}

#[test]
fn thinking_tool_use_and_usage_round_trip() {
    let ws = Workspace::new("anthropic-roundtrip");
    ws.write("main.tf", "resource \"x\" \"y\" {}\n");
    let first = Reply::Stream(vec![
        Event::Reasoning("Read it first.".into()),
        Event::Text("Let me look.".into()),
        Event::ToolCall {
            index: 0,
            id: "toolu_1".into(),
            name: "read_file".into(),
            args: json!({"path": "main.tf"}),
        },
        Event::Finish("tool_calls"),
        Event::Usage { prompt: 0, completion: 30 },
        Event::Done,
    ]);
    let llm = FakeLlm::start(vec![first, text_reply("It declares one resource.")]);
    let (mut acp, session) = anthropic(&ws, &llm, &[("IAC_CODE_THINKING_BUDGET", "2048")]);
    let (msgs, response) = acp.prompt(&session, "what is in main.tf?");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{}", acp.context());
    assert_eq!(agent_text(&msgs), "Let me look.It declares one resource.");
    let thought = updates_of(&msgs, "agent_thought_chunk");
    assert_eq!(thought[0]["content"]["text"], "Read it first.");
    assert_eq!(
        response["result"]["usage"]["outputTokens"],
        30 + 5,
        "exact usage, summed over the turn"
    );
    assert_eq!(response["result"]["usage"]["inputTokens"], 20);
    assert!(response["result"].get("_meta").is_none(), "not estimated");

    let requests = llm.requests();
    assert!(requests[0].path.ends_with("/v1/messages"));
    assert_eq!(requests[0].header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(requests[0].header("anthropic-version"), Some("2023-06-01"));
    let first_body = &requests[0].body;
    assert_eq!(first_body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
    assert!(first_body["system"][0]["text"].as_str().unwrap().contains("iac-code"));
    assert_eq!(first_body["tools"][0]["name"], "read_file");
    let second = &requests[1].body["messages"];
    let roles: Vec<&str> =
        second.as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    let assistant = &second[1]["content"];
    assert_eq!(
        assistant[0],
        json!({"type": "thinking", "thinking": "Read it first.", "signature": "sig-0"})
    );
    assert_eq!(assistant[1], json!({"type": "text", "text": "Let me look."}));
    assert_eq!(assistant[2]["type"], "tool_use");
    assert_eq!(assistant[2]["input"], json!({"path": "main.tf"}));
    let result = &second[2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_1");
    assert!(result["content"].as_str().unwrap().contains("resource \"x\""));
}

#[test]
fn stop_reasons_errors_and_retries() {
    let ws = Workspace::new("anthropic-stops");
    let length =
        Reply::Stream(vec![Event::Text("cut".into()), Event::Finish("length"), Event::Done]);
    let refusal = Reply::Stream(vec![Event::Finish("content_filter"), Event::Done]);
    let broken = Reply::Stream(vec![
        Event::Text("partial".into()),
        Event::Raw("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n".into()),
    ]);
    let limited = Reply::Status {
        code: 429,
        body: r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#
            .into(),
        retry_after: Some("0".into()),
    };
    let llm = FakeLlm::start(vec![length, refusal, broken, limited, text_reply("after the wait")]);
    let (mut acp, session) = anthropic(&ws, &llm, &[]);
    let (_, response) = acp.prompt(&session, "a");
    assert_eq!(response["result"]["stopReason"], "max_tokens");
    let (_, response) = acp.prompt(&session, "b");
    assert_eq!(response["result"]["stopReason"], "refusal");
    let (_, response) = acp.prompt(&session, "c");
    let message = response["error"]["message"].as_str().unwrap();
    assert!(message.contains("Overloaded"), "reported honestly after output began: {response}");
    let (msgs, response) = acp.prompt(&session, "d");
    assert_eq!(response["result"]["stopReason"], "end_turn", "429 retried");
    assert_eq!(agent_text(&msgs), "after the wait");
    assert_eq!(llm.requests().len(), 5);
}

#[test]
fn the_model_can_be_switched_mid_session() {
    let ws = Workspace::new("anthropic-models");
    let llm = FakeLlm::start(vec![text_reply("one"), text_reply("two"), text_reply("three")]);
    let (mut acp, session) = anthropic(&ws, &llm, &[("IAC_CODE_MODELS", "claude-other")]);
    acp.prompt(&session, "first");
    let set = acp.call(
        "session/set_config_option",
        json!({"sessionId": session, "configId": "model", "value": "claude-other"}),
    );
    let options = set["result"]["configOptions"].as_array().unwrap();
    let model = options.iter().find(|o| o["id"] == "model").unwrap();
    assert_eq!(model["currentValue"], "claude-other");
    acp.prompt(&session, "second");
    let models: Vec<Value> = llm.requests().iter().map(|r| r.body["model"].clone()).collect();
    assert_eq!(models, [json!("claude-test"), json!("claude-other")]);
    drop(acp);

    // The choice is part of the session: a new process that loads it keeps it.
    let mut acp = spawn_anthropic(&ws, &llm, &[("IAC_CODE_MODELS", "claude-other")]);
    let (_, loaded) = acp.open_session("session/load", &session, &ws.project());
    let options = loaded["result"]["configOptions"].as_array().unwrap();
    let model = options.iter().find(|o| o["id"] == "model").unwrap();
    assert_eq!(model["currentValue"], "claude-other", "{loaded}");
    acp.prompt(&session, "third");
    assert_eq!(llm.requests()[2].body["model"], "claude-other");
    let history = llm.requests()[2].body["messages"].as_array().unwrap().len();
    assert_eq!(history, 5, "the whole conversation went to the model again");
}

#[test]
fn requests_go_through_an_http_proxy() {
    let ws = Workspace::new("proxy");
    let llm = FakeLlm::start(vec![text_reply("via the proxy")]);
    let proxy = llm.base_url().trim_end_matches("/v1").to_string();
    let env = [
        ("IAC_CODE_BASE_URL", "http://llm.invalid/v1"),
        ("IAC_CODE_MODEL", "fake-model"),
        ("HTTP_PROXY", proxy.as_str()),
    ];
    let mut acp = AcpProcess::spawn(&ws, &env);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    let (msgs, response) = acp.prompt(&session, "hello");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{}", acp.context());
    assert_eq!(agent_text(&msgs), "via the proxy");
    let connects: Vec<String> = llm
        .other_requests()
        .iter()
        .filter(|r| r.method == "CONNECT")
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(connects, ["llm.invalid:80"]);
    drop(acp);

    // NO_PROXY names hosts reached directly: a dead proxy is never tried for them.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let dead = format!("http://{dead}");
    let base = llm.base_url();
    let env = [
        ("IAC_CODE_BASE_URL", base.as_str()),
        ("IAC_CODE_MODEL", "fake-model"),
        ("HTTP_PROXY", dead.as_str()),
        ("NO_PROXY", "localhost,127.0.0.1"),
        ("IAC_CODE_MAX_RETRIES", "0"),
    ];
    llm.push(text_reply("direct"));
    let mut acp = AcpProcess::spawn(&ws, &env);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    let (msgs, response) = acp.prompt(&session, "hello");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{}", acp.context());
    assert_eq!(agent_text(&msgs), "direct");
}

#[test]
fn the_settings_file_configures_the_provider_and_the_environment_wins() {
    let ws = Workspace::new("settings");
    let llm = FakeLlm::start(vec![text_reply("from settings"), text_reply("env wins")]);
    let settings = json!({
        "provider": "anthropic_compatible",
        // Section names are matched as provider names are: case, '-' and ' ' do not matter.
        "providers": {"Anthropic-Compatible": {
            "baseUrl": llm.base_url(), "apiKey": "sk-file", "model": "claude-file",
            "models": ["claude-file", "claude-two"], "maxTokens": 1234, "thinkingBudget": 1024
        }}
    });
    std::fs::write(ws.config().join("settings.json"), settings.to_string()).unwrap();
    let mut acp = AcpProcess::spawn(&ws, &[]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    let (msgs, _) = acp.prompt(&session, "hi");
    assert_eq!(agent_text(&msgs), "from settings");
    let request = &llm.requests()[0];
    assert_eq!(request.header("x-api-key"), Some("sk-file"));
    assert_eq!(request.body["model"], "claude-file");
    assert!(request.body["max_tokens"].as_u64().unwrap() > 1024);
    assert!(acp.stderr().contains("chmod 600"), "a readable key is warned about");
    assert!(!acp.stderr().contains("sk-file"), "keys are never logged");
    drop(acp);

    let mut acp = AcpProcess::spawn(&ws, &[("IAC_CODE_MODEL", "claude-two")]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    acp.prompt(&session, "again");
    assert_eq!(llm.requests()[1].body["model"], "claude-two", "the environment wins");

    std::fs::write(ws.config().join("settings.json"), r#"{"providers": {}, "provder": "x"}"#)
        .unwrap();
    let out = iac_code(&ws).arg("acp").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown key 'provder'"));
}

#[test]
fn images_reach_both_apis_when_the_model_accepts_them() {
    let png = "iVBORw0KGgo=";
    let prompt = |acp: &mut AcpProcess, session: &str| {
        let id = acp.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [
                {"type": "text", "text": "what is this?"},
                {"type": "image", "mimeType": "image/png", "data": png}
            ]}),
        );
        acp.until_response(&id)
    };
    // Anthropic: an image block before the text; the capability is advertised.
    let ws = Workspace::new("images-anthropic");
    let llm = FakeLlm::start(vec![text_reply("a diagram")]);
    let base = llm.base_url();
    let env = [
        ("IAC_CODE_PROVIDER", "anthropic_compatible"),
        ("IAC_CODE_BASE_URL", base.as_str()),
        ("IAC_CODE_MODEL", "claude-vision"),
        ("IAC_CODE_IMAGES", "true"),
    ];
    let mut acp = AcpProcess::spawn(&ws, &env);
    let init = acp.initialize();
    assert_eq!(init["agentCapabilities"]["promptCapabilities"]["image"], true);
    let session = acp.new_session(&ws.project());
    prompt(&mut acp, &session);
    let content = &llm.requests()[0].body["messages"][0]["content"];
    assert_eq!(
        content[0],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}})
    );
    assert_eq!(
        content[1],
        json!({"type": "text", "text": "what is this?", "cache_control": {"type": "ephemeral"}}),
        "the newest message's last block is a cache breakpoint"
    );

    // OpenAI-compatible: a data URL part.
    let ws = Workspace::new("images-openai");
    let llm = FakeLlm::start(vec![text_reply("a diagram")]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[("IAC_CODE_IMAGES", "1")]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    prompt(&mut acp, &session);
    let content = &llm.requests()[0].body["messages"][1]["content"];
    assert_eq!(
        content[1],
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{png}")}})
    );

    // Without IAC_CODE_IMAGES the image stays a text marker.
    let ws = Workspace::new("images-off");
    let llm = FakeLlm::start(vec![text_reply("ok")]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    let init = acp.initialize();
    assert_eq!(init["agentCapabilities"]["promptCapabilities"]["image"], false);
    let session = acp.new_session(&ws.project());
    prompt(&mut acp, &session);
    let text = llm.requests()[0].body["messages"][1]["content"].as_str().unwrap().to_string();
    assert!(text.contains("[image: image/png]"), "{text}");
}

#[test]
fn a_bad_ca_file_or_thinking_setting_is_a_clear_configuration_error() {
    let ws = Workspace::new("ca-file");
    let run = |env: &[(&str, &str)]| {
        iac_code(&ws)
            .arg("acp")
            .env("IAC_CODE_BASE_URL", "https://llm.example/v1")
            .env("IAC_CODE_MODEL", "m")
            .envs(env.iter().copied())
            .output()
            .unwrap()
    };
    let missing = ws.root().join("nope.pem");
    let out = run(&[("IAC_CODE_CA_FILE", missing.to_str().unwrap())]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("IAC_CODE_CA_FILE"));
    let empty = ws.root().join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").unwrap();
    let out = run(&[("IAC_CODE_CA_FILE", empty.to_str().unwrap())]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no PEM certificate"));
    let out = run(&[("IAC_CODE_REASONING_EFFORT", "extreme")]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&[("IAC_CODE_THINKING_BUDGET", "12")]);
    assert_eq!(out.status.code(), Some(2), "below the API's minimum of 1024");
}
