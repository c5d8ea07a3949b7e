//! A provider configuration for unit tests elsewhere in the crate.

use super::*;

/// A plain OpenAI-compatible endpoint on loopback.
pub(crate) fn provider_config() -> ProviderConfig {
    ProviderConfig {
        preset: "openai_compatible",
        api: ApiKind::OpenAiChat,
        base_url: "http://127.0.0.1:9/v1".into(),
        api_key: None,
        model: "m".into(),
        models: vec!["m".into()],
        retry: RetryPolicy {
            max_retries: 0,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(1),
            max_elapsed: Duration::from_secs(1),
        },
        timeouts: Timeouts {
            connect: Duration::from_secs(1),
            response: Duration::from_secs(1),
            idle: Duration::from_secs(1),
        },
        tls: None,
        thinking_budget: None,
        reasoning_effort: None,
        images: false,
        prompt_cache: super::PromptCache::Auto,
    }
}
