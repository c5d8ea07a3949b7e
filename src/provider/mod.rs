//! LLM providers behind one blocking trait. Provider wire JSON stays private to each
//! implementation; the agent sees `ChatRequest`, `Delta` and `Completion`.

mod anthropic;
mod openai;
mod retry;
mod sse;
mod stream;

use std::sync::Arc;

use serde_json::Value;

use crate::cancel::CancelToken;
use crate::config::{ApiKind, ProviderConfig};
use crate::history::{ChatMessage, SignedThinking, ToolUse};

/// A tool as offered to the model.
#[derive(Debug, Clone)]
pub struct ToolDef {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON schema of the arguments.
    pub parameters: Value,
}

/// One LLM request.
pub struct ChatRequest<'a> {
    /// Model id.
    pub model: &'a str,
    /// System prompt.
    pub system: &'a str,
    /// The conversation so far.
    pub messages: &'a [ChatMessage],
    /// Tools offered.
    pub tools: &'a [ToolDef],
    /// Output cap.
    pub max_tokens: u32,
}

/// A piece of the reply, delivered as it streams.
#[derive(Debug, Clone, PartialEq)]
pub enum Delta {
    /// Visible text.
    Text(String),
    /// Reasoning.
    Thought(String),
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    /// Natural end.
    Stop,
    /// It wants tools run.
    ToolCalls,
    /// It hit max_tokens.
    Length,
    /// It refused (content filter, refusal).
    Refusal,
    /// Anything else the server said.
    Other(String),
}

/// Token counts of one call as the provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens.
    pub input: u64,
    /// Completion tokens.
    pub output: u64,
}

/// A finished reply.
#[derive(Debug, Clone)]
pub struct Completion {
    /// All visible text.
    pub text: String,
    /// All reasoning.
    pub thinking: String,
    /// The reasoning as signed blocks (Anthropic), to send back intact; empty otherwise.
    pub signed: Vec<SignedThinking>,
    /// Tool calls, assembled.
    pub tool_calls: Vec<ToolUse>,
    /// Why it stopped.
    pub finish: Finish,
    /// Usage, if the provider reported it.
    pub usage: Option<Usage>,
}

/// Why a call produced no completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderError {
    /// The turn was cancelled; the connection was dropped.
    Cancelled,
    /// The call failed; the message is for the user and names the cause.
    Failed(String),
}

/// An LLM endpoint.
pub trait Provider: Send + Sync {
    /// Streams one reply, calling `on_delta` for each piece as it arrives. Returns when the
    /// reply is complete, on failure, or at once when `cancel` fires.
    fn stream(
        &self,
        request: &ChatRequest,
        cancel: &CancelToken,
        on_delta: &mut dyn FnMut(Delta),
    ) -> Result<Completion, ProviderError>;
}

/// Builds the provider for a configuration.
pub fn build(config: &ProviderConfig) -> Arc<dyn Provider> {
    match config.api {
        ApiKind::OpenAiChat => Arc::new(openai::OpenAiChat::new(config.clone())),
        ApiKind::AnthropicMessages => Arc::new(anthropic::Messages::new(config.clone())),
    }
}
