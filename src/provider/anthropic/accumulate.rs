//! Assembles one Anthropic reply from its events: text, thinking blocks with their
//! signatures, redacted thinking, `tool_use` with `input_json_delta`, usage from
//! `message_start` and `message_delta`, stop reasons, and errors mid-stream.

use std::borrow::Cow;

use serde_json::Value;

use crate::history::{SignedThinking, ToolUse};
use crate::provider::Text;
use crate::provider::stream::{Accumulate, AttemptError, Flow, read_event, read_whole};
use crate::provider::{Completion, Delta, FailureKind, Finish, Usage};

#[derive(Debug, Clone, Copy)]
enum Block {
    Text,
    /// Reasoning, at this position of `Acc::signed`.
    Thinking(usize),
    Tool(usize),
    Other,
}

/// The shape of a `content_block_delta`, read without a `Value`; any other event (or one
/// this does not fit) goes the general way.
#[derive(serde::Deserialize)]
struct FastDelta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    index: Option<u64>,
    #[serde(borrow)]
    delta: DeltaBody<'a>,
}

/// A `content_block_delta`'s body: its kind and whichever piece that kind carries.
#[derive(serde::Deserialize)]
struct DeltaBody<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<Text<'a>>,
    #[serde(borrow, default)]
    thinking: Option<Text<'a>>,
    #[serde(borrow, default)]
    signature: Option<Text<'a>>,
    #[serde(borrow, default)]
    partial_json: Option<Text<'a>>,
}

impl<'a> DeltaBody<'a> {
    /// The same body read leniently from a `Value` (a field of another type counts as absent).
    fn of(delta: &'a Value) -> DeltaBody<'a> {
        let piece = |name: &str| delta[name].as_str().map(|s| Text(Cow::Borrowed(s)));
        DeltaBody {
            kind: Cow::Borrowed(delta["type"].as_str().unwrap_or("")),
            text: piece("text"),
            thinking: piece("thinking"),
            signature: piece("signature"),
            partial_json: piece("partial_json"),
        }
    }
}

fn piece<'b>(text: &'b Option<Text<'_>>) -> &'b str {
    text.as_ref().map_or("", |Text(t)| t)
}

/// Assembles one reply from its events.
#[derive(Default)]
pub(in crate::provider) struct Acc {
    text: String,
    thinking: String,
    signed: Vec<SignedThinking>,
    blocks: Vec<(u64, Block)>,
    calls: Vec<ToolUse>,
    finish: Option<Finish>,
    usage: Option<Usage>,
}

impl Acc {
    fn block(&self, index: u64) -> Block {
        self.blocks.iter().rev().find(|(i, _)| *i == index).map_or(Block::Other, |(_, b)| *b)
    }

    /// One `content_block_delta`, however it was read.
    fn delta(
        &mut self,
        index: u64,
        body: &DeltaBody<'_>,
        on_delta: &mut dyn FnMut(Delta<'_>),
        streamed: &mut bool,
    ) {
        match (body.kind.as_ref(), self.block(index)) {
            ("text_delta", _) => self.text(piece(&body.text), on_delta, streamed),
            ("thinking_delta", block) => {
                let text = piece(&body.thinking);
                if let Block::Thinking(at) = block {
                    self.signed[at].thinking.push_str(text);
                }
                self.thought(text, on_delta, streamed)
            }
            ("signature_delta", Block::Thinking(at)) => {
                self.signed[at].signature.push_str(piece(&body.signature));
            }
            ("input_json_delta", Block::Tool(call)) => {
                self.calls[call].arguments.push_str(piece(&body.partial_json));
            }
            _ => {}
        }
    }

    fn text(&mut self, text: &str, on_delta: &mut dyn FnMut(Delta<'_>), streamed: &mut bool) {
        if !text.is_empty() {
            self.text.push_str(text);
            *streamed = true;
            on_delta(Delta::Text(Cow::Borrowed(text)));
        }
    }

    fn thought(&mut self, text: &str, on_delta: &mut dyn FnMut(Delta<'_>), streamed: &mut bool) {
        if !text.is_empty() {
            self.thinking.push_str(text);
            *streamed = true;
            on_delta(Delta::Thought(Cow::Borrowed(text)));
        }
    }

    /// Usage from `message_start` or `message_delta`. A later event may repeat a
    /// field as zero or leave it out; only real counts replace earlier ones.
    fn usage(&mut self, usage: &Value) {
        let mut current = self.usage.unwrap_or_default();
        let input: u64 = ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]
            .iter()
            .filter_map(|k| usage.get(*k).and_then(Value::as_u64))
            .sum();
        if input > 0 {
            current.input = input;
        }
        let count = |key: &str| usage.get(key).and_then(Value::as_u64).filter(|n| *n > 0);
        if let Some(read) = count("cache_read_input_tokens") {
            current.cached_read = read;
        }
        if let Some(written) = count("cache_creation_input_tokens") {
            current.cached_write = written;
        }
        if let Some(output) = usage.get("output_tokens").and_then(Value::as_u64).filter(|n| *n > 0)
        {
            current.output = output;
        }
        if usage.is_object() || self.usage.is_some() {
            self.usage = Some(current);
        }
    }

    /// A content block, whole (non-streamed replies) or as its start.
    fn start_block(
        &mut self,
        index: u64,
        block: &Value,
        on_delta: &mut dyn FnMut(Delta<'_>),
        streamed: &mut bool,
    ) {
        let kind = match block["type"].as_str() {
            Some("text") => {
                self.text(block["text"].as_str().unwrap_or(""), on_delta, streamed);
                Block::Text
            }
            Some("thinking") => {
                let thinking = block["thinking"].as_str().unwrap_or("");
                self.thought(thinking, on_delta, streamed);
                self.signed.push(SignedThinking {
                    thinking: thinking.to_string(),
                    signature: block["signature"].as_str().unwrap_or("").to_string(),
                    redacted: false,
                });
                Block::Thinking(self.signed.len() - 1)
            }
            Some("redacted_thinking") => {
                // Opaque: not shown, but sent back as it came.
                self.signed.push(SignedThinking {
                    thinking: block["data"].as_str().unwrap_or("").to_string(),
                    signature: String::new(),
                    redacted: true,
                });
                Block::Other
            }
            Some("tool_use") => {
                let input = &block["input"];
                let arguments = match input.as_object() {
                    Some(map) if !map.is_empty() => input.to_string(),
                    _ => String::new(),
                };
                self.calls.push(ToolUse {
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

pub(super) fn finish_of(reason: &str) -> Finish {
    match reason {
        "end_turn" | "stop_sequence" => Finish::Stop,
        "tool_use" => Finish::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => Finish::Length,
        "refusal" => Finish::Refusal,
        other => Finish::Other(other.to_string()),
    }
}

impl Acc {
    /// One event read the general way, as a `Value` (the fuzz targets compare it with the
    /// borrowed reading of deltas).
    pub(in crate::provider) fn general(
        &mut self,
        raw: &str,
        on_delta: &mut dyn FnMut(Delta<'_>),
        streamed: &mut bool,
    ) -> Result<Flow, AttemptError> {
        let data: Value = read_event(raw)?;
        let index = data["index"].as_u64().unwrap_or(0);
        match data["type"].as_str().unwrap_or("") {
            "message_start" => self.usage(&data["message"]["usage"]),
            "content_block_start" => {
                self.start_block(index, &data["content_block"], on_delta, streamed)
            }
            "content_block_delta" => {
                self.delta(index, &DeltaBody::of(&data["delta"]), on_delta, streamed);
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
                let kind = match kind {
                    "rate_limit_error" => FailureKind::RateLimit,
                    "overloaded_error" | "api_error" => FailureKind::Server,
                    "authentication_error" | "permission_error" => FailureKind::Auth,
                    _ => FailureKind::BadReply,
                };
                return Err(if transient && !*streamed {
                    AttemptError::Retryable { kind, message, retry_after: None }
                } else {
                    AttemptError::Fatal(kind, message)
                });
            }
            // "ping", "content_block_stop", and types added later.
            _ => {}
        }
        Ok(Flow::More)
    }
}

impl Accumulate for Acc {
    fn is_empty(&self) -> bool {
        self.text.is_empty() && self.signed.is_empty() && self.calls.is_empty()
    }

    fn has_finish(&self) -> bool {
        self.finish.is_some()
    }

    fn event(
        &mut self,
        raw: &str,
        on_delta: &mut dyn FnMut(Delta<'_>),
        streamed: &mut bool,
    ) -> Result<Flow, AttemptError> {
        // Nearly every event of a long reply is a delta: read those into borrowed fields
        // (no allocation unless the text has escapes) instead of a `Value` tree of maps and
        // strings, which costs ten allocations an event.
        if let Ok(fast) = serde_json::from_str::<FastDelta<'_>>(raw)
            && fast.kind == "content_block_delta"
        {
            self.delta(fast.index.unwrap_or(0), &fast.delta, on_delta, streamed);
            return Ok(Flow::More);
        }
        self.general(raw, on_delta, streamed)
    }

    fn whole(
        mut self,
        body: &str,
        on_delta: &mut dyn FnMut(Delta<'_>),
    ) -> Result<Completion, AttemptError> {
        let reply: Value = read_whole(body)?;
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
        let calls: Vec<ToolUse> = self.calls.into_iter().filter(|c| !c.name.is_empty()).collect();
        let finish = match self.finish {
            Some(finish) => finish,
            None if !calls.is_empty() => Finish::ToolCalls,
            None => Finish::Stop,
        };
        Completion {
            text: self.text,
            thinking: self.thinking,
            signed: self.signed,
            tool_calls: calls,
            finish,
            usage: self.usage,
        }
    }
}

#[cfg(test)]
#[path = "accumulate_tests.rs"]
mod tests;
