//! Anthropic Messages (`POST {base}/messages`, `stream: true`): the request (system apart,
//! strictly alternating roles, tool results in user turns, signed thinking sent back
//! intact) and the event accumulator (text, thinking and signatures, `tool_use` with
//! `input_json_delta`, usage from `message_start` and `message_delta`, stop reasons).
//! Streaming, retries and the watchdog are `transport`'s.

use serde_json::{Value, json};

use super::sse::SseEvent;
use super::transport::{self, Accumulate, AttemptError, Flow, Protocol, clip};
use super::{ChatRequest, Completion, Delta, Finish, Provider, ProviderError, Usage};
use crate::agent::history::{ChatMessage, ToolCallRecord};
use crate::cancel::CancelToken;
use crate::config::ProviderConfig;

/// The API version header this client speaks.
const API_VERSION: &str = "2023-06-01";

/// The Anthropic Messages provider.
pub struct Messages {
    config: ProviderConfig,
    url: String,
}

impl Messages {
    /// A provider for `config`.
    pub fn new(config: ProviderConfig) -> Messages {
        let url = format!("{}/messages", config.base_url);
        Messages { config, url }
    }
}

impl Protocol for Messages {
    type Acc = Acc;

    fn url(&self) -> &str {
        &self.url
    }

    fn headers(
        &self,
        request: ureq::RequestBuilder<ureq::typestate::WithBody>,
    ) -> ureq::RequestBuilder<ureq::typestate::WithBody> {
        let request = request.header("anthropic-version", API_VERSION);
        match &self.config.api_key {
            Some(key) => request.header("x-api-key", key),
            None => request,
        }
    }

    fn accumulator(&self) -> Acc {
        Acc::default()
    }
}

impl Provider for Messages {
    fn stream(
        &self,
        request: &ChatRequest,
        cancel: &CancelToken,
        on_delta: &mut dyn FnMut(Delta),
    ) -> Result<Completion, ProviderError> {
        let body = serde_json::to_vec(&request_body(request, &self.config))
            .map_err(|err| ProviderError::Failed(format!("cannot encode the request: {err}")))?;
        transport::stream(self, &self.config, &body, cancel, on_delta)
    }
}

/// The request body.
fn request_body(req: &ChatRequest, config: &ProviderConfig) -> Value {
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
            ChatMessage::Assistant { text, thinking, signature, tool_calls } => {
                let mut blocks = Vec::new();
                // Only signed thinking may be sent back; unsigned (partial) is dropped.
                if !signature.is_empty() {
                    blocks.push(
                        json!({"type": "thinking", "thinking": thinking, "signature": signature}),
                    );
                }
                if !text.is_empty() {
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
            ChatMessage::ToolResult { call_id, content, is_error } => push(
                "user",
                vec![
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error}),
                ],
            ),
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

#[derive(Debug, Clone, Copy)]
enum Block {
    Text,
    Thinking,
    Tool(usize),
    Other,
}

/// Assembles one reply from its events.
#[derive(Default)]
pub(super) struct Acc {
    text: String,
    thinking: String,
    signature: String,
    blocks: Vec<(u64, Block)>,
    calls: Vec<ToolCallRecord>,
    finish: Option<Finish>,
    usage: Option<Usage>,
}

impl Acc {
    fn block(&self, index: u64) -> Block {
        self.blocks.iter().rev().find(|(i, _)| *i == index).map_or(Block::Other, |(_, b)| *b)
    }

    fn text(&mut self, text: &str, on_delta: &mut dyn FnMut(Delta), streamed: &mut bool) {
        if !text.is_empty() {
            self.text.push_str(text);
            *streamed = true;
            on_delta(Delta::Text(text.to_string()));
        }
    }

    fn thought(&mut self, text: &str, on_delta: &mut dyn FnMut(Delta), streamed: &mut bool) {
        if !text.is_empty() {
            self.thinking.push_str(text);
            *streamed = true;
            on_delta(Delta::Thought(text.to_string()));
        }
    }

    fn usage(&mut self, usage: &Value) {
        let mut current = self.usage.unwrap_or_default();
        let input: u64 = ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]
            .iter()
            .filter_map(|k| usage.get(*k).and_then(Value::as_u64))
            .sum();
        if usage.get("input_tokens").is_some() {
            current.input = input;
        }
        if let Some(output) = usage.get("output_tokens").and_then(Value::as_u64) {
            current.output = output;
        }
        self.usage = Some(current);
    }

    /// A content block, whole (non-streamed replies) or as its start.
    fn start_block(
        &mut self,
        index: u64,
        block: &Value,
        on_delta: &mut dyn FnMut(Delta),
        streamed: &mut bool,
    ) {
        let kind = match block["type"].as_str() {
            Some("text") => {
                self.text(block["text"].as_str().unwrap_or(""), on_delta, streamed);
                Block::Text
            }
            Some("thinking") => {
                self.thought(block["thinking"].as_str().unwrap_or(""), on_delta, streamed);
                if let Some(signature) = block["signature"].as_str() {
                    self.signature = signature.to_string();
                }
                Block::Thinking
            }
            Some("tool_use") => {
                let input = &block["input"];
                let arguments = match input.as_object() {
                    Some(map) if !map.is_empty() => input.to_string(),
                    _ => String::new(),
                };
                self.calls.push(ToolCallRecord {
                    id: block["id"].as_str().unwrap_or("").to_string(),
                    name: block["name"].as_str().unwrap_or("").to_string(),
                    arguments,
                });
                Block::Tool(self.calls.len() - 1)
            }
            _ => Block::Other,
        };
        self.blocks.push((index, kind));
    }
}

fn finish_of(reason: &str) -> Finish {
    match reason {
        "end_turn" | "stop_sequence" => Finish::Stop,
        "tool_use" => Finish::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => Finish::Length,
        "refusal" => Finish::Refusal,
        other => Finish::Other(other.to_string()),
    }
}

impl Accumulate for Acc {
    fn is_empty(&self) -> bool {
        self.text.is_empty() && self.thinking.is_empty() && self.calls.is_empty()
    }

    fn has_finish(&self) -> bool {
        self.finish.is_some()
    }

    fn event(
        &mut self,
        event: SseEvent,
        on_delta: &mut dyn FnMut(Delta),
        streamed: &mut bool,
    ) -> Result<Flow, AttemptError> {
        let data: Value = serde_json::from_str(&event.data).map_err(|err| {
            AttemptError::Fatal(format!(
                "the LLM stream is not usable: malformed event ({err}): {}",
                clip(&event.data)
            ))
        })?;
        let index = data["index"].as_u64().unwrap_or(0);
        match data["type"].as_str().unwrap_or("") {
            "message_start" => self.usage(&data["message"]["usage"]),
            "content_block_start" => {
                self.start_block(index, &data["content_block"], on_delta, streamed)
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                match (delta["type"].as_str().unwrap_or(""), self.block(index)) {
                    ("text_delta", _) => {
                        self.text(delta["text"].as_str().unwrap_or(""), on_delta, streamed)
                    }
                    ("thinking_delta", _) => {
                        self.thought(delta["thinking"].as_str().unwrap_or(""), on_delta, streamed)
                    }
                    ("signature_delta", _) => {
                        self.signature.push_str(delta["signature"].as_str().unwrap_or(""));
                    }
                    ("input_json_delta", Block::Tool(call)) => {
                        self.calls[call]
                            .arguments
                            .push_str(delta["partial_json"].as_str().unwrap_or(""));
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.finish = Some(finish_of(reason));
                }
                self.usage(&data["usage"]);
            }
            "message_stop" => return Ok(Flow::Done),
            "error" => {
                let kind = data["error"]["type"].as_str().unwrap_or("error");
                let message = data["error"]["message"].as_str().unwrap_or("unknown error");
                let message = format!("the LLM reported an error mid-stream: {message} ({kind})");
                let transient =
                    matches!(kind, "overloaded_error" | "api_error" | "rate_limit_error");
                return Err(if transient && !*streamed {
                    AttemptError::Retryable { message, retry_after: None }
                } else {
                    AttemptError::Fatal(message)
                });
            }
            // "ping", "content_block_stop", and types added later.
            _ => {}
        }
        Ok(Flow::More)
    }

    fn whole(
        mut self,
        body: &str,
        on_delta: &mut dyn FnMut(Delta),
    ) -> Result<Completion, AttemptError> {
        let reply: Value = serde_json::from_str(body).map_err(|err| {
            AttemptError::Fatal(format!(
                "the LLM stream is not usable: unreadable JSON reply: {err}"
            ))
        })?;
        let mut streamed = false;
        for (i, block) in reply["content"].as_array().into_iter().flatten().enumerate() {
            self.start_block(i as u64, block, on_delta, &mut streamed);
        }
        if let Some(reason) = reply["stop_reason"].as_str() {
            self.finish = Some(finish_of(reason));
        }
        self.usage(&reply["usage"]);
        Ok(self.finish())
    }

    fn finish(self) -> Completion {
        let calls: Vec<ToolCallRecord> =
            self.calls.into_iter().filter(|c| !c.name.is_empty()).collect();
        let finish = match self.finish {
            Some(finish) => finish,
            None if !calls.is_empty() => Finish::ToolCalls,
            None => Finish::Stop,
        };
        Completion {
            text: self.text,
            thinking: self.thinking,
            signature: self.signature,
            tool_calls: calls,
            finish,
            usage: self.usage,
        }
    }
}

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod tests;
