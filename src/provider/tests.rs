//! The request prefix is byte-stable: a request's bytes up to the end of its last message
//! are a prefix of every later request's of the same conversation, on both wire APIs, and
//! Anthropic's breakpoints are where `provider/cache.rs` puts them (never more than 4).

use serde_json::{Value, json};

use super::stream::Protocol;
use super::{ChatRequest, ToolDef, anthropic, openai};
use crate::config::{PromptCache, ProviderConfig};
use crate::history::ChatMessage;
use crate::history::fixtures::{calls, result, user};

fn tools() -> Vec<ToolDef> {
    ["read_file", "grep", "bash"]
        .iter()
        .map(|name| ToolDef {
            name: name.to_string(),
            description: format!("{name} does things"),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        })
        .collect()
}

/// Three prompts, each with a few rounds of tool calls, then a closing text.
fn conversation() -> Vec<ChatMessage> {
    let mut history = Vec::new();
    let mut n = 0;
    for prompt in 0..3 {
        history.push(user(&format!("prompt {prompt}: fix the module")));
        for round in 0..4 {
            let ids: Vec<String> = (0..=round % 2).map(|i| format!("c{n}_{i}")).collect();
            n += 1;
            let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
            history.push(calls(&refs));
            for id in &ids {
                history.push(result(id, &format!("output of {id}: {}", "x".repeat(40))));
            }
        }
        history.push(ChatMessage::Assistant {
            text: format!("done with prompt {prompt}"),
            thinking: String::new(),
            signed: Vec::new(),
            tool_calls: Vec::new(),
        });
    }
    history
}

/// Where the agent sends a request: after a prompt, or after the last result of a round.
fn request_points(history: &[ChatMessage]) -> Vec<usize> {
    (1..=history.len())
        .filter(|&n| {
            !matches!(history[n - 1], ChatMessage::Assistant { .. })
                && !matches!(history.get(n), Some(ChatMessage::ToolResult { .. }))
        })
        .collect()
}

fn config(preset: &'static str, cache: PromptCache) -> ProviderConfig {
    let mut config = crate::config::tests_support::provider_config();
    config.preset = preset;
    config.prompt_cache = cache;
    config
}

fn bytes(api: &str, messages: &[ChatMessage], config: &ProviderConfig) -> Vec<u8> {
    let tools = tools();
    let request = ChatRequest {
        model: "m",
        system: "You are a test. Date: 2026-01-02.",
        messages,
        tools: &tools,
        max_tokens: 100,
        cache_key: Some("0b0e7a44-5c1e-4d5f-9d0e-1f2a3b4c5d6e"),
        thinking: true,
    };
    let encoded = match api {
        "anthropic" => anthropic::Messages::new(config.clone()).encode(&request),
        _ => openai::OpenAiChat::new(config.clone()).encode(&request),
    };
    encoded.expect("encodes")
}

/// `later` starts with `earlier` up to the end of its last message (its `]}` cut).
fn extends(earlier: &[u8], later: &[u8]) -> bool {
    earlier.ends_with(b"]}") && later.starts_with(&earlier[..earlier.len() - 2])
}

/// The bytes without Anthropic's `cache_control` marks.
fn unmarked(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(bytes.to_vec()).expect("utf-8");
    let mut out = text;
    // Either key order: serde_json may keep insertion order or sort keys.
    let marks = [r#"{"type":"ephemeral","ttl":"1h"}"#, r#"{"ttl":"1h","type":"ephemeral"}"#];
    for mark in marks.iter().chain([&r#"{"type":"ephemeral"}"#]) {
        out = out
            .replace(&format!(r#","cache_control":{mark}"#), "")
            .replace(&format!(r#""cache_control":{mark},"#), "");
    }
    out.into_bytes()
}

#[test]
fn every_openai_request_extends_the_previous_ones_byte_for_byte() {
    let history = conversation();
    let points = request_points(&history);
    assert!(points.len() >= 15, "{points:?}");
    for preset in ["openai", "llamacpp", "vllm", "deepseek"] {
        let config = config(preset, PromptCache::Auto);
        let all: Vec<Vec<u8>> =
            points.iter().map(|&n| bytes("openai", &history[..n], &config)).collect();
        for (i, earlier) in all.iter().enumerate() {
            for later in &all[i + 1..] {
                assert!(extends(earlier, later), "{preset}: request {i} is not a prefix");
            }
        }
    }
}

#[test]
fn openai_presets_send_the_cache_hint_their_api_takes_and_nothing_else() {
    let history = conversation();
    let body = |preset, cache| -> Value {
        serde_json::from_slice(&bytes("openai", &history[..1], &config(preset, cache)))
            .expect("json")
    };
    let openai = body("openai", PromptCache::Auto);
    assert_eq!(openai["prompt_cache_key"], "0b0e7a44-5c1e-4d5f-9d0e-1f2a3b4c5d6e");
    assert!(openai.get("cache_prompt").is_none());
    let llama = body("llamacpp", PromptCache::Auto);
    assert_eq!(llama["cache_prompt"], true);
    assert!(llama.get("prompt_cache_key").is_none());
    for plain in ["vllm", "deepseek", "dashscope", "ollama", "openai_compatible"] {
        let sent = body(plain, PromptCache::Auto);
        assert!(
            sent.get("prompt_cache_key").is_none() && sent.get("cache_prompt").is_none(),
            "{plain}"
        );
    }
    let off = body("openai", PromptCache::Off);
    assert!(off.get("prompt_cache_key").is_none(), "off sends no hint");
    let off = body("llamacpp", PromptCache::Off);
    assert!(off.get("cache_prompt").is_none(), "off sends no hint");
}

#[test]
fn anthropic_requests_extend_the_previous_ones_but_for_the_moving_marks() {
    let history = conversation();
    let points = request_points(&history);
    let off = config("anthropic", PromptCache::Off);
    let plain: Vec<Vec<u8>> =
        points.iter().map(|&n| bytes("anthropic", &history[..n], &off)).collect();
    for (i, earlier) in plain.iter().enumerate() {
        assert!(!String::from_utf8_lossy(earlier).contains("cache_control"), "off marks nothing");
        for later in &plain[i + 1..] {
            assert!(extends(earlier, later), "request {i} is not a prefix");
        }
    }
    for cache in [PromptCache::Auto, PromptCache::OneHour] {
        let on = config("anthropic", cache);
        let marked: Vec<Vec<u8>> =
            points.iter().map(|&n| bytes("anthropic", &history[..n], &on)).collect();
        for (i, pair) in marked.windows(2).enumerate() {
            let (a, b) = (unmarked(&pair[0]), unmarked(&pair[1]));
            let at = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(0);
            assert!(
                extends(&a, &b),
                "request {i}: {}",
                String::from_utf8_lossy(&a[at.saturating_sub(80)..])
            );
            // The newest mark of a request stays where it was in the next one: the two
            // agree up to the message before it, marks included.
            let body: Value = serde_json::from_slice(&pair[0]).expect("json");
            let next: Value = serde_json::from_slice(&pair[1]).expect("json");
            let count = body["messages"].as_array().map_or(0, Vec::len);
            assert_eq!(body["messages"][count - 1], next["messages"][count - 1], "request {i}");
        }
    }
}

/// Where a body's marks are: "tools", "system", and the indexes of marked messages.
fn marks(body: &Value) -> (usize, Vec<String>) {
    let mut found = Vec::new();
    let mut total = 0;
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    for (i, tool) in tools.iter().enumerate() {
        if tool.get("cache_control").is_some() {
            total += 1;
            found.push(if i + 1 == tools.len() {
                "tools".to_string()
            } else {
                format!("tool {i}")
            });
        }
    }
    for block in body["system"].as_array().into_iter().flatten() {
        if block.get("cache_control").is_some() {
            total += 1;
            found.push("system".to_string());
        }
    }
    for (m, message) in body["messages"].as_array().into_iter().flatten().enumerate() {
        let blocks = message["content"].as_array().cloned().unwrap_or_default();
        for (b, block) in blocks.iter().enumerate() {
            if block.get("cache_control").is_some() {
                total += 1;
                let last = if b + 1 == blocks.len() { "" } else { " (not its last block)" };
                found.push(format!("message {m}{last}"));
            }
        }
    }
    (total, found)
}

#[test]
fn anthropic_breakpoints_sit_on_tools_system_newest_and_previous_end_never_more_than_four() {
    let history = conversation();
    let on = config("anthropic", PromptCache::Auto);
    for &n in &request_points(&history) {
        let body: Value =
            serde_json::from_slice(&bytes("anthropic", &history[..n], &on)).expect("json");
        let (total, found) = marks(&body);
        assert!(total <= 4, "{found:?}");
        let count = body["messages"].as_array().map_or(0, Vec::len);
        let mut want = vec!["tools".to_string(), "system".to_string()];
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| m["role"].as_str().unwrap_or(""))
            .collect();
        if let Some(last_reply) = roles.iter().rposition(|r| *r == "assistant").filter(|at| *at > 0)
        {
            want.push(format!("message {}", last_reply - 1));
        }
        want.push(format!("message {}", count - 1));
        assert_eq!(found, want, "request of {n} messages");
        assert_eq!(body["tools"][2]["cache_control"], json!({"type": "ephemeral"}));
    }
    let hour = config("anthropic", PromptCache::OneHour);
    let body: Value =
        serde_json::from_slice(&bytes("anthropic", &history[..3], &hour)).expect("json");
    assert_eq!(body["system"][0]["cache_control"], json!({"type": "ephemeral", "ttl": "1h"}));
}
