//! Turns the environment (over the settings file) into a validated `Config`. It reads every
//! `IAC_CODE_*` variable but four, which their owners read because they act before (or
//! below) a `Config`: `IAC_CODE_LOG` (`logging.rs`, set up first), `IAC_CODE_SANDBOX` and
//! its test switch `IAC_CODE_SANDBOX_TEST_FAIL` (`sandbox/`, read by the supervisor too),
//! and `IAC_CODE_REDACT` (`secret/`, below `config`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::rules::RuleSet;

/// Everything the server needs to know, validated once at start-up.
#[derive(Debug, Clone)]
pub struct Config {
    /// Root of our files (`$IAC_CODE_CONFIG_DIR`, default `~/.iac-code`).
    pub config_dir: PathBuf,
    /// The LLM endpoint, or the message that tells the user what to set.
    pub provider: std::result::Result<ProviderConfig, String>,
    /// Agent loop limits.
    pub limits: Limits,
    /// File name of project instructions looked up in the session cwd.
    pub instructions_file: String,
    /// Bearer token the HTTP transport requires (`IACCODE_ACP_HTTP_TOKEN`), if set.
    pub http_token: Option<String>,
    /// Whether tools use the client's files and terminals (`IAC_CODE_CLIENT_TOOLS`: auto|off).
    pub client_tools: bool,
    /// MCP servers for every session, and the client's timeouts.
    pub mcp: McpConfig,
    /// Where sessions are kept.
    pub store: StoreConfig,
    /// This node's name (logs, leases, `/health`).
    pub node_id: String,
    /// Whether the operator named the node: only then does `/health` tell it to anyone.
    pub node_named: bool,
    /// How long a node holds a session without renewing its lease (Redis store).
    pub lease_ttl: Duration,
    /// Permission rules of `settings.json`, the environment and the flags (a project's own:
    /// [`permissions::project_rules`], per session).
    pub permissions: Arc<RuleSet>,
    /// Hooks of `settings.json` (a project's own: [`hooks::project_hooks`], per session).
    pub hooks: Arc<Vec<hooks::HookSpec>>,
    /// What tokens cost (`config/pricing.rs`).
    pub pricing: pricing::Pricing,
    /// Whether ACP's `logout` may clear the stored credentials: over stdio yes; over HTTP
    /// only with `--allow-remote-logout` (a token holder would sign every client out).
    pub logout_allowed: bool,
    /// How tool output is redacted (`config/redact.rs`).
    pub redact: Arc<crate::secret::Policy>,
}

/// What the MCP client needs from the configuration.
#[derive(Debug, Clone)]
pub struct McpConfig {
    /// `mcpServers` of `settings.json` as written (`Null` when absent).
    pub servers: serde_json::Value,
    /// How long connecting to a server may take (`IAC_CODE_MCP_CONNECT_TIMEOUT`, 10 s).
    pub connect_timeout: Duration,
    /// How long one MCP tool call may take (`IAC_CODE_MCP_CALL_TIMEOUT`, 600 s).
    pub call_timeout: Duration,
    /// The site CA for HTTP servers (`IAC_CODE_CA_FILE`).
    pub tls: Option<ureq::tls::TlsConfig>,
    /// Client entries the node starts (`IAC_CODE_CLIENT_MCP`); `None`: the transport says.
    pub client: Option<ClientMcp>,
    /// Whether a client's MCP URLs may reach internal addresses (`IAC_CODE_MCP_INTERNAL`).
    pub internal: Option<bool>,
    /// Most bytes of MCP tool definitions offered (`IAC_CODE_MCP_TOOLS_MAX_BYTES`, 256 KiB).
    pub tools_max_bytes: usize,
}

/// Limits of one prompt turn.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// LLM requests per prompt before `max_turn_requests`.
    pub max_turn_requests: u32,
    /// `max_tokens` of each LLM request.
    pub max_tokens: u32,
    /// Context window of the model, reported in `usage_update.size`.
    pub context_window: u64,
    /// Share of the context window (percent) past which older turns are compacted.
    pub compact_percent: u64,
    /// What `web_fetch` may do with public hosts (`IAC_CODE_WEB_FETCH`, `webFetch`).
    pub web_fetch: WebFetch,
}

pub mod approval;
mod cache;
mod fingerprint;
pub(crate) mod fuzz;
mod hook_runs;
pub mod hooks;
pub mod login;
pub mod manage;
pub mod permissions;
mod policy;
pub mod policy_sources;
mod presets;
pub mod pricing;
pub mod project;
pub mod redact;
pub mod settings;
mod store;
mod tls;

pub use cache::{CacheHint, PromptCache};
pub use policy::{ClientMcp, MCP_TOOLS_MAX_BYTES, WebFetch};
pub use presets::{cache_hint, preset_names};
use presets::{find_preset, infer_preset};
pub use store::{StoreConfig, redacted};
use tls::tls;

/// Which wire API the endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiKind {
    /// `POST {base}/chat/completions` with SSE deltas.
    OpenAiChat,
    /// `POST {base}/messages` (Anthropic Messages) with SSE events.
    AnthropicMessages,
}

/// A configured LLM endpoint.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// Preset name (`openai`, `vllm`, ...).
    pub preset: &'static str,
    pub api: ApiKind,
    /// Base URL without a trailing slash, e.g. `http://127.0.0.1:8000/v1`.
    pub base_url: String,
    /// Bearer key, if any. Never logged.
    pub api_key: Option<String>,
    /// The default model.
    pub model: String,
    /// Every model offered to clients (the default first).
    pub models: Vec<String>,
    /// Retry policy for failures before anything streamed.
    pub retry: RetryPolicy,
    pub timeouts: Timeouts,
    /// TLS with a site CA bundle added (`IAC_CODE_CA_FILE`); `None`: the bundled roots.
    pub tls: Option<ureq::tls::TlsConfig>,
    /// Anthropic extended thinking budget in tokens (`IAC_CODE_THINKING_BUDGET`).
    pub thinking_budget: Option<u32>,
    /// OpenAI `reasoning_effort` (`IAC_CODE_REASONING_EFFORT`).
    pub reasoning_effort: Option<String>,
    /// Whether the model accepts images (`IAC_CODE_IMAGES`).
    pub images: bool,
    /// Prompt caching (`IAC_CODE_PROMPT_CACHE`).
    pub prompt_cache: PromptCache,
}

/// Bounded retries with exponential backoff and jitter.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// First backoff delay; doubles per retry.
    pub base_delay: Duration,
    /// Cap on one delay (also caps `Retry-After`).
    pub max_delay: Duration,
    /// No retry starts after this much time since the first attempt.
    pub max_elapsed: Duration,
}

/// Network timeouts of LLM calls.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// TCP (and TLS) connect.
    pub connect: Duration,
    /// Request sent → response head.
    pub response: Duration,
    /// Longest wait in one read of a streamed reply (the idle watchdog).
    pub idle: Duration,
}

/// A source of environment variables (the process environment, or a map in tests).
pub trait Env {
    /// The value of `name`, if set and non-empty.
    fn get(&self, name: &str) -> Option<String>;
}

/// The process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn get(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.trim().is_empty())
    }
}

/// The configuration directory: `$IAC_CODE_CONFIG_DIR`, else `~/.iac-code`.
pub fn config_dir(env: &dyn Env) -> Result<PathBuf> {
    match env.get("IAC_CODE_CONFIG_DIR") {
        Some(dir) => Ok(expand_home(&dir, env)),
        None => match env.get("HOME") {
            Some(home) => Ok(PathBuf::from(home).join(".iac-code")),
            None => Err(Error::Config("neither IAC_CODE_CONFIG_DIR nor HOME is set".to_string())),
        },
    }
}

impl Config {
    /// Builds the configuration from the arguments and the environment.
    pub fn from_env(process: &dyn Env) -> Result<Config> {
        let config_dir = config_dir(process)?;
        // The settings file sits under the environment: variables win.
        let layered = settings::layered(process, &config_dir)?;
        let mut config = Config::from_layered(config_dir, &layered)?;
        config.redact = Arc::new(redact::policy(&layered, &layered.redaction)?);
        let mut rules = layered.permissions.clone();
        rules.extend(permissions::from_env(process)?);
        config.permissions = Arc::new(rules);
        config.hooks = Arc::new(layered.hooks.clone());
        config.mcp.servers = layered.mcp_servers.unwrap_or_default();
        config.pricing = pricing::Pricing::new(&config.provider, layered.pricing);
        Ok(config)
    }

    /// Adds the rules of `--allowed-tools` (`allowed`) and `--disallowed-tools`
    /// (`disallowed`), each value a comma-separated list; a bad rule is `Error::Config`.
    pub fn with_rule_flags(&mut self, allowed: &[String], disallowed: &[String]) -> Result<()> {
        let flags = permissions::from_flags(allowed, disallowed)?;
        if !flags.is_empty() {
            Arc::make_mut(&mut self.permissions).extend(flags);
        }
        Ok(())
    }

    /// Builds the configuration from variables already layered over the settings file.
    fn from_layered(config_dir: PathBuf, env: &dyn Env) -> Result<Config> {
        let limits = Limits {
            max_turn_requests: number(env, "IAC_CODE_MAX_TURN_REQUESTS", 100, 1, 10_000)? as u32,
            max_tokens: number(env, "IAC_CODE_MAX_TOKENS", 8192, 1, 1_000_000)? as u32,
            context_window: number(env, "IAC_CODE_CONTEXT_WINDOW", 128_000, 1024, 100_000_000)?,
            compact_percent: number(env, "IAC_CODE_COMPACT_THRESHOLD", 90, 10, 100)?,
            web_fetch: policy::web_fetch(env)?,
        };
        let provider = provider(env)?;
        let instructions_file =
            env.get("IAC_CODE_INSTRUCTION_MEMORY_FILE").unwrap_or_else(|| "AGENTS.md".to_string());
        let http_token = env.get("IACCODE_ACP_HTTP_TOKEN").filter(|t| !t.trim().is_empty());
        let client_tools = policy::client_tools(env)?;
        let mcp = McpConfig {
            servers: serde_json::Value::Null,
            connect_timeout: seconds(env, "IAC_CODE_MCP_CONNECT_TIMEOUT", 10.0)?,
            call_timeout: seconds(env, "IAC_CODE_MCP_CALL_TIMEOUT", 600.0)?,
            tls: tls(env)?,
            client: policy::client_mcp(env)?,
            internal: policy::mcp_internal(env)?,
            tools_max_bytes: policy::mcp_tools_max_bytes(env)?,
        };
        Ok(Config {
            config_dir,
            provider,
            limits,
            instructions_file,
            http_token,
            client_tools,
            mcp,
            store: store::store(env)?,
            node_id: store::node_id(env)?,
            node_named: env.get("IAC_CODE_NODE_ID").is_some(),
            lease_ttl: store::lease_ttl(env)?,
            permissions: Arc::default(),
            hooks: Arc::default(),
            pricing: pricing::Pricing::default(),
            logout_allowed: true,
            redact: Arc::default(),
        })
    }
}

fn provider(env: &dyn Env) -> Result<std::result::Result<ProviderConfig, String>> {
    // Validated even when no provider is configured, so a typo is caught at start-up.
    let retry = RetryPolicy {
        max_retries: number(env, "IAC_CODE_MAX_RETRIES", 4, 0, 20)? as u32,
        base_delay: Duration::from_millis(500),
        max_delay: Duration::from_secs(30),
        max_elapsed: Duration::from_secs(120),
    };
    let timeouts = Timeouts {
        connect: Duration::from_secs(10),
        response: seconds(env, "IAC_CODE_RESPONSE_TIMEOUT", 300.0)?,
        idle: seconds(env, "IAC_CODE_STREAM_IDLE_TIMEOUT", 90.0)?,
    };
    let model = env.get("IAC_CODE_MODEL");
    let base_url = env.get("IAC_CODE_BASE_URL");
    let preset = match env.get("IAC_CODE_PROVIDER") {
        Some(name) => Some(find_preset(&name).ok_or_else(|| {
            Error::Config(format!(
                "unknown IAC_CODE_PROVIDER '{name}': expected one of {}",
                preset_names().join(", ")
            ))
        })?),
        None if base_url.is_some() => find_preset("openai_compatible"),
        None => model.as_deref().and_then(infer_preset),
    };
    let Some(preset) = preset else {
        return Ok(Err(format!(
            "no LLM provider is configured: sign in with `iac-code login`, or set \
             IAC_CODE_PROVIDER (one of {}), IAC_CODE_BASE_URL, IAC_CODE_MODEL and, where \
             needed, IAC_CODE_API_KEY, or write them to settings.json in the config directory",
            preset_names().join(", ")
        )));
    };
    let Some(base_url) = base_url.or(preset.base_url.map(str::to_string)) else {
        return Ok(Err(format!(
            "provider '{}' needs a base URL: set IAC_CODE_BASE_URL (e.g. http://127.0.0.1:8000/v1)",
            preset.name
        )));
    };
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(Error::Config(format!(
            "IAC_CODE_BASE_URL '{base_url}' must start with http:// or https://"
        )));
    }
    let api_key = env.get("IAC_CODE_API_KEY");
    if preset.needs_key && api_key.is_none() {
        return Ok(Err(format!(
            "provider '{}' needs an API key: sign in with `iac-code login`, or set IAC_CODE_API_KEY",
            preset.name
        )));
    }
    let Some(model) = model.or(preset.default_model.map(str::to_string)) else {
        return Ok(Err(format!(
            "provider '{}' has no default model: set IAC_CODE_MODEL",
            preset.name
        )));
    };
    let mut models = vec![model.clone()];
    for extra in env.get("IAC_CODE_MODELS").unwrap_or_default().split(',') {
        let extra = extra.trim();
        if !extra.is_empty() && !models.iter().any(|m| m == extra) {
            models.push(extra.to_string());
        }
    }
    Ok(Ok(ProviderConfig {
        preset: preset.name,
        api: preset.api,
        base_url: base_url.trim_end_matches('/').to_string(),
        api_key,
        model,
        models,
        retry,
        timeouts,
        tls: tls(env)?,
        thinking_budget: match env.get("IAC_CODE_THINKING_BUDGET") {
            None => None,
            Some(_) => Some(number(env, "IAC_CODE_THINKING_BUDGET", 0, 1024, 1_000_000)? as u32),
        },
        reasoning_effort: match env.get("IAC_CODE_REASONING_EFFORT") {
            None => None,
            Some(e) if ["minimal", "low", "medium", "high"].contains(&e.trim()) => {
                Some(e.trim().to_string())
            }
            Some(e) => {
                return Err(Error::Config(format!(
                    "invalid IAC_CODE_REASONING_EFFORT '{e}': expected minimal, low, medium or high"
                )));
            }
        },
        prompt_cache: cache::prompt_cache(env)?,
        images: match env.get("IAC_CODE_IMAGES").as_deref().map(str::trim) {
            None | Some("0" | "false" | "no") => false,
            Some("1" | "true" | "yes") => true,
            Some(other) => {
                return Err(Error::Config(format!(
                    "invalid IAC_CODE_IMAGES '{other}': expected true or false"
                )));
            }
        },
    }))
}

fn expand_home(path: &str, env: &dyn Env) -> PathBuf {
    match (path.strip_prefix("~/"), env.get("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ if path == "~" => env.get("HOME").map(PathBuf::from).unwrap_or_else(|| path.into()),
        _ => PathBuf::from(path),
    }
}

fn number(env: &dyn Env, name: &str, default: u64, min: u64, max: u64) -> Result<u64> {
    let Some(raw) = env.get(name) else { return Ok(default) };
    match raw.trim().parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(Error::Config(format!("{name}='{raw}': expected a whole number {min}-{max}"))),
    }
}

fn seconds(env: &dyn Env, name: &str, default: f64) -> Result<Duration> {
    let Some(raw) = env.get(name) else { return Ok(Duration::from_secs_f64(default)) };
    match raw.trim().parse::<f64>() {
        Ok(s) if s > 0.0 && s <= 86_400.0 => Ok(Duration::from_secs_f64(s)),
        _ => Err(Error::Config(format!("{name}='{raw}': expected seconds, e.g. 90 or 0.5"))),
    }
}
#[cfg(test)]
mod tests;

/// A provider configuration for unit tests elsewhere in the crate.
#[cfg(test)]
#[path = "tests_support.rs"]
pub(crate) mod tests_support;
