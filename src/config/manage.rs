//! `iac-code config`: edits the settings file (one key at a time, under a lock, checked as
//! the server will read it, written atomically with mode 0600) and shows the provider
//! settings in force with where each one comes from.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::presets::find_preset;
use super::settings::{self, FILE, PROVIDER_KEYS, same_provider};
use super::{Config, Env, config_dir, preset_names};
use crate::error::{Error, Result};

/// What to do with a key.
#[derive(Debug, Clone, Copy)]
pub enum Change<'a> {
    /// Give it this value (as typed on the command line).
    Set(&'a str),
    /// Remove it.
    Unset,
}

/// The settings file's path.
pub fn settings_path(env: &dyn Env) -> Result<PathBuf> {
    Ok(config_dir(env)?.join(FILE))
}

/// Applies `change` to `key` in the settings file: `provider`, or a per-provider key of
/// the section of `provider` (else of `IAC_CODE_PROVIDER`, else of the file's provider).
/// Nothing is written unless the whole file still loads.
pub fn edit(env: &dyn Env, provider: Option<&str>, key: &str, change: Change) -> Result<PathBuf> {
    edit_root(env, |root, path| {
        let active = if key == "provider" {
            if provider.is_some() {
                return Err(Error::Usage(
                    "--provider names a section; the active provider is set with: \
                     iac-code config set provider <NAME>"
                        .into(),
                ));
            }
            match change {
                Change::Set(name) => {
                    root.insert(key.into(), Value::String(preset(name)?.into()));
                }
                Change::Unset => {
                    root.remove(key);
                }
            }
            None
        } else if let Some((key, _)) = settings::TOP_KEYS.iter().find(|(k, _)| *k == key) {
            if provider.is_some() {
                return Err(Error::Usage(format!(
                    "{key} is not a per-provider setting; drop --provider"
                )));
            }
            match change {
                Change::Set(value) => {
                    root.insert((*key).into(), Value::String(value.trim().to_string()));
                }
                Change::Unset => {
                    root.remove(*key);
                }
            }
            None
        } else {
            let name = provider
                .map(str::to_string)
                .or_else(|| env.get("IAC_CODE_PROVIDER"))
                .or_else(|| root.get("provider").and_then(Value::as_str).map(str::to_string))
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "which provider's {key}? pass --provider <NAME>, or choose one first: \
                         iac-code config set provider <NAME>"
                    ))
                })?;
            let name = preset(&name)?;
            edit_section(root, name, key, change, path)?;
            Some(name)
        };
        Ok(active)
    })
}

/// Edits the settings file's top-level object with `change` (which returns the provider
/// section it touched, if any): under the settings lock, checked as the server will read
/// it (nothing is written unless the whole file still loads), written atomically.
pub fn edit_root(
    env: &dyn Env,
    change: impl FnOnce(&mut Map<String, Value>, &Path) -> Result<Option<&'static str>>,
) -> Result<PathBuf> {
    let dir = config_dir(env)?;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|source| Error::Io { path: dir.clone(), source })?;
    let path = dir.join(FILE);
    // One editor at a time, so two scripts setting two keys both keep their change.
    let lock_path = dir.join(".settings.lock");
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&lock_path)
        .map_err(|source| Error::Io { path: lock_path.clone(), source })?;
    lock.lock().map_err(|source| Error::Io { path: lock_path, source })?;
    let mut root = match fs::read_to_string(&path) {
        Ok(text) => settings::parse(&text, &path)?,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(source) => return Err(Error::Io { path, source }),
    };
    let active = change(&mut root, &path)?;
    check(env, &dir, &path, &root, active)?;
    // A settings.json kept elsewhere (a dotfiles repository) and linked here is updated
    // where it lives; the link stays.
    let target = match fs::symlink_metadata(&path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs::canonicalize(&path).map_err(|source| Error::Io { path: path.clone(), source })?
        }
        _ => path.clone(),
    };
    let target_dir = target.parent().map_or_else(|| dir.clone(), Path::to_path_buf);
    write_atomically(&target_dir, &target, &root)?;
    Ok(path)
}

/// The preset `name` stands for, by its canonical name.
fn preset(name: &str) -> Result<&'static str> {
    find_preset(name).map(|p| p.name).ok_or_else(|| {
        Error::Usage(format!(
            "unknown provider '{name}': expected one of {}",
            preset_names().join(", ")
        ))
    })
}

pub(super) fn edit_section(
    root: &mut Map<String, Value>,
    provider: &str,
    key: &str,
    change: Change,
    path: &Path,
) -> Result<()> {
    if !PROVIDER_KEYS.iter().any(|(k, _)| *k == key) {
        let known: Vec<&str> = PROVIDER_KEYS.iter().map(|(k, _)| *k).collect();
        return Err(Error::Usage(format!(
            "unknown key '{key}': expected provider, {}",
            known.join(", ")
        )));
    }
    let providers = root.entry("providers").or_insert_with(|| Value::Object(Map::new()));
    let Some(providers) = providers.as_object_mut() else {
        return Err(Error::Config(format!("{}: providers must be an object", path.display())));
    };
    // An existing section spelt otherwise (`lm-studio`) is the one edited.
    let name = providers
        .keys()
        .find(|k| same_provider(k, provider))
        .cloned()
        .unwrap_or_else(|| provider.to_string());
    match change {
        Change::Set(raw) => {
            let value = typed(key, raw)?;
            let section =
                providers.entry(name.clone()).or_insert_with(|| Value::Object(Map::new()));
            let Some(section) = section.as_object_mut() else {
                return Err(Error::Config(format!(
                    "{}: providers.{name} must be an object",
                    path.display()
                )));
            };
            section.insert(key.to_string(), value);
        }
        Change::Unset => {
            if let Some(section) = providers.get_mut(&name).and_then(Value::as_object_mut) {
                section.remove(key);
                if section.is_empty() {
                    providers.remove(&name);
                }
            }
        }
    }
    if providers.is_empty() {
        root.remove("providers");
    }
    Ok(())
}

/// A command-line value as the JSON the file holds for `key`.
fn typed(key: &str, raw: &str) -> Result<Value> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(Error::Usage(format!(
            "an empty {key}: to remove it, use iac-code config unset {key}"
        )));
    }
    Ok(match key {
        "maxTokens" | "contextWindow" | "thinkingBudget" => match raw.parse::<u64>() {
            Ok(n) => Value::from(n),
            Err(_) => {
                return Err(Error::Usage(format!("{key} must be a whole number, not '{raw}'")));
            }
        },
        "images" => match raw.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" | "on" => Value::Bool(true),
            "false" | "no" | "0" | "off" => Value::Bool(false),
            _ => return Err(Error::Usage(format!("images must be true or false, not '{raw}'"))),
        },
        "models" => Value::Array(
            raw.split(',')
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(|m| Value::String(m.to_string()))
                .collect(),
        ),
        // Read later from any directory: a relative path is made absolute now.
        "caFile" if !raw.starts_with('~') && Path::new(raw).is_relative() => {
            let cwd = std::env::current_dir()
                .map_err(|source| Error::Io { path: PathBuf::from("."), source })?;
            Value::String(cwd.join(raw).display().to_string())
        }
        _ => Value::String(raw.to_string()),
    })
}

/// Loads `root` as the server would, with `active` (the section edited) as the provider,
/// so a bad value is refused now rather than at the next start.
fn check(
    env: &dyn Env,
    dir: &Path,
    path: &Path,
    root: &Map<String, Value>,
    active: Option<&'static str>,
) -> Result<()> {
    struct Only<'a> {
        env: &'a dyn Env,
        active: Option<&'static str>,
    }
    impl Env for Only<'_> {
        fn get(&self, name: &str) -> Option<String> {
            match name {
                "IAC_CODE_PROVIDER" => self.active.map(str::to_string),
                "HOME" => self.env.get(name),
                _ => None,
            }
        }
    }
    /// What is not set yet (a key kept in the environment, a model still to come) stands
    /// in with a placeholder, so every value the file does hold is checked.
    struct Complete<'a>(&'a dyn Env);
    impl Env for Complete<'_> {
        fn get(&self, name: &str) -> Option<String> {
            self.0.get(name).or_else(|| match name {
                "IAC_CODE_API_KEY" | "IAC_CODE_MODEL" => Some("placeholder".into()),
                "IAC_CODE_BASE_URL" => Some("http://placeholder.invalid/v1".into()),
                _ => None,
            })
        }
    }
    let only = Only { env, active };
    let layered = settings::from_value(&only, root, path)?;
    match Config::from_layered(dir.to_path_buf(), &Complete(&layered)) {
        Ok(_) => Ok(()),
        Err(err) => Err(Error::Config(format!("nothing was changed: {err}"))),
    }
}

fn write_atomically(dir: &Path, path: &Path, root: &Map<String, Value>) -> Result<()> {
    let tmp = dir.join(format!(".{FILE}.{}.tmp", std::process::id()));
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let mut text = serde_json::to_string_pretty(root).map_err(|err| io(err.into()))?;
    text.push('\n');
    let _ = fs::remove_file(&tmp);
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut file| {
            file.write_all(text.as_bytes())?;
            file.sync_all()
        })
        .and_then(|()| fs::rename(&tmp, path))
        .and_then(|()| File::open(dir)?.sync_all());
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written.map_err(io)
}

/// One provider setting in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub key: &'static str,
    /// The variable that stands for it.
    pub variable: &'static str,
    /// Its value (`apiKey` is never shown, nor a password in `sessionStore`), if any.
    pub value: Option<String>,
    /// `env`, `settings`, `preset`, `inferred`, `default` or `unset`.
    pub source: &'static str,
}

/// The provider settings in force, each with its source.
pub fn show(env: &dyn Env) -> Result<Vec<Shown>> {
    let dir = config_dir(env)?;
    let layered = settings::layered(env, &dir)?;
    let config = Config::from_layered(dir, &layered)?;
    let provider = config.provider.as_ref().ok();
    // The preset fills what is not set, even while the provider is not usable yet.
    let named = layered.get("IAC_CODE_PROVIDER");
    let preset = match provider {
        Some(p) => find_preset(p.preset),
        None => named.as_deref().and_then(find_preset),
    };
    let mut shown = Vec::new();
    let keys = [("provider", "IAC_CODE_PROVIDER")].iter().chain(PROVIDER_KEYS);
    for &(key, variable) in keys.chain(settings::TOP_KEYS) {
        let (value, source) = if let Some(value) = env.get(variable) {
            (Some(value), "env")
        } else if let Some(value) = layered.in_file(variable) {
            (Some(value), "settings")
        } else {
            match (key, provider) {
                ("provider", Some(p)) => (Some(p.preset.to_string()), "inferred"),
                ("baseUrl", _) if preset.is_some_and(|p| p.base_url.is_some()) => {
                    (preset.and_then(|p| p.base_url).map(str::to_string), "preset")
                }
                ("model", _) if preset.is_some_and(|p| p.default_model.is_some()) => {
                    (preset.and_then(|p| p.default_model).map(str::to_string), "preset")
                }
                ("maxTokens", _) => (Some(config.limits.max_tokens.to_string()), "default"),
                ("contextWindow", _) => (Some(config.limits.context_window.to_string()), "default"),
                ("images", _) => (Some("false".into()), "default"),
                ("webFetch", _) => (Some(config.limits.web_fetch.name().into()), "default"),
                ("clientTools", _) => (Some("auto".into()), "default"),
                ("clientMcp", _) => (Some("http over HTTP, stdio over stdio".into()), "default"),
                ("mcpInternal", _) => (Some("deny over HTTP, allow over stdio".into()), "default"),
                ("promptCache", _) => (Some("auto".into()), "default"),
                ("mcpToolsMaxBytes", _) => {
                    (Some(config.mcp.tools_max_bytes.to_string()), "default")
                }
                _ => (None, "unset"),
            }
        };
        let value = match key {
            "apiKey" => value.map(|_| "(hidden)".to_string()),
            // A Redis URL may carry a password.
            "sessionStore" => value.map(|v| super::redacted(&v)),
            _ => value,
        };
        shown.push(Shown { key, variable, value, source });
    }
    Ok(shown)
}

#[cfg(test)]
#[path = "manage_tests.rs"]
mod tests;
