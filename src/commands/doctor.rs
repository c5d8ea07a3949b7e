//! `iac-code doctor`: checks the configuration, the provider endpoint (reachable? key
//! accepted? model served?), the sessions directory and the HTTP token, printing one
//! actionable line per finding. Exit status 1 if anything is wrong.

use std::io::Write;
use std::time::Duration;

use serde_json::Value;

use crate::config::{ApiKind, Config, ProcessEnv, ProviderConfig};
use crate::error::Result;
use crate::session::store::Finding;
use crate::sys;

/// How long the provider gets to answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(PartialEq, Clone, Copy)]
enum Level {
    Ok,
    Warn,
    Error,
}

struct Report {
    errors: usize,
}

impl Report {
    fn say(&mut self, level: Level, text: &str) {
        let tag = match level {
            Level::Ok => "ok   ",
            Level::Warn => "warn ",
            Level::Error => "error",
        };
        if level == Level::Error {
            self.errors += 1;
        }
        let mut out = sys::stdout().lock();
        let _ = writeln!(out, "{tag} {text}");
    }
}

/// Runs every check; returns the exit code.
pub fn run() -> Result<u8> {
    let mut report = Report { errors: 0 };
    let config = match Config::from_env(&ProcessEnv) {
        Ok(config) => {
            report.say(Level::Ok, "configuration: the environment is valid");
            config
        }
        Err(err) => {
            report.say(Level::Error, &format!("{err}"));
            return Ok(1);
        }
    };
    match &config.provider {
        Ok(provider) => {
            report.say(
                Level::Ok,
                &format!(
                    "provider: {} at {}, model {}",
                    provider.preset, provider.base_url, provider.model
                ),
            );
            probe(&mut report, provider);
        }
        Err(reason) => report.say(Level::Error, reason),
    }
    check_sessions(&mut report, &config);
    match &config.http_token {
        Some(token) if token.chars().count() < 16 => report.say(
            Level::Warn,
            "IACCODE_ACP_HTTP_TOKEN is shorter than 16 characters: use a long random token",
        ),
        Some(_) => report.say(
            Level::Ok,
            "HTTP protection: IACCODE_ACP_HTTP_TOKEN is set; every HTTP request must carry it",
        ),
        None => report.say(
            Level::Ok,
            "HTTP protection: no IACCODE_ACP_HTTP_TOKEN; the HTTP transport serves loopback \
             only, and only connections from this user (their socket's owner is checked)",
        ),
    }
    report.say(
        Level::Ok,
        &format!(
            "web_fetch: {} for public hosts (IAC_CODE_WEB_FETCH / webFetch); internal \
             addresses always ask, and plan mode refuses them",
            config.limits.web_fetch.name()
        ),
    );
    let redact = &config.redact;
    if redact.on {
        report.say(
            Level::Ok,
            &format!(
                "redaction: on (secrets in tool output reach the model as placeholders; {} \
                 pattern(s) and {} value(s) of the team's)",
                redact.patterns.len(),
                redact.values.len()
            ),
        );
    } else {
        report.say(
            Level::Warn,
            "redaction: off (IAC_CODE_REDACT=off / redact): secrets in tool output reach the \
             model, the journal and the client",
        );
    }
    crate::child::init();
    let sandbox = crate::child::sandbox();
    let level = if sandbox.usable() { Level::Ok } else { Level::Warn };
    for line in super::sandbox::lines(sandbox) {
        report.say(level, &line);
    }
    for (warn, line) in super::skills::doctor_lines(&config.config_dir) {
        report.say(if warn { Level::Warn } else { Level::Ok }, &line);
    }
    Ok(u8::from(report.errors > 0))
}

/// `GET <base>/models`: reachable, key accepted, model listed.
#[expect(
    clippy::too_many_lines,
    reason = "one arm per provider API and per answer of its /models probe"
)]
fn probe(report: &mut Report, provider: &ProviderConfig) {
    let mut builder = ureq::Agent::config_builder()
        .timeout_global(Some(PROBE_TIMEOUT))
        .http_status_as_error(false);
    if let Some(tls) = &provider.tls {
        builder = builder.tls_config(tls.clone());
    }
    let agent: ureq::Agent = builder.build().into();
    let model = provider.model.as_str();
    let url = format!("{}/models", provider.base_url);
    let mut request = agent.get(&url);
    match (provider.api, &provider.api_key) {
        (ApiKind::AnthropicMessages, key) => {
            request = request.header("anthropic-version", "2023-06-01");
            if let Some(key) = key {
                request = request.header("x-api-key", key);
            }
        }
        (ApiKind::OpenAiChat, Some(key)) => {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        (ApiKind::OpenAiChat, None) => {}
    }
    let mut response = match request.call() {
        Ok(response) => response,
        Err(err) => {
            report.say(
                Level::Error,
                &format!(
                    "cannot reach {url}: {err} (is the server running? check IAC_CODE_BASE_URL)"
                ),
            );
            return;
        }
    };
    let status = response.status().as_u16();
    match status {
        401 | 403 => {
            report.say(
                Level::Error,
                &format!(
                    "the provider refused the API key (HTTP {status}): check IAC_CODE_API_KEY"
                ),
            );
            return;
        }
        200..=299 => report.say(Level::Ok, &format!("{url} answered (HTTP {status})")),
        404 if provider.api == ApiKind::AnthropicMessages => {
            // Anthropic-compatible gateways often have no model list: ask /messages (an
            // empty request, refused without reaching a model) whether the URL is right.
            let messages = format!("{}/messages", provider.base_url);
            let mut post = agent
                .post(&messages)
                .header("anthropic-version", "2023-06-01")
                .header("Content-Type", "application/json");
            if let Some(key) = &provider.api_key {
                post = post.header("x-api-key", key);
            }
            match post.send("{}").map(|r| r.status().as_u16()) {
                Ok(404) | Err(_) => report.say(
                    Level::Error,
                    &format!(
                        "{url} and {messages} answered 404 or not at all: check \
                         IAC_CODE_BASE_URL (Anthropic endpoints usually end in /v1)"
                    ),
                ),
                Ok(status) => report.say(
                    Level::Warn,
                    &format!(
                        "{url} answered 404 but {messages} answers (HTTP {status}): the \
                         model list cannot be checked"
                    ),
                ),
            }
            return;
        }
        404 => {
            report.say(
                Level::Error,
                &format!(
                    "{url} answered 404: check IAC_CODE_BASE_URL (OpenAI-compatible servers \
                     usually serve under /v1)"
                ),
            );
            return;
        }
        _ => {
            report.say(
                Level::Warn,
                &format!("{url} answered HTTP {status}: the model list cannot be checked"),
            );
            return;
        }
    }
    let text =
        response.body_mut().with_config().limit(4 << 20).read_to_string().unwrap_or_default();
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let listed: Vec<String> = body["data"]
        .as_array()
        .or_else(|| body["models"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|m| m["id"].as_str().or_else(|| m["name"].as_str()).map(str::to_string))
        .collect();
    if listed.is_empty() {
        report.say(Level::Warn, "the provider listed no models; the model cannot be checked");
    } else if listed.iter().any(|m| names_model(m, model, provider.api)) {
        report.say(Level::Ok, &format!("model {model} is served"));
    } else if listed.len() == 1 {
        // Single-model servers (llama.cpp, vLLM) often answer whatever name is asked for.
        report.say(
            Level::Warn,
            &format!(
                "the server serves {} only; IAC_CODE_MODEL={model} may be ignored or refused",
                listed[0]
            ),
        );
    } else {
        let shown: Vec<&str> = listed.iter().take(10).map(String::as_str).collect();
        report.say(
            Level::Error,
            &format!(
                "model {model} is not listed by the provider (it lists: {}); set IAC_CODE_MODEL",
                shown.join(", ")
            ),
        );
    }
}

/// Whether a listed id is the configured model: the same name, Ollama's `:latest`, or
/// for Anthropic an alias (`claude-sonnet-4-5`, `claude-3-7-sonnet-latest`) of a dated id.
fn names_model(listed: &str, model: &str, api: ApiKind) -> bool {
    if listed == model || listed == format!("{model}:latest") {
        return true;
    }
    let alias = model.strip_suffix("-latest").unwrap_or(model);
    api == ApiKind::AnthropicMessages
        && listed.strip_prefix(alias).is_some_and(|rest| {
            rest.strip_prefix('-')
                .is_some_and(|d| d.len() == 8 && d.bytes().all(|b| b.is_ascii_digit()))
        })
}

fn check_sessions(report: &mut Report, config: &Config) {
    if config.store != crate::config::StoreConfig::File {
        match crate::session::store::open(config) {
            Ok(store) => {
                for finding in store.check() {
                    match finding {
                        Finding::Ok(text) => report.say(Level::Ok, &text),
                        Finding::Warn(text) => report.say(Level::Warn, &text),
                        Finding::Error(text) => report.say(Level::Error, &text),
                    }
                }
            }
            Err(err) => report.say(Level::Error, &err.to_string()),
        }
        return;
    }
    let dir = config.config_dir.join("sessions");
    let probe = dir.join(format!(".doctor-{}", std::process::id()));
    let result = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&probe, b"ok"))
        .and_then(|()| std::fs::remove_file(&probe));
    match result {
        Ok(()) => {
            let count = {
                use crate::session::store::{FileStore, SessionStore};
                FileStore::new(&config.config_dir).list().map_or(0, |l| l.len())
            };
            report.say(
                Level::Ok,
                &format!("sessions directory {} is writable ({count} sessions)", dir.display()),
            );
        }
        Err(err) => report.say(
            Level::Error,
            &format!(
                "cannot write the sessions directory {}: {err} (check IAC_CODE_CONFIG_DIR)",
                dir.display()
            ),
        ),
    }
}
