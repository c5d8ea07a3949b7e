//! Prompt caching: `IAC_CODE_PROMPT_CACHE` (`auto`, `off`, `1h`; `promptCache` in
//! `settings.json`) and what each preset's API takes to reuse a prompt's prefix (a
//! `prompt_cache_key`, llama.cpp's `cache_prompt`), the flag each preset carries.

use super::Env;
use crate::error::{Error, Result};

/// Whether and how requests ask the provider to cache their prefix.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PromptCache {
    /// Mark the prefix (Anthropic: 5-minute breakpoints; OpenAI-compatible: the preset's
    /// hint).
    #[default]
    Auto,
    /// Mark nothing, send no hint.
    Off,
    /// As `Auto`, with Anthropic's one-hour lifetime.
    OneHour,
}

/// What a preset's OpenAI-compatible API takes to reuse a prefix (besides the prefix being
/// byte-identical, which every server needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheHint {
    /// Nothing: the server caches on its own (vLLM, DeepSeek, DashScope) or not at all.
    None,
    /// `prompt_cache_key`: the session id routes the session's requests to one cache
    /// (OpenAI).
    Key,
    /// `cache_prompt: true` (llama.cpp's server).
    CachePrompt,
}

/// `IAC_CODE_PROMPT_CACHE`: `auto` (the default), `off` or `1h`.
pub(super) fn prompt_cache(env: &dyn Env) -> Result<PromptCache> {
    match env.get("IAC_CODE_PROMPT_CACHE").as_deref().map(str::trim) {
        None | Some("auto") => Ok(PromptCache::Auto),
        Some("off") => Ok(PromptCache::Off),
        Some("1h") => Ok(PromptCache::OneHour),
        Some(other) => Err(Error::Config(format!(
            "invalid IAC_CODE_PROMPT_CACHE '{other}': expected auto, off or 1h"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Map(HashMap<&'static str, &'static str>);
    impl Env for Map {
        fn get(&self, name: &str) -> Option<String> {
            self.0.get(name).map(|v| v.to_string())
        }
    }

    #[test]
    fn prompt_cache_reads_its_three_values_and_refuses_others() {
        let of = |v: Option<&'static str>| {
            let map = v.map(|v| HashMap::from([("IAC_CODE_PROMPT_CACHE", v)])).unwrap_or_default();
            prompt_cache(&Map(map))
        };
        assert_eq!(of(None).unwrap(), PromptCache::Auto);
        assert_eq!(of(Some("auto")).unwrap(), PromptCache::Auto);
        assert_eq!(of(Some("off")).unwrap(), PromptCache::Off);
        assert_eq!(of(Some("1h")).unwrap(), PromptCache::OneHour);
        let err = of(Some("5m")).unwrap_err().to_string();
        assert!(err.contains("IAC_CODE_PROMPT_CACHE") && err.contains("5m"), "{err}");
    }
}
