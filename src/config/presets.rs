//! The provider presets: where each well-known endpoint lives, which wire API it speaks,
//! whether it needs a key, its default model, and the guess from a model's name.

use super::ApiKind;
use super::cache::CacheHint;

pub(super) struct Preset {
    pub name: &'static str,
    pub api: ApiKind,
    pub base_url: Option<&'static str>,
    pub needs_key: bool,
    pub default_model: Option<&'static str>,
    /// What its API takes to reuse a prompt prefix.
    pub cache: CacheHint,
}

const PRESETS: &[Preset] = &[
    Preset {
        name: "openai",
        api: ApiKind::OpenAiChat,
        base_url: Some("https://api.openai.com/v1"),
        needs_key: true,
        default_model: Some("gpt-4.1"),
        cache: CacheHint::Key,
    },
    Preset {
        name: "openai_compatible",
        api: ApiKind::OpenAiChat,
        base_url: None,
        needs_key: false,
        default_model: None,
        cache: CacheHint::None,
    },
    Preset {
        name: "ollama",
        api: ApiKind::OpenAiChat,
        base_url: Some("http://127.0.0.1:11434/v1"),
        needs_key: false,
        default_model: None,
        cache: CacheHint::None,
    },
    Preset {
        name: "lmstudio",
        api: ApiKind::OpenAiChat,
        base_url: Some("http://127.0.0.1:1234/v1"),
        needs_key: false,
        default_model: None,
        cache: CacheHint::None,
    },
    Preset {
        name: "vllm",
        api: ApiKind::OpenAiChat,
        base_url: Some("http://127.0.0.1:8000/v1"),
        needs_key: false,
        default_model: None,
        cache: CacheHint::None,
    },
    Preset {
        name: "llamacpp",
        api: ApiKind::OpenAiChat,
        base_url: Some("http://127.0.0.1:8080/v1"),
        needs_key: false,
        default_model: Some("default"),
        cache: CacheHint::CachePrompt,
    },
    Preset {
        name: "deepseek",
        api: ApiKind::OpenAiChat,
        base_url: Some("https://api.deepseek.com/v1"),
        needs_key: true,
        default_model: Some("deepseek-chat"),
        cache: CacheHint::None,
    },
    Preset {
        name: "dashscope",
        api: ApiKind::OpenAiChat,
        base_url: Some("https://dashscope.aliyuncs.com/compatible-mode/v1"),
        needs_key: true,
        default_model: Some("qwen-plus"),
        cache: CacheHint::None,
    },
    Preset {
        name: "openrouter",
        api: ApiKind::OpenAiChat,
        base_url: Some("https://openrouter.ai/api/v1"),
        needs_key: true,
        default_model: None,
        cache: CacheHint::None,
    },
    Preset {
        name: "anthropic",
        api: ApiKind::AnthropicMessages,
        base_url: Some("https://api.anthropic.com/v1"),
        needs_key: true,
        default_model: Some("claude-sonnet-4-5"),
        cache: CacheHint::None,
    },
    Preset {
        name: "anthropic_compatible",
        api: ApiKind::AnthropicMessages,
        base_url: None,
        needs_key: false,
        default_model: None,
        cache: CacheHint::None,
    },
];

/// Names of the provider presets, for messages and the man page.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

/// A provider name as it is compared: case, spaces, `-` and `.` do not matter.
pub(super) fn normalize(name: &str) -> String {
    name.trim()
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c == ' ' || c == '-' || c == '.' { '_' } else { c })
        .collect()
}

/// What the preset named `preset` takes to reuse a prompt prefix (`None` for a name that is
/// not a preset's).
pub fn cache_hint(preset: &str) -> CacheHint {
    find_preset(preset).map_or(CacheHint::None, |p| p.cache)
}

pub(super) fn find_preset(name: &str) -> Option<&'static Preset> {
    let norm = normalize(name);
    let norm = match norm.as_str() {
        "openapi_compatible" | "openai_compat" => "openai_compatible",
        "bailian" => "dashscope",
        "llama_cpp" => "llamacpp",
        "lm_studio" => "lmstudio",
        other => other,
    };
    PRESETS.iter().find(|p| p.name == norm)
}

pub(super) fn infer_preset(model: &str) -> Option<&'static Preset> {
    let m = model.to_ascii_lowercase();
    let openai = ["gpt-", "o1", "o3", "o4"];
    let name = if openai.iter().any(|p| m.starts_with(p)) {
        "openai"
    } else if m.starts_with("claude") {
        "anthropic"
    } else if m.starts_with("deepseek") {
        "deepseek"
    } else if m.starts_with("qwen") {
        "dashscope"
    } else {
        return None;
    };
    find_preset(name)
}
