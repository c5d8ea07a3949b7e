//! The Anthropic request body: `system` apart, strictly alternating roles, tool results
//! in user turns, signed and redacted thinking sent back intact, the thinking budget, and
//! the `cache_control` breakpoints `provider/cache.rs` places.

use serde::Serialize;
use serde_json::{Value, json};

use crate::config::{PromptCache, ProviderConfig};
use crate::history::ChatMessage;
use crate::provider::ChatRequest;
use crate::provider::cache::{Breakpoints, breakpoints, previous_end};

/// The request body. Its fields are written in this order, the conversation last, so that
/// a request's bytes up to its last message are a prefix of the next request's (the
/// previous breakpoint stays where it was; only the newest moves).
#[derive(Serialize)]
pub(super) struct Body {
    model: String,
    max_tokens: u32,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    system: Value,
    messages: Vec<Value>,
}

/// The `cache_control` of a breakpoint, if the configuration asks for caching.
fn cache_control(config: &ProviderConfig) -> Option<Value> {
    match config.prompt_cache {
        PromptCache::Off => None,
        PromptCache::Auto => Some(json!({"type": "ephemeral"})),
        PromptCache::OneHour => Some(json!({"type": "ephemeral", "ttl": "1h"})),
    }
}

/// Marks the last block of `content` that may carry a breakpoint (not reasoning).
fn mark_last(content: &mut [Value], control: &Value) {
    let block = content
        .iter_mut()
        .rev()
        .find(|b| !matches!(b["type"].as_str(), Some("thinking" | "redacted_thinking")));
    if let Some(Value::Object(block)) = block {
        block.insert("cache_control".to_string(), control.clone());
    }
}

/// The request body.
#[expect(
    clippy::too_many_lines,
    reason = "one arm per chat message kind, then the request's fields: the wire format in one place"
)]
pub(super) fn request_body(req: &ChatRequest, config: &ProviderConfig) -> Body {
    let mut messages: Vec<(String, Vec<Value>)> = Vec::new();
    let mut push = |role: &str, blocks: Vec<Value>| {
        if blocks.is_empty() {
            return;
        }
        match messages.last_mut() {
            // The API wants roles to alternate: merge neighbours of one role.
            Some((last, content)) if last == role => content.extend(blocks),
            _ => messages.push((role.to_string(), blocks)),
        }
    };
    for message in req.messages {
        match message {
            ChatMessage::User { text, images } => {
                let mut blocks: Vec<Value> = images
                    .iter()
                    .map(|i| json!({"type": "image", "source": {"type": "base64", "media_type": i.mime, "data": i.data}}))
                    .collect();
                let text = if text.trim().is_empty() { "(empty)" } else { text };
                blocks.push(json!({"type": "text", "text": text}));
                push("user", blocks);
            }
            ChatMessage::Assistant { text, signed, tool_calls, .. } => {
                // Reasoning goes back exactly as signed, every block in order; unsigned
                // (cut-off) reasoning is dropped, as the API would refuse it.
                let mut blocks: Vec<Value> = signed
                    .iter()
                    .filter_map(|b| {
                        if b.redacted {
                            Some(json!({"type": "redacted_thinking", "data": b.thinking}))
                        } else if !b.signature.is_empty() {
                            Some(json!({"type": "thinking", "thinking": b.thinking, "signature": b.signature}))
                        } else {
                            None
                        }
                    })
                    .collect();
                // Whitespace-only text blocks are refused by the API.
                if !text.trim().is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    let input = serde_json::from_str::<Value>(&call.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    blocks.push(
                        json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}),
                    );
                }
                push("assistant", blocks);
            }
            ChatMessage::ToolResult { call_id, content, is_error, images } => {
                let content = if images.is_empty() {
                    json!(content)
                } else {
                    let mut blocks = vec![json!({"type": "text", "text": content})];
                    blocks.extend(images.iter().map(|i| {
                        json!({"type": "image", "source":
                            {"type": "base64", "media_type": i.mime, "data": i.data}})
                    }));
                    Value::Array(blocks)
                };
                push(
                    "user",
                    vec![
                        json!({"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error}),
                    ],
                )
            }
        }
    }
    let mut tools: Vec<Value> = req
        .tools
        .iter()
        .map(
            |t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}),
        )
        .collect();
    let control = cache_control(config);
    let assistant: Vec<bool> = messages.iter().map(|(role, _)| role == "assistant").collect();
    let marks = match &control {
        Some(_) => breakpoints(
            tools.len(),
            !req.system.is_empty(),
            messages.len(),
            previous_end(&assistant),
        ),
        None => Breakpoints::default(),
    };
    let mut system = json!(req.system);
    if let Some(control) = &control {
        if marks.tools
            && let Some(Value::Object(last)) = tools.last_mut()
        {
            last.insert("cache_control".to_string(), control.clone());
        }
        if marks.system {
            system = json!([{"type": "text", "text": req.system, "cache_control": control}]);
        }
    }
    let messages = messages
        .into_iter()
        .enumerate()
        .map(|(at, (role, mut content))| {
            if let Some(control) = &control
                && marks.on_message(at)
            {
                mark_last(&mut content, control);
            }
            json!({"role": role, "content": content})
        })
        .collect();
    let mut max_tokens = req.max_tokens;
    let mut thinking = None;
    if let Some(budget) = config.thinking_budget.filter(|b| *b > 0 && req.thinking) {
        // The budget counts inside max_tokens, which must stay larger.
        if max_tokens <= budget {
            max_tokens = budget.saturating_add(req.max_tokens);
        }
        thinking = Some(json!({"type": "enabled", "budget_tokens": budget}));
    }
    Body {
        model: req.model.to_string(),
        max_tokens,
        stream: true,
        thinking,
        tools,
        system,
        messages,
    }
}

#[cfg(test)]
mod tests {
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
        assert!(
            body["max_tokens"].as_u64().expect("ok") > 2048,
            "the budget fits inside max_tokens"
        );
        let roles: Vec<&Value> =
            body["messages"].as_array().expect("ok").iter().map(|m| &m["role"]).collect();
        // Tool results and the next prompt share one user turn.
        assert_eq!(roles, [&json!("user"), &json!("assistant"), &json!("user")]);
        let assistant = &body["messages"][1]["content"];
        assert_eq!(
            assistant[0],
            json!({"type": "thinking", "thinking": "plan", "signature": "sig"})
        );
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
}
