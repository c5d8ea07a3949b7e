//! The one-token request that tells whether a provider answers: `iac-code login` before it
//! stores a key, and ACP's `authenticate`. The same wire code as a turn, one attempt, no
//! tools, no thinking, `max_tokens` 1.

use std::time::Duration;

use super::{ChatRequest, Failure, FailureKind, ProviderError, build};
use crate::cancel::CancelToken;
use crate::config::ProviderConfig;
use crate::history::ChatMessage;

/// How long the provider gets to answer the test request.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Sends one request of one output token to `config`'s model; `Ok` when a reply came.
pub fn one_token(config: &ProviderConfig, cancel: &CancelToken) -> Result<(), Failure> {
    let mut config = config.clone();
    config.retry.max_retries = 0;
    config.timeouts.response = config.timeouts.response.min(TIMEOUT);
    config.timeouts.idle = config.timeouts.idle.min(TIMEOUT);
    // A thinking budget would need more than one token.
    config.thinking_budget = None;
    config.reasoning_effort = None;
    let provider = build(&config);
    let messages = [ChatMessage::User { text: "Say OK.".to_string(), images: Vec::new() }];
    let request = ChatRequest {
        model: &config.model,
        system: "This is a connection test: answer with one word.",
        messages: &messages,
        tools: &[],
        max_tokens: 1,
        cache_key: None,
        thinking: false,
    };
    match provider.stream(&request, cancel, &mut |_| {}) {
        Ok(_) => Ok(()),
        Err(ProviderError::Failed(failure)) => Err(failure),
        Err(ProviderError::Cancelled) => {
            Err(Failure::new(FailureKind::Internal, "the test request was cancelled"))
        }
    }
}
