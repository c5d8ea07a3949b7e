//! What tokens cost: a small dated table of the public list prices of the presets whose
//! prices are stable, under `settings.json`'s `pricing` (per model, per million tokens):
//!
//! ```json
//! {"pricing": {"my-model": {"input": 3.0, "cachedInput": 0.3, "cacheWrite": 3.75,
//!                           "output": 15.0, "currency": "USD"}}}
//! ```
//!
//! Prices are kept in integer micro-units of their currency per million tokens. Local
//! presets cost nothing; a price that is not known is `None`, never a guess.

use std::collections::BTreeMap;

use serde_json::Value;

use super::ProviderConfig;
use super::cache::PromptCache;

/// The settings key.
pub const KEY: &str = "pricing";

/// When the built-in prices were read from the providers' public price lists.
pub const PRICES_TAKEN: &str = "2025-11-24";

/// An ISO 4217 currency code (three capital letters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Currency([u8; 3]);

impl Currency {
    /// US dollars.
    pub const USD: Currency = Currency(*b"USD");

    /// A code of three capital ASCII letters.
    pub fn parse(code: &str) -> Option<Currency> {
        let bytes: [u8; 3] = code.as_bytes().try_into().ok()?;
        bytes.iter().all(u8::is_ascii_uppercase).then_some(Currency(bytes))
    }

    /// The code.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or("XXX")
    }
}

/// Prices per million tokens, in micro-units of `currency`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Price {
    /// Input read at full price.
    pub input: u64,
    /// Input read from the provider's cache.
    pub cached_input: u64,
    /// Input written to the cache.
    pub cache_write: u64,
    /// Output (reasoning included).
    pub output: u64,
    pub currency: Currency,
}

impl Price {
    /// Nothing to pay (a local model).
    pub const FREE: Price =
        Price { input: 0, cached_input: 0, cache_write: 0, output: 0, currency: Currency::USD };

    /// What a call costs, in micro-units: `full` input tokens at full price, `read` from
    /// the cache, `written` to it, and `output` tokens.
    pub fn cost(&self, full: u64, read: u64, written: u64, output: u64) -> u64 {
        let micro_tokens = u128::from(full) * u128::from(self.input)
            + u128::from(read) * u128::from(self.cached_input)
            + u128::from(written) * u128::from(self.cache_write)
            + u128::from(output) * u128::from(self.output);
        // Per million tokens, rounded to the nearest micro-unit.
        u64::try_from((micro_tokens + 500_000) / 1_000_000).unwrap_or(u64::MAX)
    }
}

/// `(model, input, cached input, 5-minute cache write, output)` in micro-USD per million
/// tokens. A row names a model and its dated snapshots (`<model>-<date>`).
type Row = (&'static str, u64, u64, u64, u64);

const ANTHROPIC: &[Row] = &[
    ("claude-opus-4-5", 5_000_000, 500_000, 6_250_000, 25_000_000),
    ("claude-opus-4-1", 15_000_000, 1_500_000, 18_750_000, 75_000_000),
    ("claude-opus-4", 15_000_000, 1_500_000, 18_750_000, 75_000_000),
    ("claude-sonnet-4-5", 3_000_000, 300_000, 3_750_000, 15_000_000),
    ("claude-sonnet-4", 3_000_000, 300_000, 3_750_000, 15_000_000),
    ("claude-3-7-sonnet", 3_000_000, 300_000, 3_750_000, 15_000_000),
    ("claude-haiku-4-5", 1_000_000, 100_000, 1_250_000, 5_000_000),
    ("claude-3-5-haiku", 800_000, 80_000, 1_000_000, 4_000_000),
];

/// OpenAI charges nothing extra to write its cache.
const OPENAI: &[Row] = &[
    ("gpt-5", 1_250_000, 125_000, 1_250_000, 10_000_000),
    ("gpt-5-mini", 250_000, 25_000, 250_000, 2_000_000),
    ("gpt-5-nano", 50_000, 5_000, 50_000, 400_000),
    ("gpt-4.1", 2_000_000, 500_000, 2_000_000, 8_000_000),
    ("gpt-4.1-mini", 400_000, 100_000, 400_000, 1_600_000),
    ("gpt-4.1-nano", 100_000, 25_000, 100_000, 400_000),
    ("gpt-4o", 2_500_000, 1_250_000, 2_500_000, 10_000_000),
    ("gpt-4o-mini", 150_000, 75_000, 150_000, 600_000),
    ("o3", 2_000_000, 500_000, 2_000_000, 8_000_000),
    ("o4-mini", 1_100_000, 275_000, 1_100_000, 4_400_000),
];

const DEEPSEEK: &[Row] = &[
    ("deepseek-chat", 280_000, 28_000, 280_000, 420_000),
    ("deepseek-reasoner", 280_000, 28_000, 280_000, 420_000),
];

/// Dated snapshots listed at another price than the model they are a snapshot of: no
/// price is better than its alias's.
const OTHER_PRICE: &[&str] = &["gpt-4o-2024-05-13"];

/// Presets that run on the user's own machine.
const LOCAL: &[&str] = &["ollama", "lmstudio", "vllm", "llamacpp"];

/// The prices in force: the settings' per model, else the built-in table of the preset.
#[derive(Debug, Clone, Default)]
pub struct Pricing {
    preset: &'static str,
    one_hour: bool,
    models: BTreeMap<String, Price>,
}

impl Pricing {
    /// The prices for `provider` with the settings' `models` over the table.
    pub fn new(
        provider: &std::result::Result<ProviderConfig, String>,
        models: BTreeMap<String, Price>,
    ) -> Pricing {
        let (preset, one_hour) = match provider {
            Ok(p) => (p.preset, p.prompt_cache == PromptCache::OneHour),
            Err(_) => ("", false),
        };
        Pricing { preset, one_hour, models }
    }

    /// What `model` costs, if that is known.
    pub fn price(&self, model: &str) -> Option<Price> {
        if let Some(price) = self.models.get(model) {
            return Some(*price);
        }
        if LOCAL.contains(&self.preset) {
            return Some(Price::FREE);
        }
        let rows = match self.preset {
            "anthropic" => ANTHROPIC,
            "openai" => OPENAI,
            "deepseek" => DEEPSEEK,
            _ => return None,
        };
        if OTHER_PRICE.contains(&model) {
            return None;
        }
        let (_, input, cached_input, write, output) =
            rows.iter().filter(|row| names(row.0, model)).max_by_key(|row| row.0.len())?;
        // Anthropic's one-hour cache writes cost twice the input price.
        let cache_write =
            if self.one_hour && self.preset == "anthropic" { input * 2 } else { *write };
        Some(Price {
            input: *input,
            cached_input: *cached_input,
            cache_write,
            output: *output,
            currency: Currency::USD,
        })
    }
}

/// Whether the row `name` prices `model`: the same name, or a dated snapshot of it
/// (`-20250929`, `-2025-04-14`).
fn names(name: &str, model: &str) -> bool {
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    match model.strip_prefix(name) {
        Some("") => true,
        Some(rest) => match rest.strip_prefix('-') {
            Some(date) if date.len() == 8 => digits(date),
            Some(date) if date.len() == 10 => {
                date.split('-').map(str::len).eq([4, 2, 2]) && digits(&date.replace('-', ""))
            }
            _ => false,
        },
        None => false,
    }
}

/// `pricing` of a settings file: an object keyed by model, each entry `input` and `output`
/// (required), `cachedInput` and `cacheWrite` (the input price when left out) and
/// `currency` (`USD` when left out), prices per million tokens. `Err`: what is wrong.
pub fn from_settings(value: &Value) -> std::result::Result<BTreeMap<String, Price>, String> {
    let Some(models) = value.as_object() else {
        return Err("pricing must be an object keyed by model name".to_string());
    };
    let mut out = BTreeMap::new();
    for (model, entry) in models {
        let at = format!("pricing.{model}");
        let Some(entry) = entry.as_object() else {
            return Err(format!("{at} must be an object"));
        };
        for key in entry.keys() {
            if !["input", "cachedInput", "cacheWrite", "output", "currency"].contains(&key.as_str())
            {
                return Err(format!(
                    "unknown key {at}.{key} (expected input, cachedInput, cacheWrite, output, \
                     currency)"
                ));
            }
        }
        let money = |key: &str| -> std::result::Result<Option<u64>, String> {
            let Some(v) = entry.get(key) else { return Ok(None) };
            match v.as_f64() {
                Some(n) if n.is_finite() && (0.0..=1_000_000.0).contains(&n) => {
                    Ok(Some((n * 1_000_000.0).round() as u64))
                }
                _ => Err(format!(
                    "{at}.{key} must be a price per million tokens, a number from 0 to 1000000"
                )),
            }
        };
        let (Some(input), Some(output)) = (money("input")?, money("output")?) else {
            return Err(format!("{at} needs both input and output prices"));
        };
        let currency = match entry.get("currency") {
            None => Currency::USD,
            Some(v) => v.as_str().and_then(Currency::parse).ok_or_else(|| {
                format!("{at}.currency must be an ISO 4217 code such as USD or EUR")
            })?,
        };
        let price = Price {
            input,
            cached_input: money("cachedInput")?.unwrap_or(input),
            cache_write: money("cacheWrite")?.unwrap_or(input),
            output,
            currency,
        };
        out.insert(model.clone(), price);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
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
}
