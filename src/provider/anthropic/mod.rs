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
use super::{ChatRequest, ProviderError};
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

    fn config(&self) -> &ProviderConfig {
        &self.config
    }

    fn encode(&self, request: &ChatRequest) -> Result<Vec<u8>, ProviderError> {
        stream::encode_json(&request_body(request, &self.config))
    }
}
