//! Tests of configuration from the environment: presets, limits and errors.

use super::*;
use std::collections::HashMap;

struct MapEnv(HashMap<&'static str, &'static str>);
impl Env for MapEnv {
    fn get(&self, name: &str) -> Option<String> {
        self.0.get(name).map(|v| v.to_string())
    }
}

fn config(vars: &[(&'static str, &'static str)]) -> Result<Config> {
    let mut map: HashMap<_, _> = vars.iter().copied().collect();
    map.insert("HOME", "/home/u");
    Config::from_env(&MapEnv(map))
}

#[test]
fn presets_fill_base_url_and_demand_keys() {
    let c =
        config(&[("IAC_CODE_PROVIDER", "Ollama"), ("IAC_CODE_MODEL", "llama3")]).expect("valid");
    let p = c.provider.expect("valid");
    assert_eq!(p.base_url, "http://127.0.0.1:11434/v1");
    assert_eq!(p.model, "llama3");
    let c = config(&[("IAC_CODE_PROVIDER", "openai")]).expect("valid");
    assert!(c.provider.expect_err("not configured").contains("IAC_CODE_API_KEY"));
    let c = config(&[]).expect("valid");
    assert!(c.provider.expect_err("not configured").contains("IAC_CODE_PROVIDER"));
    assert_eq!(c.config_dir, PathBuf::from("/home/u/.iac-code"));
}

#[test]
fn base_url_alone_means_openai_compatible() {
    let c =
        config(&[("IAC_CODE_BASE_URL", "http://h:1/v1/"), ("IAC_CODE_MODEL", "m")]).expect("valid");
    let p = c.provider.expect("valid");
    assert_eq!((p.preset, p.base_url.as_str()), ("openai_compatible", "http://h:1/v1"));
}

#[test]
fn bad_values_are_config_errors() {
    assert!(config(&[("IAC_CODE_PROVIDER", "nope")]).is_err());
    assert!(config(&[("IAC_CODE_MAX_TOKENS", "-1")]).is_err());
    assert!(config(&[("IAC_CODE_BASE_URL", "ftp://x")]).is_err());
    let c = config(&[("IAC_CODE_CONFIG_DIR", "~/cfg")]).expect("valid");
    assert_eq!(c.config_dir, PathBuf::from("/home/u/cfg"));
}

#[test]
fn extra_models_are_offered_once() {
    let c = config(&[
        ("IAC_CODE_BASE_URL", "http://h/v1"),
        ("IAC_CODE_MODEL", "a"),
        ("IAC_CODE_MODELS", "b, a,c"),
    ])
    .expect("valid");
    assert_eq!(c.provider.expect("valid").models, ["a", "b", "c"]);
}
