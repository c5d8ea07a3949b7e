//! The settings file, `<config dir>/settings.json`: the active provider and, per provider,
//! its base URL, key, model, models offered, limits, thinking, images and CA bundle.
//! Environment variables override it; `permissions` (rules, `config/permissions.rs`),
//! `hooks` (`config/hooks.rs`) and `mcpServers` are kept whole, `pricing` is read by
//! `config/pricing.rs`. Unknown keys are errors (a typo must not be
//! silently ignored); a file holding a key that others may read is warned about.
//!
//! ```json
//! {"provider": "vllm",
//!  "providers": {"vllm": {"baseUrl": "http://gpu:8000/v1", "model": "Qwen/Qwen3-Coder",
//!                         "models": ["Qwen/Qwen3-Coder", "other"], "maxTokens": 8192}}}
//! ```

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Map, Value};

use super::{Env, hooks, permissions};
use crate::error::{Error, Result};
use crate::rules::{RuleSet, Source};

/// The settings file's name in the config dir.
pub const FILE: &str = "settings.json";

/// Per-provider keys and the variable each one stands for.
pub(super) const PROVIDER_KEYS: &[(&str, &str)] = &[
    ("baseUrl", "IAC_CODE_BASE_URL"),
    ("apiKey", "IAC_CODE_API_KEY"),
    ("model", "IAC_CODE_MODEL"),
    ("models", "IAC_CODE_MODELS"),
    ("maxTokens", "IAC_CODE_MAX_TOKENS"),
    ("contextWindow", "IAC_CODE_CONTEXT_WINDOW"),
    ("thinkingBudget", "IAC_CODE_THINKING_BUDGET"),
    ("reasoningEffort", "IAC_CODE_REASONING_EFFORT"),
    ("images", "IAC_CODE_IMAGES"),
    ("caFile", "IAC_CODE_CA_FILE"),
];

/// Top-level keys besides the provider's, and the variable each one stands for.
pub(super) const TOP_KEYS: &[(&str, &str)] = &[
    ("webFetch", "IAC_CODE_WEB_FETCH"),
    ("clientTools", "IAC_CODE_CLIENT_TOOLS"),
    ("clientMcp", "IAC_CODE_CLIENT_MCP"),
    ("mcpInternal", "IAC_CODE_MCP_INTERNAL"),
    ("sessionStore", "IAC_CODE_SESSION_STORE"),
    ("redisPrefix", "IAC_CODE_REDIS_PREFIX"),
    ("nodeId", "IAC_CODE_NODE_ID"),
    ("leaseTtl", "IAC_CODE_LEASE_TTL"),
    ("mcpToolsMaxBytes", "IAC_CODE_MCP_TOOLS_MAX_BYTES"),
    ("promptCache", "IAC_CODE_PROMPT_CACHE"),
    ("redact", "IAC_CODE_REDACT"),
];

/// The MCP servers' key (an object keyed by name, kept as JSON).
pub const MCP_SERVERS: &str = "mcpServers";

/// The environment, with the settings file underneath it.
pub(super) struct Layered<'a> {
    env: &'a dyn Env,
    file: HashMap<&'static str, String>,
    /// `mcpServers`, as written (read by the MCP client, which knows its shapes).
    pub(super) mcp_servers: Option<Value>,
    /// The rules of `permissions`.
    pub(super) permissions: RuleSet,
    /// The hooks of `hooks`.
    pub(super) hooks: Vec<hooks::HookSpec>,
    /// The prices of `pricing`, per model.
    pub(super) pricing: std::collections::BTreeMap<String, super::pricing::Price>,
    /// `redactPatterns` and `redactValues`.
    pub(super) redaction: [Vec<String>; 2],
}

impl Layered<'_> {
    /// The value the settings file gives `name`, if it gives one.
    pub(super) fn in_file(&self, name: &str) -> Option<String> {
        self.file.get(name).cloned()
    }
}

impl Env for Layered<'_> {
    fn get(&self, name: &str) -> Option<String> {
        self.env.get(name).or_else(|| self.file.get(name).cloned())
    }
}

/// Reads the settings file in `config_dir` (if there is one) under `env`.
pub(super) fn layered<'a>(env: &'a dyn Env, config_dir: &Path) -> Result<Layered<'a>> {
    let path = config_dir.join(FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            let (permissions, hooks) = (RuleSet::default(), Vec::new());
            let (file, pricing) = (HashMap::new(), Default::default());
            let redaction = Default::default();
            return Ok(Layered {
                env,
                file,
                mcp_servers: None,
                permissions,
                hooks,
                pricing,
                redaction,
            });
        }
        Err(err) => return Err(Error::Config(format!("{}: {err}", path.display()))),
    };
    let layered = from_value(env, &parse(&text, &path)?, &path)?;
    let shown = path.display();
    if layered.file.contains_key("IAC_CODE_API_KEY")
        && let Ok(meta) = std::fs::metadata(&path)
        && meta.permissions().mode() & 0o077 != 0
    {
        log::warn!("{shown} holds an API key and other users may read it: chmod 600 {shown}");
    }
    Ok(layered)
}

/// The settings file's text as its top-level object.
pub(super) fn parse(text: &str, path: &Path) -> Result<Map<String, Value>> {
    let shown = path.display();
    match serde_json::from_str(text) {
        Ok(Value::Object(root)) => Ok(root),
        Ok(_) => Err(Error::Config(format!("{shown}: expected a JSON object"))),
        Err(err) => Err(Error::Config(format!("{shown}: not valid JSON: {err}"))),
    }
}

/// The settings in `root` (read from `path`) under `env`: the active provider's section
/// as the variables it stands for. Unknown keys and wrong types are errors.
pub(super) fn from_value<'a>(
    env: &'a dyn Env,
    root: &Map<String, Value>,
    path: &Path,
) -> Result<Layered<'a>> {
    let shown = path.display();
    let mut file = HashMap::new();
    for key in root.keys() {
        if key != "provider"
            && key != "providers"
            && key != MCP_SERVERS
            && key != permissions::KEY
            && key != hooks::KEY
            && key != super::pricing::KEY
            && key != crate::policy::KEY
            && key != super::redact::PATTERNS
            && key != super::redact::VALUES
            && !TOP_KEYS.iter().any(|(k, _)| k == key)
        {
            return Err(Error::Config(format!(
                "{shown}: unknown key '{key}' (expected provider, providers, webFetch, \
                 clientTools, clientMcp, mcpInternal, sessionStore, redisPrefix, nodeId, \
                 leaseTtl, mcpToolsMaxBytes, promptCache, redact, redactPatterns, redactValues, \
                 mcpServers, permissions, hooks, pricing, policy)"
            )));
        }
    }
    let mcp_servers = root.get(MCP_SERVERS).cloned();
    if let Some(servers) = &mcp_servers
        && !(servers.is_object() || servers.is_array())
    {
        return Err(Error::Config(format!(
            "{shown}: mcpServers must be an object keyed by server name"
        )));
    }
    let permissions = match root.get(permissions::KEY) {
        Some(value) => permissions::from_settings(value, path, &Source::User(path.to_path_buf()))
            .map_err(Error::Config)?,
        None => RuleSet::default(),
    };
    let hooks = match root.get(hooks::KEY) {
        Some(value) => hooks::from_settings(value, path, &Source::User(path.to_path_buf()))
            .map_err(Error::Config)?,
        None => Vec::new(),
    };
    // Read again where policies are evaluated (`policy::sources`); refused here at start.
    if let Some(value) = root.get(crate::policy::KEY) {
        crate::policy::settings_of(value, &Default::default())
            .map_err(|why| Error::Config(format!("{shown}: {why}")))?;
    }
    let pricing = match root.get(super::pricing::KEY) {
        Some(value) => super::pricing::from_settings(value)
            .map_err(|why| Error::Config(format!("{shown}: {why}")))?,
        None => Default::default(),
    };
    for (key, var) in TOP_KEYS {
        if let Some(value) = root.get(*key) {
            file.insert(*var, scalar(value, key, &shown.to_string())?);
        }
    }
    if let Some(provider) = root.get("provider") {
        file.insert("IAC_CODE_PROVIDER", scalar(provider, "provider", &shown.to_string())?);
    }
    let active = env.get("IAC_CODE_PROVIDER").or_else(|| file.get("IAC_CODE_PROVIDER").cloned());
    let providers = match root.get("providers") {
        None => None,
        Some(Value::Object(providers)) => Some(providers),
        Some(_) => return Err(Error::Config(format!("{shown}: providers must be an object"))),
    };
    let section = match (&active, providers) {
        (Some(active), Some(providers)) => {
            let found = providers.iter().find(|(name, _)| same_provider(name, active));
            if found.is_none() {
                let named: Vec<&str> = providers.keys().map(String::as_str).collect();
                log::warn!(
                    "{shown}: no providers section for the active provider '{active}' \
                     (sections: {})",
                    named.join(", ")
                );
            }
            found
        }
        _ => None,
    };
    if let Some((active, section)) = section {
        {
            let Some(section) = section.as_object() else {
                return Err(Error::Config(format!(
                    "{shown}: providers.{active} must be an object"
                )));
            };
            for (key, value) in section {
                let Some((_, var)) = PROVIDER_KEYS.iter().find(|(k, _)| k == key) else {
                    let known: Vec<&str> = PROVIDER_KEYS.iter().map(|(k, _)| *k).collect();
                    return Err(Error::Config(format!(
                        "{shown}: unknown key providers.{active}.{key} (expected one of {})",
                        known.join(", ")
                    )));
                };
                let at = format!("providers.{active}.{key}");
                file.insert(var, scalar(value, &at, &shown.to_string())?);
            }
        }
    }
    let redaction = super::redact::from_settings(root, &shown.to_string())?;
    Ok(Layered { env, file, mcp_servers, permissions, hooks, pricing, redaction })
}

/// Whether a section name stands for the active provider: `LM Studio`, `lm-studio` and
/// `lmstudio` are one provider, as they are for `IAC_CODE_PROVIDER`.
pub(super) fn same_provider(section: &str, active: &str) -> bool {
    let norm = |name: &str| match super::presets::find_preset(name) {
        Some(preset) => preset.name.to_string(),
        None => super::presets::normalize(name),
    };
    norm(section) == norm(active)
}

/// A value as the variable's text: strings as they are, numbers and booleans printed,
/// lists of strings joined with commas.
fn scalar(value: &Value, at: &str, file: &str) -> Result<String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Array(items) => {
            let strings: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
            strings
                .map(|s| s.join(","))
                .ok_or_else(|| Error::Config(format!("{file}: {at} must be a list of strings")))
        }
        _ => Err(Error::Config(format!("{file}: {at} must be a string, number, boolean or list"))),
    }
}

#[cfg(test)]
mod tests {
    use super::same_provider;

    #[test]
    fn section_names_match_like_provider_names() {
        assert!(same_provider("LM Studio", "lmstudio"));
        assert!(same_provider("lm-studio", "LM_STUDIO"));
        assert!(same_provider("bailian", "dashscope"), "aliases name one preset");
        assert!(same_provider("my.gateway", "my-gateway"), "names of no preset too");
        assert!(!same_provider("vllm", "ollama"));
    }
}
