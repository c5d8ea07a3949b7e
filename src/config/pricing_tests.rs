//! Tests of prices: the table, dated snapshots, local presets, settings over the table and
//! their validation.

use serde_json::json;

use super::*;

fn pricing(preset: &'static str, models: BTreeMap<String, Price>) -> Pricing {
    let mut config = crate::config::tests_support::provider_config();
    config.preset = preset;
    Pricing::new(&Ok(config), models)
}

#[test]
fn the_table_prices_its_presets_models_and_their_dated_snapshots() {
    let anthropic = pricing("anthropic", BTreeMap::new());
    let sonnet = anthropic.price("claude-sonnet-4-5").expect("listed");
    assert_eq!(
        (sonnet.input, sonnet.cached_input, sonnet.cache_write),
        (3_000_000, 300_000, 3_750_000)
    );
    assert_eq!(anthropic.price("claude-sonnet-4-5-20250929"), Some(sonnet), "a dated snapshot");
    // The longest name wins: opus 4.5 is not opus 4.
    assert_eq!(anthropic.price("claude-opus-4-5-20251101").map(|p| p.input), Some(5_000_000));
    assert_eq!(anthropic.price("claude-opus-4-20250514").map(|p| p.input), Some(15_000_000));
    assert_eq!(anthropic.price("claude-sonnet-4-5-custom"), None, "not a date");
    let openai = pricing("openai", BTreeMap::new());
    assert_eq!(openai.price("gpt-4.1-mini").map(|p| p.input), Some(400_000));
    assert_eq!(openai.price("gpt-4.1-2025-04-14").map(|p| p.input), Some(2_000_000));
    assert_eq!(openai.price("claude-sonnet-4-5"), None, "each preset its own rows");
    assert_eq!(openai.price("gpt-4o-2024-08-06").map(|p| p.input), Some(2_500_000));
    assert_eq!(openai.price("gpt-4o-2024-05-13"), None, "a snapshot listed at its own price");
}

#[test]
fn local_presets_cost_nothing_and_unknown_ones_have_no_price() {
    for local in ["ollama", "vllm", "llamacpp", "lmstudio"] {
        assert_eq!(pricing(local, BTreeMap::new()).price("anything"), Some(Price::FREE));
    }
    for unknown in ["openai_compatible", "openrouter", "anthropic_compatible", "dashscope"] {
        assert_eq!(pricing(unknown, BTreeMap::new()).price("gpt-4.1"), None, "{unknown}");
    }
    assert_eq!(Pricing::new(&Err("none".into()), BTreeMap::new()).price("gpt-4.1"), None);
}

#[test]
fn one_hour_cache_writes_cost_twice_the_input() {
    let mut config = crate::config::tests_support::provider_config();
    config.preset = "anthropic";
    config.prompt_cache = PromptCache::OneHour;
    let price = Pricing::new(&Ok(config), BTreeMap::new()).price("claude-haiku-4-5");
    assert_eq!(price.map(|p| p.cache_write), Some(2_000_000));
}

#[test]
fn settings_override_the_table_per_model() {
    let value = json!({"my-model": {"input": 3.0, "cachedInput": 0.3, "cacheWrite": 3.75,
        "output": 15.0, "currency": "EUR"}, "claude-sonnet-4-5": {"input": 1, "output": 2}});
    let models = from_settings(&value).expect("valid");
    let prices = pricing("openai_compatible", models.clone());
    let mine = prices.price("my-model").expect("set");
    assert_eq!(mine.currency.as_str(), "EUR");
    assert_eq!(
        (mine.input, mine.cached_input, mine.cache_write, mine.output),
        (3_000_000, 300_000, 3_750_000, 15_000_000)
    );
    let over = pricing("anthropic", models).price("claude-sonnet-4-5").expect("set");
    assert_eq!(
        (over.input, over.cached_input, over.cache_write),
        (1_000_000, 1_000_000, 1_000_000)
    );
    assert_eq!(over.currency, Currency::USD);
}

#[test]
fn bad_pricing_settings_are_refused_with_the_place() {
    for (value, says) in [
        (json!([]), "object keyed by model"),
        (json!({"m": 3}), "pricing.m must be an object"),
        (json!({"m": {"input": 1}}), "needs both input and output"),
        (json!({"m": {"input": -1, "output": 1}}), "pricing.m.input"),
        (json!({"m": {"input": "3", "output": 1}}), "pricing.m.input"),
        (json!({"m": {"input": 1, "output": 1, "currency": "usd"}}), "pricing.m.currency"),
        (json!({"m": {"input": 1, "output": 1, "cache": 1}}), "unknown key pricing.m.cache"),
    ] {
        let err = from_settings(&value).expect_err("refused");
        assert!(err.contains(says), "{value}: {err}");
    }
}

#[test]
fn a_cost_is_rounded_to_the_micro_unit_without_overflow() {
    let price = Price {
        input: 3_000_000,
        cached_input: 300_000,
        cache_write: 3_750_000,
        output: 15_000_000,
        currency: Currency::USD,
    };
    assert_eq!(price.cost(1_000_000, 0, 0, 0), 3_000_000);
    assert_eq!(price.cost(1, 0, 0, 0), 3, "three micro-dollars a token");
    assert_eq!(price.cost(0, 1, 0, 0), 0, "0.3 rounds down");
    assert_eq!(price.cost(0, 0, 1, 0), 4, "3.75 rounds up");
    assert!(price.cost(u64::MAX, u64::MAX, u64::MAX, u64::MAX) == u64::MAX);
}
