//! Tests of the Anthropic wire format: the request's roles and blocks, and the events.

use serde_json::json;

use super::*;
use crate::provider::ToolDef;

fn event(data: Value) -> SseEvent {
    SseEvent { event: data["type"].as_str().map(str::to_string), data: data.to_string() }
}

#[test]
fn assembles_text_thinking_signatures_and_tool_use() {
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 12, "cache_read_input_tokens": 3, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Need the file."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig-1"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Reading."}}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "tu_1", "name": "read_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"path\":"}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "\"main.tf\"}"}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 40}}),
        json!({"type": "message_stop"}),
    ];
    let mut acc = Acc::default();
    let mut deltas = Vec::new();
    let mut streamed = false;
    let mut done = false;
    for e in events {
        done =
            matches!(acc.event(event(e), &mut |d| deltas.push(d), &mut streamed), Ok(Flow::Done));
    }
    assert!(done);
    let completion = acc.finish();
    assert_eq!(deltas, [Delta::Thought("Need the file.".into()), Delta::Text("Reading.".into())]);
    assert_eq!(completion.signature, "sig-1");
    assert_eq!(completion.finish, Finish::ToolCalls);
    assert_eq!(completion.usage, Some(Usage { input: 15, output: 40 }));
    assert_eq!(completion.tool_calls[0].arguments, r#"{"path":"main.tf"}"#);
    assert_eq!(finish_of("refusal"), Finish::Refusal);
    assert_eq!(finish_of("max_tokens"), Finish::Length);
}

#[test]
fn errors_mid_stream_are_reported_and_retried_only_before_output() {
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let mut acc = Acc::default();
    let mut streamed = false;
    assert!(matches!(
        acc.event(event(overloaded.clone()), &mut |_| {}, &mut streamed),
        Err(AttemptError::Retryable { .. })
    ));
    streamed = true;
    assert!(
        matches!(acc.event(event(overloaded), &mut |_| {}, &mut streamed), Err(AttemptError::Fatal(m)) if m.contains("Overloaded"))
    );
}

#[test]
fn the_request_alternates_roles_and_sends_signed_thinking_back() {
    let messages = vec![
        ChatMessage::User { text: "fix it".into(), images: Vec::new() },
        ChatMessage::Assistant {
            text: String::new(),
            thinking: "plan".into(),
            signature: "sig".into(),
            tool_calls: vec![
                ToolCallRecord {
                    id: "a".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"x"}"#.into(),
                },
                ToolCallRecord {
                    id: "b".into(),
                    name: "list_files".into(),
                    arguments: String::new(),
                },
            ],
        },
        ChatMessage::ToolResult { call_id: "a".into(), content: "x = 1".into(), is_error: false },
        ChatMessage::ToolResult { call_id: "b".into(), content: "denied".into(), is_error: true },
        ChatMessage::User { text: "and now?".into(), images: Vec::new() },
    ];
    let tools = [ToolDef {
        name: "read_file".into(),
        description: "d".into(),
        parameters: json!({"type": "object"}),
    }];
    let request = ChatRequest {
        model: "claude-x",
        system: "sys",
        messages: &messages,
        tools: &tools,
        max_tokens: 1000,
    };
    let mut config = crate::config::tests_support::provider_config();
    config.thinking_budget = Some(2048);
    let body = request_body(&request, &config);
    assert_eq!(body["system"], "sys");
    assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
    assert!(body["max_tokens"].as_u64().expect("ok") > 2048, "the budget fits inside max_tokens");
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .expect("ok")
        .iter()
        .map(|m| m["role"].as_str().expect("ok"))
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "user"],
        "tool results and the next prompt share one user turn"
    );
    let assistant = &body["messages"][1]["content"];
    assert_eq!(assistant[0], json!({"type": "thinking", "thinking": "plan", "signature": "sig"}));
    assert_eq!(assistant[1]["input"], json!({"path": "x"}));
    assert_eq!(assistant[2]["input"], json!({}));
    let user = &body["messages"][2]["content"];
    assert_eq!(
        user[1],
        json!({"type": "tool_result", "tool_use_id": "b", "content": "denied", "is_error": true})
    );
    assert_eq!(user[2], json!({"type": "text", "text": "and now?"}));
    assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
}
