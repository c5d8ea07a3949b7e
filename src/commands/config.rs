//! `iac-code config path|show|set|unset` for people and scripts: where the settings file
//! is, which provider settings are in force and where each comes from, and editing it one
//! key at a time (a value of `-` is read from stdin, so a key stays out of shell history).

use std::io::{Read, Write};

use serde_json::{Value, json};

use crate::cli::ConfigCommand;
use crate::config::ProcessEnv;
use crate::config::manage::{self, Change};
use crate::error::{Error, Result};
use crate::sys;

/// Runs the command; returns the exit code.
pub fn run(command: &ConfigCommand) -> Result<u8> {
    match run_inner(command) {
        Err(Error::Stream(err)) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        other => other,
    }
}

fn run_inner(command: &ConfigCommand) -> Result<u8> {
    let env = ProcessEnv;
    let mut out = sys::stdout().lock();
    match command {
        ConfigCommand::Path => {
            let path = manage::settings_path(&env)?;
            writeln!(out, "{}", path.display()).map_err(Error::Stream)?;
        }
        ConfigCommand::Show { json } => {
            let shown = manage::show(&env)?;
            if *json {
                let map: serde_json::Map<String, Value> = shown
                    .iter()
                    .map(|s| {
                        let entry =
                            json!({"value": s.value, "source": s.source, "variable": s.variable});
                        (s.key.to_string(), entry)
                    })
                    .collect();
                writeln!(out, "{}", Value::Object(map)).map_err(Error::Stream)?;
            } else {
                for s in &shown {
                    let value = s.value.as_deref().unwrap_or("-").replace(['\t', '\n', '\r'], " ");
                    writeln!(out, "{}\t{value}\t{}", s.key, s.source).map_err(Error::Stream)?;
                }
            }
        }
        ConfigCommand::Set { provider, key, value } => {
            let value = if value == "-" { read_stdin()? } else { value.clone() };
            manage::edit(&env, provider.as_deref(), key, Change::Set(&value))?;
        }
        ConfigCommand::Unset { provider, key } => {
            manage::edit(&env, provider.as_deref(), key, Change::Unset)?;
        }
    }
    out.flush().map_err(Error::Stream)?;
    Ok(0)
}

/// The value from stdin, without its final line break.
fn read_stdin() -> Result<String> {
    let mut text = String::new();
    std::io::stdin().lock().read_to_string(&mut text).map_err(Error::Stream)?;
    let text = text.strip_suffix('\n').unwrap_or(&text);
    Ok(text.strip_suffix('\r').unwrap_or(text).to_string())
}
