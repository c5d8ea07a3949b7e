//! Policy files read from disk and the `policy` settings: a directory's `.rego` files
//! (bounded: at most 256 files, 8 MiB), the bundled pack less the rules settings switch
//! off, and what `policy test` runs. Which of them are in force for a session (the
//! user's, the project's under its approval) is `config::policy_sources`' to say: this room
//! never reads settings or approvals.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{KEY, Origin, PolicyFile, Settings, bundled};

/// Files read from one directory at most.
const MAX_FILES: usize = 256;
/// Bytes read from one directory at most.
const MAX_BYTES: usize = 8 << 20;

/// The `policy` settings in `value`.
pub fn settings_of(value: &Value, base: &Settings) -> Result<Settings, String> {
    let Value::Object(map) = value else {
        return Err(format!("{KEY}: expected an object (namespaces, bundled)"));
    };
    let mut settings = base.clone();
    for (key, value) in map {
        match (key.as_str(), value) {
            ("namespaces", Value::Array(names)) => {
                settings.namespaces = Vec::new();
                for name in names {
                    let Some(name) = name.as_str().filter(|n| package_name(n)) else {
                        return Err(format!("{KEY}.namespaces: {name} is not a package name"));
                    };
                    settings.namespaces.push(name.to_string());
                }
            }
            ("bundled", Value::Bool(on)) => settings.bundled = *on,
            ("bundled", Value::Object(rules)) => {
                for (rule, on) in rules {
                    if !bundled::rules().any(|r| r == rule) {
                        let known: Vec<&str> = bundled::rules().collect();
                        return Err(format!(
                            "{KEY}.bundled: no rule {rule} (the pack's: {})",
                            known.join(", ")
                        ));
                    }
                    match on {
                        Value::Bool(true) => settings.off.retain(|r| r != rule),
                        Value::Bool(false) if !settings.off.contains(rule) => {
                            settings.off.push(rule.clone());
                        }
                        Value::Bool(false) => {}
                        _ => return Err(format!("{KEY}.bundled.{rule}: expected true or false")),
                    }
                }
            }
            _ => {
                return Err(format!(
                    "{KEY}.{key}: expected namespaces (a list of package names) or bundled \
                     (true, false, or an object of rule names to true or false)"
                ));
            }
        }
    }
    Ok(settings)
}

/// `main`, `terraform.aws`: what conftest's `--namespace` takes.
fn package_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            part.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// The files `policy test DIR` runs: the directory's, tests included; without a directory,
/// the bundled pack's.
pub fn test_sources(dir: Option<&Path>) -> (Vec<PolicyFile>, Vec<String>) {
    match dir {
        Some(dir) => read_dir(dir, Origin::Given, true),
        None => (bundled_files(true, &[]), Vec::new()),
    }
}

/// The bundled pack (with its tests), less the files whose rules are all switched off
/// (the rest are switched off through `data.iac_code.off`).
pub fn bundled_files(tests: bool, off: &[String]) -> Vec<PolicyFile> {
    let mut files = Vec::new();
    for b in bundled::PACK.iter().filter(|b| !b.rules.iter().all(|r| off.iter().any(|o| o == r))) {
        let name = format!("bundled/{}.rego", b.file);
        files.push(PolicyFile { name, origin: Origin::Bundled, text: b.rego.to_string() });
        if tests {
            let name = format!("bundled/{}_test.rego", b.file);
            files.push(PolicyFile { name, origin: Origin::Bundled, text: b.test.to_string() });
        }
    }
    files
}

/// The `.rego` files under `dir` (sorted, links not followed into directories), bounded;
/// `*_test.rego` only with `tests`. A missing directory holds none.
pub fn read_dir(dir: &Path, origin: Origin, tests: bool) -> (Vec<PolicyFile>, Vec<String>) {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    let Ok(real) = std::fs::canonicalize(dir) else { return (files, problems) };
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut pending = vec![real];
    while let Some(at) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            problems.push(format!("{}: cannot be read", at.display()));
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rego") {
                paths.push(path);
            }
        }
        if paths.len() > MAX_FILES {
            problems.push(format!("{}: more than {MAX_FILES} policy files", dir.display()));
            return (Vec::new(), problems);
        }
    }
    paths.sort();
    let mut bytes = 0;
    for path in paths {
        let name = path.display().to_string();
        let all = origin == Origin::Project || tests;
        if !all && name.ends_with("_test.rego") {
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                bytes += text.len();
                if bytes > MAX_BYTES {
                    problems.push(format!("{}: more than 8 MiB of policies", dir.display()));
                    return (Vec::new(), problems);
                }
                files.push(PolicyFile { name, origin, text });
            }
            Err(err) => problems.push(format!("{name}: {err}")),
        }
    }
    (files, problems)
}
