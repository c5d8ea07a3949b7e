//! Policy as code: the team's Rego rules judge what a command would change (a terraform
//! plan's JSON, a Kubernetes manifest) before anyone is asked. conftest's conventions:
//! `package main` unless settings name others, rule sets `deny` and `violation` (refuse
//! the command, in every mode) and `warn` (shown in the question and the result), each
//! producing strings or objects with `msg`; OPA v1 syntax and the older `deny[msg] { … }`
//! both read. Evaluated in-process by `regorus` (no network builtins).
//!
//! Where policies come from (`sources.rs`): the bundled pack (`bundled.rs`, each rule
//! switchable), the user's `<config>/policies/`, and the project's `.iac-code/policies/`
//! once the project's settings are approved with exactly these files. A policy that does
//! not parse or evaluate is *broken*: `Evaluation::Broken` names the file and line, and
//! the gate refuses applies while it is (fail closed). Pure but for `sources.rs`.

mod bundled;
pub mod manifests;
mod sources;

pub use bundled::{PACK, rules as bundled_rules};
pub use sources::{bundled_files, read_dir, settings_of, test_sources};

use regorus::{Engine, Value as Rego};
use serde_json::Value;

/// The settings key: `{"namespaces": ["main"], "bundled": {"iam_wildcard": false}}`.
pub const KEY: &str = "policy";

/// Where a policy file comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Compiled into the binary.
    Bundled,
    /// `<config>/policies/`.
    User,
    /// The project's `.iac-code/policies/`, approved.
    Project,
    /// Named on the command line (`policy eval --policy DIR`).
    Given,
}

impl Origin {
    pub fn name(self) -> &'static str {
        match self {
            Origin::Bundled => "bundled",
            Origin::User => "user",
            Origin::Project => "project",
            Origin::Given => "given",
        }
    }
}

/// One Rego file.
#[derive(Debug, Clone)]
pub struct PolicyFile {
    /// As shown: its path, or `bundled/<name>.rego`.
    pub name: String,
    pub origin: Origin,
    pub text: String,
}

/// How policies are chosen (`policy` in settings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The packages whose `deny`, `violation` and `warn` count (conftest's `--namespace`).
    pub namespaces: Vec<String>,
    /// The bundled rules switched off.
    pub off: Vec<String>,
    /// The bundled pack as a whole.
    pub bundled: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { namespaces: vec!["main".to_string()], off: Vec::new(), bundled: true }
    }
}

/// What the policies said of one input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    /// `deny` and `violation` messages: the command is refused.
    pub deny: Vec<String>,
    /// `warn` messages.
    pub warn: Vec<String>,
}

impl Findings {
    pub fn is_empty(&self) -> bool {
        self.deny.is_empty() && self.warn.is_empty()
    }

    /// Another input's findings added (a manifest's next document).
    pub fn extend(&mut self, other: Findings) {
        for (mine, theirs) in [(&mut self.deny, other.deny), (&mut self.warn, other.warn)] {
            for message in theirs {
                if !mine.contains(&message) {
                    mine.push(message);
                }
            }
        }
    }
}

/// The compiled policies in force.
pub struct Policies {
    engine: Engine,
    namespaces: Vec<String>,
    /// Files that do not parse: why, with the file and line.
    broken: Vec<String>,
    /// What was loaded, for `policy list`.
    pub files: Vec<(String, Origin)>,
    /// The `test_` rules of the files loaded, as `data.<package>.<rule>`.
    tests: Vec<String>,
}

impl Policies {
    /// Compiles `files` under `settings`; a file that does not parse is kept as broken.
    pub fn compile(files: &[PolicyFile], settings: &Settings) -> Policies {
        let mut engine = Engine::new();
        let mut broken = Vec::new();
        let mut loaded = Vec::new();
        let mut tests = Vec::new();
        for file in files {
            match add(&mut engine, file) {
                Ok(package) => {
                    loaded.push((file.name.clone(), file.origin));
                    for line in file.text.lines().filter(|l| l.starts_with("test_")) {
                        let name: String = line
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect();
                        let full = format!("{package}.{name}");
                        if !tests.contains(&full) {
                            tests.push(full);
                        }
                    }
                }
                Err(why) => broken.push(why),
            }
        }
        let mut namespaces = settings.namespaces.clone();
        if files.iter().any(|f| f.origin == Origin::Bundled) {
            namespaces.extend(PACK.iter().map(|b| format!("iac_code.{}", b.file)));
        }
        let off: serde_json::Map<String, Value> =
            settings.off.iter().map(|r| (r.clone(), Value::Bool(true))).collect();
        let data = serde_json::json!({ "iac_code": { "off": off } });
        if let Err(err) = Rego::from_json_str(&data.to_string()).and_then(|d| engine.add_data(d)) {
            broken.push(format!("policy data: {err}"));
        }
        Policies { engine, namespaces, broken, files: loaded, tests }
    }

    /// The same policies, also broken for `problems` (found before compiling: an
    /// unreadable file, bad settings), which come first.
    pub fn with_problems(mut self, problems: Vec<String>) -> Policies {
        self.broken.splice(0..0, problems);
        self
    }

    /// Why the policies cannot judge anything, if a file is broken.
    pub fn broken(&self) -> Option<String> {
        (!self.broken.is_empty()).then(|| self.broken.join("\n"))
    }

    /// What the policies say of `input`; `Err`: a policy is broken (it does not parse, or
    /// evaluating it failed), with the file and line.
    pub fn evaluate(&self, input: &str) -> Result<Findings, String> {
        if let Some(why) = self.broken() {
            return Err(why);
        }
        let input = Rego::from_json_str(input).map_err(|err| format!("the input: {err}"))?;
        let mut engine = self.engine.clone();
        engine.set_input(input);
        let mut findings = Findings::default();
        for namespace in &self.namespaces {
            for (set, denies) in [("deny", true), ("violation", true), ("warn", false)] {
                let query = format!("data.{namespace}.{set}");
                let results = engine.eval_query(query, false).map_err(|err| tidy(&err))?;
                for result in results.result {
                    for expression in result.expressions {
                        let value = serde_json::to_value(&expression.value)
                            .map_err(|err| format!("{namespace}.{set}: {err}"))?;
                        let list = if denies { &mut findings.deny } else { &mut findings.warn };
                        messages(&value, &format!("{namespace}.{set}"), list);
                    }
                }
            }
        }
        Ok(findings)
    }

    /// Runs every `test_` rule of the namespaces loaded (`opa test`): each test's name and
    /// whether it passed (`Err`: why not).
    pub fn test(&self) -> Vec<(String, Result<(), String>)> {
        let mut out = Vec::new();
        if let Some(why) = self.broken() {
            out.push(("(compile)".to_string(), Err(why)));
            return out;
        }
        let mut engine = self.engine.clone();
        for name in &self.tests {
            engine.set_input(Rego::new_object());
            let verdict = match engine.eval_query(name.clone(), false) {
                Ok(results) => {
                    let passed = results
                        .result
                        .iter()
                        .any(|r| r.expressions.iter().any(|e| e.value == Rego::Bool(true)));
                    if passed { Ok(()) } else { Err("failed".to_string()) }
                }
                Err(err) => Err(tidy(&err)),
            };
            out.push((name.trim_start_matches("data.").to_string(), verdict));
        }
        out
    }
}

/// Adds one file: OPA v1 first, then the older syntax; when neither reads it, the error
/// of the reading that got further.
fn add(engine: &mut Engine, file: &PolicyFile) -> Result<String, String> {
    engine.set_rego_v0(false);
    let v1 = match engine.add_policy(file.name.clone(), file.text.clone()) {
        Ok(package) => return Ok(package),
        Err(err) => tidy(&err),
    };
    engine.set_rego_v0(true);
    let v0 = engine.add_policy(file.name.clone(), file.text.clone());
    engine.set_rego_v0(false);
    match v0 {
        Ok(package) => Ok(package),
        Err(err) => {
            let v0 = tidy(&err);
            Err(if line_of(&v0) > line_of(&v1) { v0 } else { v1 })
        }
    }
}

/// The line of a tidied error (`file:line:col: …`).
fn line_of(error: &str) -> u32 {
    error.split(':').nth(1).and_then(|l| l.parse().ok()).unwrap_or(0)
}

/// A regorus error as one line: `file:line:col: error: message`.
fn tidy(err: &impl std::fmt::Display) -> String {
    let text = err.to_string();
    let Some((_, after)) = text.split_once("--> ") else {
        return text.trim().replace('\n', " ");
    };
    let place = after.lines().next().unwrap_or("").trim();
    let message = text.lines().last().unwrap_or("").trim();
    format!("{place}: {message}")
}

/// The messages of a rule set's value: strings, objects with `msg`, anything else as JSON.
fn messages(value: &Value, rule: &str, out: &mut Vec<String>) {
    let items: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        Value::Bool(false) | Value::Null => Vec::new(),
        other => vec![other],
    };
    for item in items {
        let message = match item {
            Value::String(text) => text.clone(),
            Value::Object(object) => match object.get("msg") {
                Some(Value::String(text)) => text.clone(),
                _ => item.to_string(),
            },
            Value::Bool(true) => format!("{rule} holds"),
            other => other.to_string(),
        };
        if !out.contains(&message) {
            out.push(message);
        }
    }
}

#[cfg(test)]
mod tests;
