//! The OpenAI chat-completions wire format: request body and streamed chunk shapes. Private
//! to the provider; nothing here leaks upward.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::{CacheHint, PromptCache, ProviderConfig};
use crate::history::ChatMessage;
use crate::provider::{ChatRequest, Text};

/// The request body. Its fields are written in this order, the conversation last, so
/// that a request's bytes up to its last message are a prefix of the next request's: what
/// never changes comes first, and only messages are appended.
#[derive(Serialize)]
pub(super) struct WireRequest<'a> {
    model: &'a str,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    /// `IAC_CODE_REASONING_EFFORT` (low, medium, high) for reasoning models.
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'a str>,
    /// The session id, for APIs that route a conversation to one cache (OpenAI).
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    /// llama.cpp's server: keep the prompt's KV cache for the next request.
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_prompt: Option<bool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    messages: Vec<WireMessage<'a>>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Option<Content<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireToolCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

/// Plain text, or parts (text and images) for a prompt with images.
#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(&'a str),
    Parts(Vec<Value>),
}

#[derive(Serialize)]
struct WireToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireToolDef<'a>,
}

#[derive(Serialize)]
struct WireToolDef<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

/// An image as an OpenAI content part (a data URL).
fn image_part(image: &crate::history::Image) -> serde_json::Value {
    let url = format!("data:{};base64,{}", image.mime, image.data);
    serde_json::json!({"type": "image_url", "image_url": {"url": url}})
}

/// Builds the request body. OpenAI's own API wants `max_completion_tokens`; the many
/// compatible servers still expect `max_tokens`.
pub(super) fn wire_request<'a>(
    req: &'a ChatRequest,
    config: &'a ProviderConfig,
) -> WireRequest<'a> {
    let preset = config.preset;
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    messages.push(WireMessage {
        role: "system",
        content: Some(Content::Text(req.system)),
        tool_calls: Vec::new(),
        tool_call_id: None,
    });
    // Images of tool results: a tool message carries text only, so they follow the run of
    // tool messages in one user message.
    let mut tool_images: Vec<serde_json::Value> = Vec::new();
    for (i, message) in req.messages.iter().enumerate() {
        if let ChatMessage::ToolResult { images, .. } = message {
            tool_images.extend(images.iter().map(image_part));
        }
        let next_is_result =
            matches!(req.messages.get(i + 1), Some(ChatMessage::ToolResult { .. }));
        messages.push(match message {
            ChatMessage::User { text, images } => WireMessage {
                role: "user",
                content: Some(if images.is_empty() {
                    Content::Text(text)
                } else {
                    let mut parts = vec![serde_json::json!({"type": "text", "text": text})];
                    parts.extend(images.iter().map(image_part));
                    Content::Parts(parts)
                }),
                tool_calls: Vec::new(),
                tool_call_id: None,
            },
            ChatMessage::Assistant { text, tool_calls, .. } => WireMessage {
                role: "assistant",
                content: if text.is_empty() && !tool_calls.is_empty() {
                    None
                } else {
                    Some(Content::Text(text))
                },
                tool_calls: tool_calls
                    .iter()
                    .map(|c| WireToolCall {
                        id: &c.id,
                        kind: "function",
                        function: WireFunction {
                            name: &c.name,
                            arguments: if c.arguments.trim().is_empty() {
                                "{}"
                            } else {
                                &c.arguments
                            },
                        },
                    })
                    .collect(),
                tool_call_id: None,
            },
            ChatMessage::ToolResult { call_id, content, .. } => WireMessage {
                role: "tool",
                content: Some(Content::Text(content)),
                tool_calls: Vec::new(),
                tool_call_id: Some(call_id),
            },
        });
        if !next_is_result && !tool_images.is_empty() {
            let mut parts = vec![serde_json::json!({"type": "text",
                "text": "The images the tool calls above returned:"})];
            parts.append(&mut tool_images);
            messages.push(WireMessage {
                role: "user",
                content: Some(Content::Parts(parts)),
                tool_calls: Vec::new(),
                tool_call_id: None,
            });
        }
    }
    let tools = req
        .tools
        .iter()
        .map(|t| WireTool {
            kind: "function",
            function: WireToolDef {
                name: &t.name,
                description: &t.description,
                parameters: &t.parameters,
            },
        })
        .collect();
    let official = preset == "openai";
    let hint = match config.prompt_cache {
        PromptCache::Off => CacheHint::None,
        PromptCache::Auto | PromptCache::OneHour => crate::config::cache_hint(preset),
    };
    WireRequest {
        model: req.model,
        stream: true,
        stream_options: StreamOptions { include_usage: true },
        max_tokens: (!official).then_some(req.max_tokens),
        max_completion_tokens: official.then_some(req.max_tokens),
        reasoning_effort: config.reasoning_effort.as_deref().filter(|_| req.thinking),
        prompt_cache_key: req.cache_key.filter(|_| hint == CacheHint::Key),
        cache_prompt: (hint == CacheHint::CachePrompt).then_some(true),
        tools,
        messages,
    }
}

/// One streamed chunk, read in place: its text borrows from the event (no allocation unless
/// it has escapes) and the usual single choice needs no vector.
#[derive(Debug, Deserialize)]
pub(super) struct Chunk<'a> {
    #[serde(default, borrow)]
    pub choices: Choices<'a>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    #[serde(default)]
    pub error: Option<Value>,
}

/// The choices of a chunk that matter: those for the first completion (`index` 0 or
/// absent), in order; the others are skipped.
#[derive(Debug, Default)]
pub(super) struct Choices<'a> {
    first: Option<Choice<'a>>,
    more: Vec<Choice<'a>>,
}

impl<'a> Choices<'a> {
    /// The one wanted choice, if there is exactly one.
    pub fn only(&self) -> Option<&Choice<'a>> {
        if self.more.is_empty() { self.first.as_ref() } else { None }
    }

    pub fn wanted(self) -> impl Iterator<Item = Choice<'a>> {
        self.first.into_iter().chain(self.more)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Choices<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<Choice<'a>>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Choices<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of choices")
            }
            fn visit_seq<S: serde::de::SeqAccess<'de>>(
                self,
                mut seq: S,
            ) -> Result<Choices<'a>, S::Error> {
                let mut choices = Choices::default();
                while let Some(choice) = seq.next_element::<Choice<'a>>()? {
                    if choice.index.unwrap_or(0) != 0 {
                        continue;
                    }
                    match choices.first {
                        None => choices.first = Some(choice),
                        Some(_) => choices.more.push(choice),
                    }
                }
                Ok(choices)
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Choices<'a>, E> {
                Ok(Choices::default())
            }
        }
        deserializer.deserialize_any(Visit(std::marker::PhantomData))
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct Choice<'a> {
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default, borrow)]
    pub delta: Option<WireDelta<'a>>,
    #[serde(default, borrow)]
    pub finish_reason: Option<Cow<'a, str>>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct WireDelta<'a> {
    #[serde(default, borrow)]
    pub content: Option<Text<'a>>,
    #[serde(default, borrow)]
    pub reasoning_content: Option<Text<'a>>,
    #[serde(default, borrow)]
    pub reasoning: Option<Text<'a>>,
    #[serde(default, borrow)]
    pub refusal: Option<Text<'a>>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Deserialize)]
pub(super) struct ToolCallDelta {
    #[serde(default)]
    pub index: Option<usize>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
pub(super) struct FunctionDelta {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub arguments: Option<String>,
}

/// Usage as the OpenAI-compatible servers spell it: OpenAI's (and DashScope's, vLLM's,
/// llama.cpp's) `prompt_tokens_details.cached_tokens`, DeepSeek's
/// `prompt_cache_hit_tokens`, a bare `cached_tokens`; DashScope's explicit cache writes;
/// reasoning in `completion_tokens_details.reasoning_tokens`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    pub completion_tokens_details: Option<CompletionDetails>,
    #[serde(default)]
    pub prompt_cache_hit_tokens: Option<u64>,
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub(super) struct PromptDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub(super) struct CompletionDetails {
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}

impl WireUsage {
    /// The counts, cached and reasoning tokens as parts of the prompt and the completion.
    pub fn read(&self) -> crate::provider::Usage {
        let details = self.prompt_tokens_details.unwrap_or_default();
        let read = details
            .cached_tokens
            .or(self.prompt_cache_hit_tokens)
            .or(self.cached_tokens)
            .unwrap_or(0);
        let thought = self.completion_tokens_details.and_then(|d| d.reasoning_tokens).unwrap_or(0);
        crate::provider::Usage {
            input: self.prompt_tokens,
            output: self.completion_tokens,
            cached_read: read.min(self.prompt_tokens),
            cached_write: details.cache_creation_input_tokens.unwrap_or(0).min(self.prompt_tokens),
            thought: thought.min(self.completion_tokens),
        }
    }
}

/// A non-streamed reply (some servers ignore `stream: true`).
#[derive(Debug, Deserialize)]
pub(super) struct WholeReply<'a> {
    #[serde(default, borrow)]
    pub choices: Vec<WholeChoice<'a>>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
pub(super) struct WholeChoice<'a> {
    #[serde(default, borrow)]
    pub message: WireDelta<'a>,
    #[serde(default, borrow)]
    pub finish_reason: Option<Cow<'a, str>>,
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
