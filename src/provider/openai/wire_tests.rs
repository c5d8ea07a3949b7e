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
