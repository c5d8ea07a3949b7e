//! Secrets recognised by where they stand, learned as exact values: what terraform marks
//! sensitive (plan JSON `before_sensitive`/`after_sensitive`, `sensitive_values`, state
//! `sensitive_attributes`, outputs and variables with `sensitive: true`) and the `data`
//! (base64, and decoded) and `stringData` of a Kubernetes `Secret` (JSON or YAML). The text
//! may carry a tool's framing (`STDOUT:`, `read_file`'s line numbers) around the document.

use base64::Engine;
use serde_json::{Map, Value};

/// Biggest document parsed for what it marks sensitive.
const MAX_DOCUMENT: usize = 64 << 20;

/// Calls `learn(kind, value)` for every value `text` marks secret by its structure.
pub fn structures(text: &str, learn: &mut dyn FnMut(&'static str, String)) {
    if text.len() > MAX_DOCUMENT {
        return;
    }
    let json = text.contains("\"sensitive") || text.contains("\"Secret\"");
    let yaml = text.contains("kind: Secret") || text.contains("kind: \"Secret\"");
    if !json && !yaml {
        return;
    }
    let numbered = unnumbered(text);
    for text in std::iter::once(text).chain(numbered.as_deref()) {
        if json {
            json_documents(text, learn);
        }
        if yaml {
            yaml_documents(text, learn);
        }
    }
}

/// `text` without `read_file`'s line numbers (`     1\t…`), when it has them.
fn unnumbered(text: &str) -> Option<String> {
    let numbered = |line: &str| {
        let (head, _) = line.split_once('\t').unwrap_or(("", ""));
        !head.trim().is_empty() && head.trim().bytes().all(|b| b.is_ascii_digit())
    };
    let lines: Vec<&str> = text.lines().collect();
    if lines.iter().filter(|l| numbered(l)).count() * 2 < lines.len() {
        return None;
    }
    let body = lines.iter().filter(|l| numbered(l)).filter_map(|l| l.split_once('\t'));
    Some(body.map(|(_, rest)| rest).collect::<Vec<_>>().join("\n"))
}

/// Every JSON document starting at a `{` that opens a line (or the text).
fn json_documents(text: &str, learn: &mut dyn FnMut(&'static str, String)) {
    let mut starts: Vec<usize> = text.match_indices("\n{").map(|(at, _)| at + 1).collect();
    if text.starts_with('{') {
        starts.insert(0, 0);
    }
    let mut done = 0;
    for start in starts.into_iter().take(16) {
        if start < done {
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        if let Some(Ok(value)) = stream.next() {
            done = start + stream.byte_offset();
            walk(&value, learn);
        }
    }
}

fn walk(value: &Value, learn: &mut dyn FnMut(&'static str, String)) {
    match value {
        Value::Object(map) => {
            object(map, learn);
            map.values().for_each(|v| walk(v, learn));
        }
        Value::Array(items) => items.iter().for_each(|v| walk(v, learn)),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

const TF: &str = "terraform-sensitive";
const KUBE: &str = "kubernetes-secret";

/// What one object marks sensitive.
fn object(map: &Map<String, Value>, learn: &mut dyn FnMut(&'static str, String)) {
    if map.get("sensitive") == Some(&Value::Bool(true)) {
        for key in ["value", "default", "after", "before"] {
            if let Some(value) = map.get(key) {
                leaves(value, TF, learn);
            }
        }
    }
    for (key, mask) in map {
        if let Some(base) = key.strip_suffix("_sensitive")
            && let Some(value) = map.get(base)
        {
            masked(value, mask, learn);
        }
    }
    if let (Some(values), Some(mask)) = (map.get("values"), map.get("sensitive_values")) {
        masked(values, mask, learn);
    }
    if let (Some(attributes), Some(Value::Array(paths))) =
        (map.get("attributes"), map.get("sensitive_attributes"))
    {
        for path in paths {
            if let Some(found) = follow(attributes, path) {
                leaves(found, TF, learn);
            }
        }
    }
    // Plan JSON: `variables` holds the values, `configuration` says which are sensitive.
    if let (Some(Value::Object(variables)), Some(declared)) =
        (map.get("variables"), map.pointer_root("configuration/root_module/variables"))
    {
        for (name, value) in variables {
            if declared.pointer(&format!("/{name}/sensitive")) == Some(&Value::Bool(true)) {
                leaves(value, TF, learn);
            }
        }
    }
    if map.get("kind").and_then(Value::as_str) == Some("Secret") {
        if let Some(Value::Object(data)) = map.get("data") {
            for value in data.values().filter_map(Value::as_str) {
                secret_data(value, learn);
            }
        }
        if let Some(string_data) = map.get("stringData") {
            leaves(string_data, KUBE, learn);
        }
    }
}

/// `pointer` from the root of a map.
trait PointerRoot {
    fn pointer_root(&self, path: &str) -> Option<&Value>;
}

impl PointerRoot for Map<String, Value> {
    fn pointer_root(&self, path: &str) -> Option<&Value> {
        let (first, rest) = path.split_once('/').unwrap_or((path, ""));
        let value = self.get(first)?;
        if rest.is_empty() { Some(value) } else { value.pointer(&format!("/{rest}")) }
    }
}

/// A value of a Secret's `data`: the base64 and what it decodes to.
fn secret_data(value: &str, learn: &mut dyn FnMut(&'static str, String)) {
    learn(KUBE, value.to_string());
    let engine = base64::engine::general_purpose::STANDARD;
    if let Ok(decoded) = engine.decode(value.trim())
        && let Ok(decoded) = String::from_utf8(decoded)
    {
        learn(KUBE, decoded.trim().to_string());
        for line in decoded.lines() {
            learn(KUBE, line.trim().to_string());
        }
    }
}

/// The parts of `value` that `mask` marks `true`.
fn masked(value: &Value, mask: &Value, learn: &mut dyn FnMut(&'static str, String)) {
    match (value, mask) {
        (_, Value::Bool(true)) => leaves(value, TF, learn),
        (Value::Object(values), Value::Object(mask)) => {
            for (key, mask) in mask {
                if let Some(value) = values.get(key) {
                    masked(value, mask, learn);
                }
            }
        }
        (Value::Array(values), Value::Array(mask)) => {
            values.iter().zip(mask).for_each(|(v, m)| masked(v, m, learn));
        }
        _ => {}
    }
}

/// The value a state's sensitive path (`[{"type":"get_attr","value":"input"}, …]`) names;
/// a dynamic attribute's `{"value": …, "type": …}` wrapper is looked through.
fn follow<'v>(mut at: &'v Value, path: &Value) -> Option<&'v Value> {
    for step in path.as_array()? {
        let key = &step["value"];
        let next = match (at, key) {
            (Value::Object(map), Value::String(name)) => {
                map.get(name).or_else(|| map.get("value").and_then(|v| v.get(name)))
            }
            (Value::Array(items), key) => {
                let index = key.get("value").unwrap_or(key).as_u64()?;
                items.get(usize::try_from(index).ok()?)
            }
            _ => None,
        }?;
        at = next;
    }
    Some(at)
}

/// Every string and number in `value`.
fn leaves(value: &Value, kind: &'static str, learn: &mut dyn FnMut(&'static str, String)) {
    match value {
        Value::String(s) => learn(kind, s.clone()),
        Value::Number(n) => learn(kind, n.to_string()),
        Value::Array(items) => items.iter().for_each(|v| leaves(v, kind, learn)),
        Value::Object(map) => map.values().for_each(|v| leaves(v, kind, learn)),
        Value::Null | Value::Bool(_) => {}
    }
}

/// The `data` and `stringData` values of a Kubernetes `Secret` in YAML, read line by line
/// (a tool's output may hold other text around it, or several files).
fn yaml_documents(text: &str, learn: &mut dyn FnMut(&'static str, String)) {
    let indent = |line: &str| line.len() - line.trim_start().len();
    let mut block: Option<(usize, bool)> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some((at, encoded)) = block {
            if indent(line) > at
                && let Some((_, value)) = trimmed.split_once(':')
            {
                let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
                if encoded {
                    secret_data(value, learn);
                } else {
                    learn(KUBE, value.to_string());
                }
                continue;
            }
            block = None;
        }
        match trimmed {
            "data:" => block = Some((indent(line), true)),
            "stringData:" => block = Some((indent(line), false)),
            _ => {}
        }
    }
}
