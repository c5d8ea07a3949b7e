//! What signing in and out changes in `settings.json` (for `iac-code login`, `iac-code
//! logout` and ACP's `logout`): the presets offered, a provider configuration built from
//! what the user typed (to test it before anything is kept), `store` (the active
//! `provider` and its section's `baseUrl`, `model` and `apiKey`, where `iac-code config
//! set` puts them) and `clear` (every stored `apiKey`, and the active provider with its
//! `baseUrl` and `model`). Both go through `manage::edit_root`: locked, checked, atomic,
//! 0600, every other setting kept.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::manage::{Change, edit_root, edit_section};
use super::presets::find_preset;
use super::settings::same_provider;
use super::{Env, ProviderConfig, preset_names};
use crate::error::{Error, Result};

/// A provider preset as `login` offers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PresetInfo {
    pub name: &'static str,
    /// Its default base URL, if it has one.
    pub base_url: Option<&'static str>,
    /// Whether it needs an API key.
    pub needs_key: bool,
    /// Its default model, if it has one.
    pub default_model: Option<&'static str>,
}

/// Every preset, in the order `login` lists them.
pub fn presets() -> Vec<PresetInfo> {
    preset_names().into_iter().filter_map(preset).collect()
}

/// The preset `name` stands for (aliases and spellings such as `lm-studio` included).
pub fn preset(name: &str) -> Option<PresetInfo> {
    find_preset(name).map(|p| PresetInfo {
        name: p.name,
        base_url: p.base_url,
        needs_key: p.needs_key,
        default_model: p.default_model,
    })
}

/// What a sign-in gives: the provider, where it is, the model and the key.
#[derive(Clone, PartialEq, Eq)]
pub struct Login {
    pub preset: &'static str,
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Login")
            .field("preset", &self.preset)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "(hidden)"))
            .finish()
    }
}

impl Login {
    /// The provider these values configure, with the rest (timeouts, a CA bundle) from
    /// `env`: what the test request is sent with. A value the server would refuse is
    /// `Error::Usage`.
    pub fn provider_config(&self, env: &dyn Env) -> Result<ProviderConfig> {
        struct Over<'a>(&'a Login, &'a dyn Env);
        impl Env for Over<'_> {
            fn get(&self, name: &str) -> Option<String> {
                match name {
                    "IAC_CODE_PROVIDER" => Some(self.0.preset.to_string()),
                    "IAC_CODE_BASE_URL" => Some(self.0.base_url.clone()),
                    "IAC_CODE_MODEL" => Some(self.0.model.clone()),
                    "IAC_CODE_API_KEY" => self.0.api_key.clone(),
                    "IAC_CODE_MODELS" | "IAC_CODE_THINKING_BUDGET" => None,
                    other => self.1.get(other),
                }
            }
        }
        match super::provider(&Over(self, env)) {
            Ok(Ok(config)) => Ok(config),
            Ok(Err(why)) => Err(Error::Usage(why)),
            Err(Error::Config(why)) => Err(Error::Usage(why)),
            Err(other) => Err(other),
        }
    }
}

/// Writes `login` to the settings file: `provider`, and `baseUrl`, `model` and `apiKey` (or
/// no `apiKey`, when there is none) in its section. Returns the file's path.
pub fn store(env: &dyn Env, login: &Login) -> Result<PathBuf> {
    edit_root(env, |root, path| {
        root.insert("provider".into(), Value::String(login.preset.into()));
        edit_section(root, login.preset, "baseUrl", Change::Set(&login.base_url), path)?;
        edit_section(root, login.preset, "model", Change::Set(&login.model), path)?;
        let key = match &login.api_key {
            Some(key) => Change::Set(key),
            None => Change::Unset,
        };
        edit_section(root, login.preset, "apiKey", key, path)?;
        Ok(Some(login.preset))
    })
}

/// What `clear` removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cleared {
    /// The settings file.
    pub path: PathBuf,
    /// The settings removed, as `provider` or `providers.<name>.<key>`.
    pub removed: Vec<String>,
}

/// Removes the stored credentials: every section's `apiKey`, the active `provider` and its
/// section's `baseUrl` and `model`. Every other setting stays; a file with nothing to
/// remove is not rewritten.
pub fn clear(env: &dyn Env) -> Result<Cleared> {
    let path = super::manage::settings_path(env)?;
    // A file with nothing to remove is left as it is (not even rewritten).
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Cleared { path, removed: Vec::new() });
        }
        Err(source) => return Err(Error::Io { path, source }),
    };
    if remove_credentials(&mut super::settings::parse(&text, &path)?).is_empty() {
        return Ok(Cleared { path, removed: Vec::new() });
    }
    let mut removed = Vec::new();
    let path = edit_root(env, |root, _| {
        removed = remove_credentials(root);
        Ok(None)
    })?;
    Ok(Cleared { path, removed })
}

/// The removal itself, on the file's top-level object; returns what it removed.
fn remove_credentials(root: &mut Map<String, Value>) -> Vec<String> {
    let mut removed = Vec::new();
    let active = match root.remove("provider") {
        Some(Value::String(name)) => {
            removed.push("provider".to_string());
            Some(name)
        }
        Some(other) => {
            root.insert("provider".into(), other);
            None
        }
        None => None,
    };
    let Some(Value::Object(providers)) = root.get_mut("providers") else { return removed };
    for (name, section) in providers.iter_mut() {
        let Some(section) = section.as_object_mut() else { continue };
        let is_active = active.as_deref().is_some_and(|a| same_provider(name, a));
        let keys: &[&str] = if is_active { &["apiKey", "baseUrl", "model"] } else { &["apiKey"] };
        for key in keys {
            if section.remove(*key).is_some() {
                removed.push(format!("providers.{name}.{key}"));
            }
        }
    }
    providers.retain(|_, section| section.as_object().is_none_or(|s| !s.is_empty()));
    if providers.is_empty() {
        root.remove("providers");
    }
    removed
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn clearing_removes_the_keys_and_the_active_provider_only() {
        let mut root = json!({
            "provider": "openai",
            "providers": {
                "openai": {"apiKey": "sk-1", "baseUrl": "http://x/v1", "model": "m",
                           "maxTokens": 100},
                "deepseek": {"apiKey": "sk-2", "model": "deepseek-chat"},
                "vllm": {"apiKey": "k"}
            },
            "webFetch": "ask",
            "permissions": {"allow": ["read_file"]}
        });
        let removed = remove_credentials(root.as_object_mut().unwrap());
        assert_eq!(
            root,
            json!({
                "providers": {"openai": {"maxTokens": 100}, "deepseek": {"model": "deepseek-chat"}},
                "webFetch": "ask",
                "permissions": {"allow": ["read_file"]}
            })
        );
        assert!(removed.contains(&"provider".to_string()));
        assert!(removed.contains(&"providers.vllm.apiKey".to_string()));
        assert_eq!(removed.len(), 6, "{removed:?}");
    }

    #[test]
    fn presets_are_listed_with_their_defaults() {
        let all = presets();
        assert_eq!(all.len(), preset_names().len());
        let openai = preset("OpenAI").unwrap();
        assert!(openai.needs_key && openai.base_url.is_some() && openai.default_model.is_some());
        assert_eq!(preset("lm-studio").map(|p| p.name), Some("lmstudio"));
        assert!(preset("nope").is_none());
    }

    #[test]
    fn a_login_is_checked_as_the_server_would_read_it() {
        struct NoEnv;
        impl Env for NoEnv {
            fn get(&self, _: &str) -> Option<String> {
                None
            }
        }
        let login = Login {
            preset: "openai",
            base_url: "ftp://nope".into(),
            model: "gpt-4.1".into(),
            api_key: Some("sk-secret".into()),
        };
        let err = login.provider_config(&NoEnv).unwrap_err();
        assert!(matches!(err, Error::Usage(_)), "{err}");
        let login = Login { base_url: "http://127.0.0.1:9/v1/".into(), ..login };
        let config = login.provider_config(&NoEnv).unwrap();
        assert_eq!(config.base_url, "http://127.0.0.1:9/v1");
        assert!(!format!("{login:?}").contains("sk-secret"), "the key is never shown");
        let keyless = Login { api_key: None, ..login };
        assert!(keyless.provider_config(&NoEnv).is_err(), "openai needs a key");
    }
}
