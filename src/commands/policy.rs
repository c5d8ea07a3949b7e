//! `iac-code policy`: `eval` (a plan's JSON or a manifest judged by the policies in force
//! in the current directory, or by a directory's: each denial and warning, exit 1 on a
//! denial, 2 when the input or a policy cannot be read), `test` (the `test_` rules, like
//! `opa test`), `list` (the policies in force, where each came from, and those left out).

use std::io::Write;
use std::path::Path;

use serde_json::json;

use crate::cli::PolicyCommand;
use crate::config::ProcessEnv;
use crate::error::{Error, Result};
use crate::policy::{Findings, Origin, Policies};
use crate::sys;

/// Runs the command; returns the exit code.
pub fn run(command: &PolicyCommand) -> Result<u8> {
    let cwd = std::env::current_dir().map_err(Error::Stream)?;
    let config_dir = crate::config::config_dir(&ProcessEnv)?;
    match command {
        PolicyCommand::Eval { input, policy, json } => {
            eval(&cwd, &config_dir, input, policy.as_deref(), *json)
        }
        PolicyCommand::Test { dir } => test(dir.as_deref().map(Path::new)),
        PolicyCommand::List => list(&cwd, &config_dir),
    }
}

fn eval(cwd: &Path, config_dir: &Path, input: &str, dir: Option<&str>, json: bool) -> Result<u8> {
    let text = std::fs::read_to_string(input)
        .map_err(|err| Error::Usage(format!("{input}: cannot be read: {err}")))?;
    let inputs: Vec<String> = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(value) => vec![value.to_string()],
        Err(_) => crate::policy::manifests::documents(&text)
            .map_err(|why| Error::Usage(format!("{input}: neither JSON nor YAML: {why}")))?
            .iter()
            .map(|d| d.to_string())
            .collect(),
    };
    let policies = match dir {
        Some(dir) => {
            let listing = crate::config::policy_sources::listing(cwd, config_dir, false);
            let (files, problems) = crate::policy::test_sources(Some(Path::new(dir)));
            if files.is_empty() && problems.is_empty() {
                return Err(Error::Usage(format!("{dir}: no .rego files")));
            }
            let files: Vec<_> =
                files.into_iter().filter(|f| !f.name.ends_with("_test.rego")).collect();
            let policies = Policies::compile(&files, &listing.settings);
            match problems.first() {
                Some(why) => return Err(Error::Config(why.clone())),
                None => policies,
            }
        }
        None => crate::config::policy_sources::in_force(cwd, config_dir),
    };
    let mut findings = Findings::default();
    for document in &inputs {
        findings.extend(policies.evaluate(document).map_err(Error::Config)?);
    }
    let mut out = sys::stdout().lock();
    if json {
        let value = json!({ "input": input, "deny": findings.deny, "warn": findings.warn });
        writeln!(out, "{value}").map_err(Error::Stream)?;
    } else {
        for message in &findings.deny {
            writeln!(out, "FAIL - {input} - {message}").map_err(Error::Stream)?;
        }
        for message in &findings.warn {
            writeln!(out, "WARN - {input} - {message}").map_err(Error::Stream)?;
        }
        let (d, w) = (findings.deny.len(), findings.warn.len());
        writeln!(out, "{} judged: {d} denied, {w} warnings", inputs.len())
            .map_err(Error::Stream)?;
    }
    Ok(u8::from(!findings.deny.is_empty()))
}

fn test(dir: Option<&Path>) -> Result<u8> {
    let (files, problems) = crate::policy::test_sources(dir);
    if let Some(why) = problems.first() {
        return Err(Error::Config(why.clone()));
    }
    let policies = Policies::compile(&files, &crate::policy::Settings::default());
    if let Some(why) = policies.broken() {
        return Err(Error::Config(why));
    }
    let results = policies.test();
    let mut out = sys::stdout().lock();
    let mut failed = 0;
    for (name, result) in &results {
        match result {
            Ok(()) => writeln!(out, "PASS {name}"),
            Err(why) => {
                failed += 1;
                writeln!(out, "FAIL {name}: {why}")
            }
        }
        .map_err(Error::Stream)?;
    }
    writeln!(out, "{} tests, {} passed, {failed} failed", results.len(), results.len() - failed)
        .map_err(Error::Stream)?;
    Ok(u8::from(failed > 0 || results.is_empty()))
}

fn list(cwd: &Path, config_dir: &Path) -> Result<u8> {
    let listing = crate::config::policy_sources::listing(cwd, config_dir, false);
    let policies = Policies::compile(&listing.files, &listing.settings);
    let mut out = sys::stdout().lock();
    for file in &listing.files {
        let rules = match file.origin {
            Origin::Bundled => crate::policy::PACK
                .iter()
                .find(|b| file.name == format!("bundled/{}.rego", b.file))
                .map(|b| {
                    let on: Vec<&str> = b
                        .rules
                        .iter()
                        .copied()
                        .filter(|r| !listing.settings.off.iter().any(|o| o == r))
                        .collect();
                    format!(
                        "\trules: {}",
                        if on.is_empty() {
                            "none (switched off)".to_string()
                        } else {
                            on.join(", ")
                        }
                    )
                })
                .unwrap_or_default(),
            _ => String::new(),
        };
        writeln!(out, "{}\t{}{rules}", file.origin.name(), file.name).map_err(Error::Stream)?;
    }
    for b in crate::policy::PACK {
        if !listing.files.iter().any(|f| f.name == format!("bundled/{}.rego", b.file))
            && listing.settings.bundled
        {
            writeln!(out, "bundled\tbundled/{}.rego\trules: none (switched off)", b.file)
                .map_err(Error::Stream)?;
        }
    }
    if !listing.settings.bundled {
        writeln!(out, "bundled\t(the pack is switched off in settings)").map_err(Error::Stream)?;
    }
    writeln!(out, "namespaces\t{}", listing.settings.namespaces.join(", "))
        .map_err(Error::Stream)?;
    for note in &listing.notes {
        writeln!(out, "left out\t{note}").map_err(Error::Stream)?;
    }
    for problem in listing.problems.iter().cloned().chain(policies.broken()) {
        writeln!(out, "broken\t{problem} (applies and destroys are refused)")
            .map_err(Error::Stream)?;
    }
    Ok(0)
}
