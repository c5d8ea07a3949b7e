//! Reading one SKILL.md (the Agent Skills format): YAML front matter between `---` lines,
//! then a Markdown body. Pure and lenient, as the format's client guide advises: a missing
//! description skips the skill, a name unlike its folder warns and the skill is still used,
//! every other flaw is a problem reported with the skill kept where it can be.

use std::collections::BTreeMap;

use yaml_rust2::{Yaml, YamlLoader};

use crate::rules::{Rule, RuleSet, Source, Verdict};

/// Longest front matter read (bytes); the rest of a larger one is not YAML we take.
pub const MAX_FRONT: usize = 64 << 10;
/// Most characters of a name, a description, and a `compatibility` note.
pub const MAX_NAME: usize = 64;
pub const MAX_DESCRIPTION: usize = 1024;
pub const MAX_COMPATIBILITY: usize = 500;
/// Lines a body should stay under (more is a warning).
pub const BODY_LINES: usize = 500;
/// Brackets and braces a front matter may hold (deeper YAML is refused unread).
const MAX_BRACKETS: usize = 256;

/// What a SKILL.md says about its skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillMeta {
    pub name: String,
    pub description: String,
    pub license: Option<String>,
    pub compatibility: Option<String>,
    pub metadata: BTreeMap<String, String>,
    /// `allowed-tools`, one entry each (`Bash(git:*)`, `Read`).
    pub allowed_tools: Vec<String>,
    /// The Markdown after the front matter.
    pub body: String,
}

/// One flaw found; `fatal` ones mean the skill is not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub fatal: bool,
    pub message: String,
}

impl Problem {
    fn warn(message: impl Into<String>) -> Problem {
        Problem { fatal: false, message: message.into() }
    }
    fn fatal(message: impl Into<String>) -> Problem {
        Problem { fatal: true, message: message.into() }
    }
}

/// The fields the format defines.
const KNOWN: &[&str] =
    &["name", "description", "license", "compatibility", "metadata", "allowed-tools"];

/// Reads `text`, the SKILL.md of the folder named `folder`.
pub fn parse(text: &str, folder: &str) -> (Option<SkillMeta>, Vec<Problem>) {
    let mut problems = Vec::new();
    let Some((front, body)) = split(text) else {
        problems.push(Problem::fatal(
            "no front matter: SKILL.md must start with a line '---', the YAML fields, and \
             another '---'",
        ));
        return (None, problems);
    };
    if front.len() > MAX_FRONT || front.matches(['[', '{']).count() > MAX_BRACKETS {
        problems.push(Problem::fatal(format!(
            "the front matter is over {} KiB or nests too deeply",
            MAX_FRONT >> 10
        )));
        return (None, problems);
    }
    let fields = match YamlLoader::load_from_str(front) {
        Ok(docs) => match docs.into_iter().next() {
            Some(Yaml::Hash(hash)) => hash,
            Some(Yaml::Null) | None => Default::default(),
            Some(_) => {
                problems.push(Problem::fatal("the front matter is not a YAML mapping of fields"));
                return (None, problems);
            }
        },
        Err(err) => match plain_fields(front) {
            // A common slip: an unquoted ':' inside a description. Read it line by line.
            Some(hash) => {
                problems.push(Problem::warn(format!(
                    "the front matter is not valid YAML ({err}); read line by line: quote \
                     values that hold ': '"
                )));
                hash
            }
            None => {
                problems.push(Problem::fatal(format!("the front matter is not valid YAML: {err}")));
                return (None, problems);
            }
        },
    };
    let field = |key: &str| fields.get(&Yaml::String(key.to_string())).cloned();
    for key in fields.keys() {
        let key = scalar(key).unwrap_or_else(|| format!("{key:?}"));
        if !KNOWN.contains(&key.as_str()) {
            problems.push(Problem::warn(format!("unknown field '{key}' (ignored)")));
        }
    }
    let name = name_of(field("name"), folder, &mut problems);
    let description = match field("description").as_ref().and_then(scalar) {
        Some(d) if !d.trim().is_empty() => {
            bounded(d.trim(), MAX_DESCRIPTION, "description", &mut problems)
        }
        _ => {
            problems.push(Problem::fatal(
                "no description: say what the skill does and when to use it (1-1024 characters)",
            ));
            None
        }
    };
    let license = text_field(field("license"), "license", &mut problems);
    let compatibility = text_field(field("compatibility"), "compatibility", &mut problems)
        .and_then(|c| bounded(&c, MAX_COMPATIBILITY, "compatibility", &mut problems));
    let metadata = metadata_of(field("metadata"), &mut problems);
    let allowed_tools = tools_of(field("allowed-tools"), &mut problems);
    if body.lines().count() > BODY_LINES {
        problems.push(Problem::warn(format!(
            "the body is over {BODY_LINES} lines: move detail into references/"
        )));
    }
    let (Some(name), Some(description)) = (name, description) else { return (None, problems) };
    let body = body.trim_start_matches(['\n', '\r']).to_string();
    let meta =
        SkillMeta { name, description, license, compatibility, metadata, allowed_tools, body };
    (Some(meta), problems)
}

/// The front matter and the body, when the text starts with a `---` line closed by another.
fn split(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (first, rest) = text.split_once('\n')?;
    if first.trim_end() != "---" {
        return None;
    }
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..at], &rest[at + line.len()..]));
        }
        at += line.len();
    }
    None
}

/// Whether `name` is a valid skill name: 1-64 of `[a-z0-9-]`, no hyphen at either end and
/// never two together.
pub fn valid_name(name: &str) -> bool {
    (1..=MAX_NAME).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

fn name_of(value: Option<Yaml>, folder: &str, problems: &mut Vec<Problem>) -> Option<String> {
    let rule = "1-64 characters of a-z, 0-9 and '-', no '-' at either end nor two together";
    let written = value.as_ref().and_then(scalar);
    match written {
        Some(name) if valid_name(&name) => {
            if name != folder {
                problems.push(Problem::warn(format!(
                    "the name '{name}' differs from its folder '{folder}' (used as '{name}')"
                )));
            }
            Some(name)
        }
        other if valid_name(folder) => {
            let why = match other {
                Some(name) => format!("the name '{name}' is not valid ({rule})"),
                None => "no name".to_string(),
            };
            problems.push(Problem::warn(format!("{why}: the folder's name '{folder}' is used")));
            Some(folder.to_string())
        }
        other => {
            let shown = other.unwrap_or_default();
            problems.push(Problem::fatal(format!(
                "neither the name '{shown}' nor the folder '{folder}' is a valid name ({rule})"
            )));
            None
        }
    }
}

/// A scalar's text (strings, numbers, booleans); `None` for anything else.
fn scalar(value: &Yaml) -> Option<String> {
    match value {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn text_field(value: Option<Yaml>, key: &str, problems: &mut Vec<Problem>) -> Option<String> {
    match value {
        None | Some(Yaml::Null) => None,
        Some(value) => {
            let text = scalar(&value);
            if text.is_none() {
                problems.push(Problem::warn(format!("'{key}' is not text (ignored)")));
            }
            text
        }
    }
}

/// `text` if it is at most `max` characters, else its first `max` with a warning.
fn bounded(text: &str, max: usize, key: &str, problems: &mut Vec<Problem>) -> Option<String> {
    let count = text.chars().count();
    if count <= max {
        return Some(text.to_string());
    }
    problems.push(Problem::warn(format!("'{key}' is {count} characters (at most {max}): cut")));
    Some(text.chars().take(max).collect())
}

fn metadata_of(value: Option<Yaml>, problems: &mut Vec<Problem>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    match value {
        None | Some(Yaml::Null) => {}
        Some(Yaml::Hash(hash)) => {
            for (key, value) in hash {
                match (scalar(&key), scalar(&value)) {
                    (Some(k), Some(v)) => {
                        out.insert(k, v);
                    }
                    _ => problems.push(Problem::warn(format!(
                        "metadata: '{key:?}' is not a text key with a text value (ignored)"
                    ))),
                }
            }
        }
        Some(_) => problems.push(Problem::warn("'metadata' is not a mapping (ignored)")),
    }
    out
}

/// `allowed-tools`: space-separated entries (spaces inside parentheses kept; commas and a
/// YAML list accepted too).
fn tools_of(value: Option<Yaml>, problems: &mut Vec<Problem>) -> Vec<String> {
    match value {
        None | Some(Yaml::Null) => Vec::new(),
        Some(Yaml::Array(items)) => items
            .iter()
            .filter_map(|item| {
                let text = scalar(item);
                if text.is_none() {
                    problems.push(Problem::warn("allowed-tools: an entry that is not text"));
                }
                text
            })
            .flat_map(|t| split_tools(&t))
            .collect(),
        Some(value) => match scalar(&value) {
            Some(text) => split_tools(&text),
            None => {
                problems.push(Problem::warn("'allowed-tools' is not text (ignored)"));
                Vec::new()
            }
        },
    }
}

/// Entries separated by spaces or commas outside parentheses.
pub fn split_tools(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut current) = (0usize, String::new());
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && (c.is_whitespace() || c == ',') {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Top-level `key: value` lines when the YAML does not parse (values kept as written).
fn plain_fields(front: &str) -> Option<yaml_rust2::yaml::Hash> {
    let mut hash = yaml_rust2::yaml::Hash::new();
    for line in front.lines() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            return None; // nested YAML: not guessed at
        }
        let (key, value) = line.split_once(':')?;
        let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
        hash.insert(Yaml::String(key.trim().to_string()), Yaml::String(value.to_string()));
    }
    Some(hash)
}

/// `allowed-tools` as permission rules that allow (Claude Code's names mapped to ours);
/// `None` when the skill names none. An entry that is not a rule is a problem, left out.
pub fn allowed_rules(meta: &SkillMeta) -> (Option<RuleSet>, Vec<Problem>) {
    if meta.allowed_tools.is_empty() {
        return (None, Vec::new());
    }
    let mut rules = Vec::new();
    let mut problems = Vec::new();
    for entry in &meta.allowed_tools {
        match Rule::parse(entry, Verdict::Allow, Source::Flag("allowed-tools")) {
            Ok(rule) => rules.push(rule),
            Err(why) => problems.push(Problem::warn(format!("allowed-tools: {why} (left out)"))),
        }
    }
    (Some(RuleSet::new(rules)), problems)
}

#[cfg(test)]
#[path = "front_tests.rs"]
mod tests;
