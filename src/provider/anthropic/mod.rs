//! Anthropic Messages (`POST {base}/messages`, `stream: true`): the request (system apart,
//! strictly alternating roles, tool results in user turns, signed thinking sent back
//! intact) and the event accumulator (text, thinking and signatures, `tool_use` with
//! `input_json_delta`, usage from `message_start` and `message_delta`, stop reasons).
//! Streaming, retries and the watchdog are `stream`'s.

mod accumulate;
mod wire;

pub(super) use accumulate::Acc;
use wire::request_body;

use super::stream::{self, Endpoint, Protocol};
use super::{ChatRequest, ProviderError};
use crate::config::ProviderConfig;

/// The API version header this client speaks.
const API_VERSION: &str = "2023-06-01";

/// The Anthropic Messages provider.
pub struct Messages(Endpoint);

impl Messages {
    /// A provider for `config`.
    pub fn new(config: ProviderConfig) -> Messages {
        Messages(Endpoint::new(config, "/messages"))
    }
}

impl Protocol for Messages {
    type Acc = Acc;

    fn endpoint(&self) -> &Endpoint {
        &self.0
    }

    fn headers(
        &self,
        request: ureq::RequestBuilder<ureq::typestate::WithBody>,
    ) -> ureq::RequestBuilder<ureq::typestate::WithBody> {
        let request = request.header("anthropic-version", API_VERSION);
        match &self.0.config.api_key {
            Some(key) => request.header("x-api-key", key),
            None => request,
        }
    }

    fn encode(&self, request: &ChatRequest) -> Result<Vec<u8>, ProviderError> {
        stream::encode_json(&request_body(request, &self.0.config))
    }
}
