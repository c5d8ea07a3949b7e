//! Tests of the Anthropic request: roles, blocks, signed thinking and the budget.

use serde_json::json;

use super::*;
use crate::history::{Image, SignedThinking, ToolUse};
use crate::provider::ToolDef;

#[test]
fn the_request_alternates_roles_and_sends_signed_thinking_back() {
    let messages = vec![
        ChatMessage::User { text: "fix it".into(), images: Vec::new() },
        ChatMessage::Assistant {
            text: " \n".into(),
            thinking: "plan".into(),
            signed: vec![
                SignedThinking {
                    thinking: "plan".into(),
                    signature: "sig".into(),
                    redacted: false,
                },
                SignedThinking {
                    thinking: "opaque".into(),
                    signature: String::new(),
                    redacted: true,
                },
                SignedThinking {
                    thinking: "cut".into(),
                    signature: String::new(),
                    redacted: false,
                },
            ],
            tool_calls: vec![
                ToolUse {
                    id: "a".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"x"}"#.into(),
                },
                ToolUse { id: "b".into(), name: "list_files".into(), arguments: String::new() },
            ],
        },
        ChatMessage::ToolResult {
            call_id: "a".into(),
            content: "x = 1".into(),
            is_error: false,
            images: vec![Image { mime: "image/png".into(), data: "iVBO".into() }],
        },
        ChatMessage::ToolResult {
            call_id: "b".into(),
            content: "denied".into(),
            is_error: true,
            images: Vec::new(),
        },
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
        cache_key: None,
        thinking: true,
    };
    let mut config = crate::config::tests_support::provider_config();
    config.thinking_budget = Some(2048);
    config.prompt_cache = crate::config::PromptCache::Off;
    let body = serde_json::to_value(request_body(&request, &config)).expect("ok");
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
    assert_eq!(assistant[1], json!({"type": "redacted_thinking", "data": "opaque"}));
    assert_eq!(assistant[2]["input"], json!({"path": "x"}), "unsigned reasoning is not sent");
    assert_eq!(assistant[3]["input"], json!({}));
    let user = &body["messages"][2]["content"];
    assert_eq!(
        user[0]["content"],
        json!([{"type": "text", "text": "x = 1"}, {"type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}]),
        "a tool's image goes back inside its result"
    );
    assert_eq!(
        user[1],
        json!({"type": "tool_result", "tool_use_id": "b", "content": "denied", "is_error": true})
    );
    assert_eq!(user[2], json!({"type": "text", "text": "and now?"}));
    assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
}
