//! The Anthropic request body: `system` apart, strictly alternating roles, tool results
//! in user turns, signed and redacted thinking sent back intact, the thinking budget.

use serde_json::{Value, json};

use crate::config::ProviderConfig;
use crate::history::ChatMessage;
use crate::provider::ChatRequest;

/// The request body.
pub(super) fn request_body(req: &ChatRequest, config: &ProviderConfig) -> Value {
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
    let tools: Vec<Value> = req
        .tools
        .iter()
        .map(
            |t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}),
        )
        .collect();
    let mut max_tokens = req.max_tokens;
    let mut body = json!({
        "model": req.model,
        "system": req.system,
        "messages": messages.into_iter().map(|(role, content)| json!({"role": role, "content": content})).collect::<Vec<_>>(),
        "stream": true,
    });
    if let Some(budget) = config.thinking_budget.filter(|b| *b > 0) {
        // The budget counts inside max_tokens, which must stay larger.
        if max_tokens <= budget {
            max_tokens = budget.saturating_add(req.max_tokens);
        }
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    }
    body["max_tokens"] = json!(max_tokens);
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    body
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
