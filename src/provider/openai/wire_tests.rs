//! The request body: images of tool results follow the run of tool messages.

use serde_json::json;

use super::*;
use crate::history::{ChatMessage, Image, ToolUse};

fn result(id: &str, images: Vec<Image>) -> ChatMessage {
    ChatMessage::ToolResult {
        call_id: id.into(),
        content: format!("r{id}"),
        is_error: false,
        images,
    }
}

#[test]
fn tool_images_follow_the_tool_messages_in_one_user_message() {
    let png = Image { mime: "image/png".into(), data: "iVBO".into() };
    let call =
        |id: &str| ToolUse { id: id.into(), name: "mcp__s__shot".into(), arguments: "{}".into() };
    let messages = [
        ChatMessage::User { text: "look".into(), images: Vec::new() },
        ChatMessage::Assistant {
            text: String::new(),
            thinking: String::new(),
            signed: Vec::new(),
            tool_calls: vec![call("a"), call("b")],
        },
        result("a", vec![png.clone()]),
        result("b", vec![png]),
        ChatMessage::User { text: "and?".into(), images: Vec::new() },
    ];
    let request = ChatRequest {
        model: "m",
        system: "s",
        messages: &messages,
        tools: &[],
        max_tokens: 10,
        cache_key: None,
        thinking: true,
    };
    let config = crate::config::tests_support::provider_config();
    let body = serde_json::to_value(wire_request(&request, &config)).unwrap_or_default();
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "tool", "user", "user"]);
    let images = &body["messages"][5]["content"];
    assert_eq!(
        images[1],
        json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}})
    );
    assert_eq!(images.as_array().map(Vec::len), Some(3), "both images, after both results");
    assert_eq!(body["messages"][3]["content"], "ra", "the tool message itself stays text");
}

#[test]
fn usage_is_read_in_every_servers_spelling() {
    // (server, usage body, (input, output, cached read, cached write, thought))
    let table = [
        (
            "OpenAI",
            json!({"prompt_tokens": 2006, "completion_tokens": 300,
                   "prompt_tokens_details": {"cached_tokens": 1920},
                   "completion_tokens_details": {"reasoning_tokens": 128}}),
            (2006, 300, 1920, 0, 128),
        ),
        (
            "DeepSeek",
            json!({"prompt_tokens": 1000, "completion_tokens": 20,
                   "prompt_cache_hit_tokens": 768, "prompt_cache_miss_tokens": 232}),
            (1000, 20, 768, 0, 0),
        ),
        (
            "DashScope, explicit cache",
            json!({"prompt_tokens": 5000, "completion_tokens": 10,
                   "prompt_tokens_details": {"cached_tokens": 0,
                                             "cache_creation_input_tokens": 4800}}),
            (5000, 10, 0, 4800, 0),
        ),
        (
            "a bare cached_tokens",
            json!({"prompt_tokens": 900, "completion_tokens": 5, "cached_tokens": 512}),
            (900, 5, 512, 0, 0),
        ),
        (
            "llama.cpp, no details",
            json!({"prompt_tokens": 40, "completion_tokens": 2}),
            (40, 2, 0, 0, 0),
        ),
        (
            "more cached than sent is clamped",
            json!({"prompt_tokens": 10, "completion_tokens": 1,
                   "prompt_tokens_details": {"cached_tokens": 99},
                   "completion_tokens_details": {"reasoning_tokens": 7}}),
            (10, 1, 10, 0, 1),
        ),
    ];
    for (server, body, want) in table {
        let wire: WireUsage = serde_json::from_value(body).expect(server);
        let u = wire.read();
        let got = (u.input, u.output, u.cached_read, u.cached_write, u.thought);
        assert_eq!(got, want, "{server}");
    }
}
