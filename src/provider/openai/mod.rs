//! OpenAI-compatible chat completions (`POST {base}/chat/completions`, `stream: true`): the
//! wire format and its accumulator; the streaming, retries and watchdog are `stream`'s.

mod accumulate;
mod shape;
mod wire;

pub(super) use accumulate::Accumulator;
use wire::wire_request;

use super::stream::{self, Endpoint, Protocol};
use super::{ChatRequest, ProviderError};
use crate::config::ProviderConfig;

/// The OpenAI-compatible provider.
pub struct OpenAiChat(Endpoint);

impl OpenAiChat {
    /// A provider for `config`.
    pub fn new(config: ProviderConfig) -> OpenAiChat {
        OpenAiChat(Endpoint::new(config, "/chat/completions"))
    }
}

impl Protocol for OpenAiChat {
    type Acc = Accumulator;

    fn endpoint(&self) -> &Endpoint {
        &self.0
    }

    fn headers(
        &self,
        request: ureq::RequestBuilder<ureq::typestate::WithBody>,
    ) -> ureq::RequestBuilder<ureq::typestate::WithBody> {
        match &self.0.config.api_key {
            Some(key) => request.header("Authorization", &format!("Bearer {key}")),
            None => request,
        }
    }

    fn encode(&self, request: &ChatRequest) -> Result<Vec<u8>, ProviderError> {
        stream::encode_json(&wire_request(request, &self.0.config))
    }
}
