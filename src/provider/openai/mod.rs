//! OpenAI-compatible chat completions (`POST {base}/chat/completions`, `stream: true`): the
//! wire format and its accumulator; the streaming, retries and watchdog are `stream`'s.

mod accumulate;
mod shape;
mod wire;

pub(super) use accumulate::Accumulator;
use wire::wire_request;

use super::stream::{self, Protocol};
use super::{ChatRequest, Completion, Delta, Failure, FailureKind, Provider, ProviderError};
use crate::cancel::CancelToken;
use crate::config::ProviderConfig;

/// The OpenAI-compatible provider.
pub struct OpenAiChat {
    config: ProviderConfig,
    url: String,
}

impl OpenAiChat {
    /// A provider for `config`.
    pub fn new(config: ProviderConfig) -> OpenAiChat {
        let url = format!("{}/chat/completions", config.base_url);
        OpenAiChat { config, url }
    }
}

impl Protocol for OpenAiChat {
    type Acc = Accumulator;

    fn url(&self) -> &str {
        &self.url
    }

    fn headers(
        &self,
        request: ureq::RequestBuilder<ureq::typestate::WithBody>,
    ) -> ureq::RequestBuilder<ureq::typestate::WithBody> {
        match &self.config.api_key {
            Some(key) => request.header("Authorization", &format!("Bearer {key}")),
            None => request,
        }
    }

    fn accumulator(&self) -> Accumulator {
        Accumulator::default()
    }
}

impl Provider for OpenAiChat {
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
    serde_json::to_vec(&wire_request(request, config)).map_err(|err| {
        let message = format!("cannot encode the request: {err}");
        ProviderError::Failed(Failure::new(FailureKind::Internal, message))
    })
}
