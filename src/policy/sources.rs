//! Where the policies in force come from, read from disk: the bundled pack less the
//! rules settings switch off, `<config>/policies/`, and the project's
//! `.iac-code/policies/` only while the project's settings are approved with exactly these
//! files (`config::hook_runs` keeps their fingerprints with the approval of the hooks).
//! Never approved: not in force. Approved once, and a file added, changed or removed
//! since (or the settings): the policies are broken, so applies are refused until
//! `iac-code config approve` (an edit never loosens them unseen). The `policy` settings come from the user's
//! `settings.json` and, approved, the project's. `*_test.rego` files are read only for
//! `policy test`. Bounded like what hooks run: at most 256 files, 8 MiB.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{KEY, Origin, Policies, PolicyFile, Settings, bundled};
use crate::config::approval::{HOOKS, Runs, digest};

/// Files read from one directory at most.
const MAX_FILES: usize = 256;
/// Bytes read from one directory at most.
const MAX_BYTES: usize = 8 << 20;

/// The policies that would be in force for a session in `cwd`, and why others are not.
#[derive(Debug, Default)]
pub struct Listing {
    pub files: Vec<PolicyFile>,
    pub settings: Settings,
    /// Problems that break the policies (an unreadable file, bad settings).
    pub problems: Vec<String>,
    /// Policies left out, and why (the project's, not approved).
    pub notes: Vec<String>,
}

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

/// What would be in force in `cwd`; `tests`: with the `*_test.rego` files.
pub fn listing(cwd: &Path, config_dir: &Path, tests: bool) -> Listing {
    let mut listing = Listing::default();
    let user_settings = config_dir.join(crate::config::settings::FILE);
    if let Ok(text) = std::fs::read_to_string(&user_settings) {
        apply_settings(&text, &user_settings, &mut listing);
    }
    let project = project_policies(cwd, config_dir, tests, &mut listing);
    let user_dir = config_dir.join("policies");
    let (user, problems) = read_dir(&user_dir, Origin::User, tests);
    listing.problems.extend(problems);
    let mut files = Vec::new();
    if listing.settings.bundled {
        files.extend(bundled_files(tests, &listing.settings.off));
    }
    files.extend(user);
    files.extend(project);
    listing.files = files;
    listing
}

/// The policies in force in `cwd`, compiled.
pub fn in_force(cwd: &Path, config_dir: &Path) -> Policies {
    let listing = listing(cwd, config_dir, false);
    let mut policies = Policies::compile(&listing.files, &listing.settings);
    policies.broken.splice(0..0, listing.problems);
    policies
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
fn bundled_files(tests: bool, off: &[String]) -> Vec<PolicyFile> {
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

/// The `policy` key of a settings file.
fn apply_settings(text: &str, path: &Path, listing: &mut Listing) {
    let Ok(Value::Object(root)) = serde_json::from_str::<Value>(text) else { return };
    if let Some(value) = root.get(KEY) {
        match settings_of(value, &listing.settings) {
            Ok(settings) => listing.settings = settings,
            Err(why) => listing.problems.push(format!("{}: {why}", path.display())),
        }
    }
}

/// The project's policies, when its settings are approved with exactly these files.
fn project_policies(
    cwd: &Path,
    config_dir: &Path,
    tests: bool,
    listing: &mut Listing,
) -> Vec<PolicyFile> {
    let project = match crate::config::hooks::project_hooks(cwd, config_dir) {
        Ok(project) => project,
        Err(why) => {
            listing.notes.push(format!("the project's policies are not in force: {why}"));
            return Vec::new();
        }
    };
    let Some(settings_path) = project.path.clone() else { return Vec::new() };
    let dir = settings_path.parent().map(|d| d.join("policies")).unwrap_or_default();
    let approved: Option<&Runs> = project.check.as_ref().map(|c| c.approved());
    let Some(approved) = approved else {
        let Ok(real) = std::fs::canonicalize(&dir) else { return Vec::new() };
        // Approved once, changed since (a policy, a hook's script or the settings): no
        // edit may loosen them unseen, so applies are refused until approved again.
        if HOOKS.runner_of(config_dir, &real.join("policy.rego")).is_some() {
            listing.problems.push(format!(
                "{}: the project's policies or settings changed since they were approved: \
                 approve them again (iac-code config approve)",
                real.display()
            ));
        } else if real.is_dir() {
            listing.notes.push(format!(
                "{}: not in force: the project's settings are not approved as they are \
                 (iac-code config approve)",
                real.display()
            ));
        }
        return Vec::new();
    };
    if let Ok(text) = std::fs::read_to_string(&settings_path) {
        apply_settings(&text, &settings_path, listing);
    }
    let (files, problems) = read_dir(&dir, Origin::Project, true);
    if !problems.is_empty() {
        listing.problems.extend(problems);
        return Vec::new();
    }
    // Every file read is the one approved, and every approved file is still there.
    let shown = format!("{}/", dir.display());
    let mut changed: Vec<String> = files
        .iter()
        .filter(|f| approved.get(&f.name).map(String::as_str) != Some(&digest(f.text.as_bytes())))
        .map(|f| f.name.clone())
        .collect();
    let now: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    changed.extend(
        approved
            .keys()
            .filter(|k| k.starts_with(&shown) && k.ends_with(".rego"))
            .filter(|k| !now.contains(&k.as_str()))
            .cloned(),
    );
    if !changed.is_empty() {
        listing.problems.push(format!(
            "{shown}: {} changed since the project's settings were approved: approve them \
             again (iac-code config approve)",
            changed.join(", ")
        ));
        return Vec::new();
    }
    files.into_iter().filter(|f| tests || !f.name.ends_with("_test.rego")).collect()
}

/// The `.rego` files under `dir` (sorted, links not followed into directories), bounded;
/// `*_test.rego` only with `tests`. A missing directory holds none.
pub(super) fn read_dir(dir: &Path, origin: Origin, tests: bool) -> (Vec<PolicyFile>, Vec<String>) {
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
