//! LLM providers behind one blocking trait. Provider wire JSON stays private to each
//! implementation; the agent sees `ChatRequest`, `Delta` and `Completion`.

mod anthropic;
pub mod cache;
pub(crate) mod fuzz;
mod idle;
mod openai;
pub mod probe;
mod reader;
mod retry;
mod sse;
mod stream;

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use crate::cancel::CancelToken;
use crate::config::{ApiKind, ProviderConfig};
use crate::history::{ChatMessage, SignedThinking, ToolUse};

/// A tool as offered to the model.
#[derive(Debug, Clone)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments.
    pub parameters: Value,
}

/// One LLM request.
pub struct ChatRequest<'a> {
    /// Model id.
    pub model: &'a str,
    pub system: &'a str,
    /// The conversation so far.
    pub messages: &'a [ChatMessage],
    pub tools: &'a [ToolDef],
    /// Output cap.
    pub max_tokens: u32,
    /// What names the conversation to a provider that routes by it (`prompt_cache_key`):
    /// the session id.
    pub cache_key: Option<&'a str>,
    /// Whether the reasoning the configuration asks for is asked for (the session's
    /// `thinking` option): off, no thinking budget or reasoning effort is sent.
    pub thinking: bool,
}

/// A piece of the reply, delivered as it streams.
#[derive(Debug, Clone, PartialEq)]
pub enum Delta<'a> {
    /// Reply text (borrowed from the event it came in whenever it can be).
    Text(Cow<'a, str>),
    /// Reasoning.
    Thought(Cow<'a, str>),
    /// Nothing more is ready for now: pieces held back to be passed on together should go.
    /// (The stream's end is not announced this way: the caller delivers what it still
    /// holds when `stream` returns.)
    Flush,
}

/// A string read from provider JSON, borrowed from the event unless it has escapes (serde
/// borrows a `Cow` only as a field of its own, not inside an `Option`).
#[derive(Debug, serde::Deserialize)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

impl Delta<'_> {
    /// The same delta, owning its text.
    pub fn into_owned(self) -> Delta<'static> {
        match self {
            Delta::Text(text) => Delta::Text(Cow::Owned(text.into_owned())),
            Delta::Thought(text) => Delta::Thought(Cow::Owned(text.into_owned())),
            Delta::Flush => Delta::Flush,
        }
    }
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
    /// Prompt tokens, all of them (those read from and written to the cache included).
    pub input: u64,
    /// Completion tokens (reasoning included).
    pub output: u64,
    /// Of `input`, those read from the provider's cache.
    pub cached_read: u64,
    /// Of `input`, those written to the provider's cache.
    pub cached_write: u64,
    /// Of `output`, reasoning.
    pub thought: u64,
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
    Failed(Failure),
}

/// A failed call: what kind of failure, and a message for the user that names the cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What went wrong, for clients and scripts.
    pub kind: FailureKind,
    /// For the user.
    pub message: String,
}

/// The kinds of provider failure a client can tell apart (`data.kind` of the JSON-RPC
/// error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The key was refused (HTTP 401, 403).
    Auth,
    /// Too many requests (HTTP 429, or a rate-limit error event).
    RateLimit,
    /// The server failed or is overloaded (HTTP 5xx, an overloaded or API error event).
    Server,
    /// The server refused the request itself (another HTTP 4xx).
    Rejected,
    /// No connection could be made (DNS, refused, TLS).
    Connect,
    /// Nothing arrived in time.
    Timeout,
    /// The stream broke or ended before the reply was complete.
    CutStream,
    /// The reply could not be read (malformed events, an empty stream, an error event).
    BadReply,
    /// Something failed on our side.
    Internal,
}

impl Failure {
    /// A failure of `kind`.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Failure {
        Failure { kind, message: message.into() }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl FailureKind {
    /// The wire name.
    pub fn id(self) -> &'static str {
        match self {
            FailureKind::Auth => "auth",
            FailureKind::RateLimit => "rate_limit",
            FailureKind::Server => "server_error",
            FailureKind::Rejected => "rejected",
            FailureKind::Connect => "connect",
            FailureKind::Timeout => "timeout",
            FailureKind::CutStream => "cut_stream",
            FailureKind::BadReply => "bad_reply",
            FailureKind::Internal => "internal",
        }
    }

    /// The kind of an HTTP error status.
    pub fn of_status(code: u16) -> FailureKind {
        match code {
            401 | 403 => FailureKind::Auth,
            429 => FailureKind::RateLimit,
            408 => FailureKind::Timeout,
            500..=599 => FailureKind::Server,
            _ => FailureKind::Rejected,
        }
    }
}

/// An LLM endpoint.
pub trait Provider: Send + Sync {
    /// Streams one reply, calling `on_delta` for each piece as it arrives. Returns when the
    /// reply is complete, on failure, or at once when `cancel` fires.
    fn stream(
        &self,
        request: &ChatRequest,
        cancel: &CancelToken,
        on_delta: &mut dyn FnMut(Delta<'_>),
    ) -> Result<Completion, ProviderError>;
}

#[cfg(test)]
mod tests;

/// Builds the provider for a configuration.
pub fn build(config: &ProviderConfig) -> Arc<dyn Provider> {
    match config.api {
        ApiKind::OpenAiChat => Arc::new(openai::OpenAiChat::new(config.clone())),
        ApiKind::AnthropicMessages => Arc::new(anthropic::Messages::new(config.clone())),
    }
}
