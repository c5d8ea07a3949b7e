//! Assembles streamed chunks into a `Completion`: text and reasoning forwarded as deltas,
//! tool-call fragments joined by index, finish reason and usage kept.

use std::borrow::Cow;

use super::shape::{Field, Shape};
use super::wire::{Chunk, ToolCallDelta, WholeReply, WireDelta};
use crate::history::ToolUse;
use crate::provider::stream::{Accumulate, AttemptError, Flow, read_event, read_whole};
use crate::provider::{Completion, Delta, FailureKind, Finish, Text, Usage};

/// How far past the known tool calls a streamed `index` may jump.
const MAX_INDEX_GAP: usize = 64;
/// Shapes a reply may teach (a server that changes its chunks' bytes all the time is read
/// the general way once these are spent).
const SHAPE_TRIES: u8 = 8;

#[derive(Default)]
pub(in crate::provider) struct Accumulator {
    text: String,
    thinking: String,
    calls: Vec<ToolUse>,
    pub(super) finish: Option<Finish>,
    usage: Option<Usage>,
    refused: bool,
    /// The shapes of the text chunks and of the reasoning chunks, once learned
    /// (`shape.rs`).
    shapes: Vec<Shape>,
    shape_tries: u8,
}

impl Accumulator {
    /// Whether nothing at all has been received yet.
    pub(super) fn is_empty(&self) -> bool {
        self.text.is_empty()
            && self.thinking.is_empty()
            && self.calls.is_empty()
            && self.finish.is_none()
            && self.usage.is_none()
    }

    pub(super) fn apply(
        &mut self,
        chunk: Chunk<'_>,
        on_delta: &mut dyn FnMut(Delta<'_>),
        streamed: &mut bool,
    ) -> Result<(), AttemptError> {
        if let Some(error) = chunk.error {
            let message = error
                .get("message")
                .and_then(|m| m.as_str())
                .map(str::to_string)
                .unwrap_or_else(|| error.to_string());
            return Err(AttemptError::Fatal(
                FailureKind::BadReply,
                format!("the LLM reported an error mid-stream: {message}"),
            ));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage.read());
        }
        for choice in chunk.choices.wanted() {
            if let Some(delta) = choice.delta {
                self.delta(delta, on_delta, streamed);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(finish_of(&reason));
            }
        }
        Ok(())
    }

    fn delta<'a>(
        &mut self,
        delta: WireDelta<'a>,
        on_delta: &mut dyn FnMut(Delta<'_>),
        streamed: &mut bool,
    ) {
        let text_of = |text: Option<Text<'a>>| text.map(|Text(t)| t);
        if let Some(thought) = text_of(delta.reasoning_content.or(delta.reasoning)) {
            self.piece(Field::Reasoning, thought, on_delta, streamed);
        }
        if let Some(text) = text_of(delta.content) {
            self.piece(Field::Content, text, on_delta, streamed);
        }
        if let Some(refusal) = text_of(delta.refusal).filter(|t| !t.is_empty()) {
            self.refused = true;
            self.text.push_str(&refusal);
            *streamed = true;
            on_delta(Delta::Text(refusal));
        }
        for (position, call) in delta.tool_calls.into_iter().flatten().enumerate() {
            self.tool_call(call, position);
        }
    }

    /// A piece of text or reasoning (an empty one is no piece).
    fn piece(
        &mut self,
        field: Field,
        text: Cow<'_, str>,
        on_delta: &mut dyn FnMut(Delta<'_>),
        streamed: &mut bool,
    ) {
        if text.is_empty() {
            return;
        }
        *streamed = true;
        match field {
            Field::Content => {
                self.text.push_str(&text);
                on_delta(Delta::Text(text));
            }
            Field::Reasoning => {
                self.thinking.push_str(&text);
                on_delta(Delta::Thought(text));
            }
        }
    }

    fn tool_call(&mut self, delta: ToolCallDelta, position: usize) {
        let index = match delta.index {
            Some(index) => index,
            // No index: a new id starts a new call, otherwise it continues the last one.
            None => match &delta.id {
                Some(id) if !id.is_empty() && !self.calls.iter().any(|c| &c.id == id) => {
                    self.calls.len()
                }
                _ => self.calls.len().saturating_sub(1).max(position.min(self.calls.len())),
            },
        };
        if index > self.calls.len() + MAX_INDEX_GAP {
            log::warn!("ignoring a tool-call fragment with index {index}");
            return;
        }
        while self.calls.len() <= index {
            self.calls.push(ToolUse {
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
            });
        }
        let call = &mut self.calls[index];
        if let Some(id) = delta.id.filter(|id| !id.is_empty()) {
            call.id = id;
        }
        if let Some(function) = delta.function {
            if let Some(name) = function.name.filter(|n| !n.is_empty()) {
                // Some servers repeat the whole name in every fragment, others split it.
                if call.name.is_empty() {
                    call.name = name;
                } else if call.name != name {
                    call.name.push_str(&name);
                }
            }
            if let Some(arguments) = function.arguments {
                call.arguments.push_str(&arguments);
            }
        }
    }

    pub(super) fn finish(self) -> Completion {
        let finish = match (self.refused, self.finish) {
            (true, _) => Finish::Refusal,
            (false, Some(finish)) => finish,
            (false, None) if !self.calls.is_empty() => Finish::ToolCalls,
            (false, None) => Finish::Stop,
        };
        let tool_calls = self.calls.into_iter().filter(|c| !c.name.is_empty()).collect();
        Completion {
            text: self.text,
            thinking: self.thinking,
            signed: Vec::new(),
            tool_calls,
            finish,
            usage: self.usage,
        }
    }

    pub(super) fn whole(
        mut self,
        reply: WholeReply<'_>,
        on_delta: &mut dyn FnMut(Delta<'_>),
    ) -> Completion {
        let mut streamed = false;
        if let Some(usage) = reply.usage {
            self.usage = Some(usage.read());
        }
        if let Some(choice) = reply.choices.into_iter().next() {
            let mut message = choice.message;
            // Whole replies number their tool calls by position.
            if let Some(calls) = &mut message.tool_calls {
                for (i, call) in calls.iter_mut().enumerate() {
                    call.index.get_or_insert(i);
                }
            }
            self.delta(message, on_delta, &mut streamed);
            self.finish = choice.finish_reason.as_deref().map(finish_of);
        }
        self.finish()
    }

    /// One event read the general way, as a whole chunk; with `learn`, a chunk of one text
    /// teaches its shape (the fuzz targets compare the two readings).
    pub(in crate::provider) fn general(
        &mut self,
        raw: &str,
        learn: bool,
        on_delta: &mut dyn FnMut(Delta<'_>),
        streamed: &mut bool,
    ) -> Result<Flow, AttemptError> {
        if raw.trim() == "[DONE]" {
            return Ok(Flow::Done);
        }
        let chunk: Chunk<'_> = read_event(raw)?;
        if learn
            && self.shape_tries < SHAPE_TRIES
            && let Some(shape) = Shape::learn(raw, &chunk)
        {
            // One shape per field: a newer one replaces the one that stopped fitting.
            self.shapes.retain(|known| known.field() != shape.field());
            self.shapes.push(shape);
            self.shape_tries += 1;
        }
        self.apply(chunk, on_delta, streamed)?;
        Ok(Flow::More)
    }
}

impl Accumulate for Accumulator {
    fn is_empty(&self) -> bool {
        Accumulator::is_empty(self)
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
        if let Some((field, text)) = self.shapes.iter().find_map(|shape| shape.read(raw)) {
            self.piece(field, text, on_delta, streamed);
            return Ok(Flow::More);
        }
        self.general(raw, true, on_delta, streamed)
    }

    fn whole(
        self,
        body: &str,
        on_delta: &mut dyn FnMut(Delta<'_>),
    ) -> Result<Completion, AttemptError> {
        let reply: WholeReply = read_whole(body)?;
        Ok(Accumulator::whole(self, reply, on_delta))
    }

    fn finish(self) -> Completion {
        Accumulator::finish(self)
    }
}

fn finish_of(reason: &str) -> Finish {
    match reason {
        "stop" | "end_turn" | "eos" => Finish::Stop,
        "tool_calls" | "function_call" => Finish::ToolCalls,
        "length" | "max_tokens" => Finish::Length,
        "content_filter" | "refusal" => Finish::Refusal,
        other => Finish::Other(other.to_string()),
    }
}

#[cfg(test)]
#[path = "accumulate_tests.rs"]
mod tests;
