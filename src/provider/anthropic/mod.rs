//! Anthropic Messages (`POST {base}/messages`, `stream: true`): the request (system apart,
//! strictly alternating roles, tool results in user turns, signed thinking sent back
//! intact) and the event accumulator (text, thinking and signatures, `tool_use` with
//! `input_json_delta`, usage from `message_start` and `message_delta`, stop reasons).
//! Streaming, retries and the watchdog are `stream`'s.

mod accumulate;
mod wire;

pub(super) use accumulate::Acc;
use wire::request_body;

use super::stream::{self, Protocol};
use super::{ChatRequest, Completion, Delta, Failure, FailureKind, Provider, ProviderError};
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
        on_delta: &mut dyn FnMut(Delta<'_>),
    ) -> Result<Completion, ProviderError> {
        let body = encode(request, &self.config)?;
        stream::stream(self, &self.config, &body, cancel, on_delta)
    }
}

/// The request's bytes, as sent.
pub(super) fn encode(
    request: &ChatRequest,
    config: &ProviderConfig,
) -> Result<Vec<u8>, ProviderError> {
    serde_json::to_vec(&request_body(request, config)).map_err(|err| {
        let message = format!("cannot encode the request: {err}");
        ProviderError::Failed(Failure::new(FailureKind::Internal, message))
    })
}
