//! Redaction's settings: on unless `IAC_CODE_REDACT=off` (or `"redact": "off"` in
//! `settings.json`), and the team's own `redactPatterns` (regular expressions) and
//! `redactValues` (exact values), kept whole in the settings file.

use serde_json::{Map, Value};

use super::Env;
use crate::error::{Error, Result};
use crate::secret::Policy;

/// The settings keys of the team's patterns and values.
pub const PATTERNS: &str = "redactPatterns";
pub const VALUES: &str = "redactValues";

/// The team's patterns and values as written in the settings file at `shown`.
pub(super) fn from_settings(root: &Map<String, Value>, shown: &str) -> Result<[Vec<String>; 2]> {
    let list = |key: &str| -> Result<Vec<String>> {
        match root.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| Error::Config(format!("{shown}: {key} must be a list of strings"))),
            Some(_) => Err(Error::Config(format!("{shown}: {key} must be a list of strings"))),
        }
    };
    Ok([list(PATTERNS)?, list(VALUES)?])
}

/// The policy `env` (over the settings file) sets, with the file's patterns and values.
pub(super) fn policy(env: &dyn Env, lists: &[Vec<String>; 2]) -> Result<Policy> {
    let on = match env.get("IAC_CODE_REDACT").map(|v| v.trim().to_ascii_lowercase()) {
        None => true,
        Some(v) if matches!(v.as_str(), "on" | "true" | "1") => true,
        Some(v) if matches!(v.as_str(), "off" | "false" | "0") => false,
        Some(v) => {
            return Err(Error::Config(format!("IAC_CODE_REDACT must be on or off, got '{v}'")));
        }
    };
    let mut patterns = Vec::new();
    for pattern in &lists[0] {
        let regex = regex::Regex::new(pattern)
            .map_err(|err| Error::Config(format!("{PATTERNS}: '{pattern}': {err}")))?;
        patterns.push(regex);
    }
    let values = lists[1].iter().filter(|v| !v.trim().is_empty()).cloned().collect();
    if !on {
        log::warn!(
            "IAC_CODE_REDACT=off: tool output reaches the model, the journal and the client \
             with every secret it holds"
        );
    }
    Ok(Policy { on, patterns, values })
}
