//! Settings files read from text alone, for the fuzz targets (`fuzz/`, through
//! `crate::fuzzing`): the user's `settings.json` as the configuration it makes (under an
//! empty environment, its `hooks` read too), and a project's `.iac-code/settings.json` as
//! its rules.

use std::path::{Path, PathBuf};

use super::settings::{self, Layered};
use super::{Config, Env, permissions};
use crate::rules::RuleSet;

/// No variable set.
struct Nothing;

impl Env for Nothing {
    fn get(&self, _: &str) -> Option<String> {
        None
    }
}

/// The settings without the files they name: a CA bundle would be read from disk.
struct NoFiles<'a>(&'a Layered<'a>);

impl Env for NoFiles<'_> {
    fn get(&self, name: &str) -> Option<String> {
        if name == "IAC_CODE_CA_FILE" { None } else { self.0.get(name) }
    }
}

/// The configuration `text` makes as the user's `settings.json` (no variable set; a
/// `caFile` is not read), or the error it gives at start-up.
pub fn settings(text: &str) -> Result<Config, String> {
    let path = Path::new("/fuzz/settings.json");
    let root = settings::parse(text, path).map_err(|e| e.to_string())?;
    let layered = settings::from_value(&Nothing, &root, path).map_err(|e| e.to_string())?;
    let mut config = Config::from_layered(PathBuf::from("/fuzz"), &NoFiles(&layered))
        .map_err(|e| e.to_string())?;
    config.mcp.servers = layered.mcp_servers.unwrap_or_default();
    config.permissions = std::sync::Arc::new(layered.permissions);
    config.hooks = std::sync::Arc::new(layered.hooks);
    Ok(config)
}

/// The rules `text` holds as a project's `.iac-code/settings.json`, or why it cannot be
/// used.
pub fn project_settings(text: &str) -> Result<RuleSet, String> {
    permissions::project_rules_of(text, Path::new("/fuzz/.iac-code/settings.json"))
}
