//! Kubernetes manifests as policy input: each YAML document of a file as its own JSON
//! value (conftest's way), empty documents skipped, an object with an `items` array as its
//! items. Read as kubectl reads them (YAML 1.1): a plain `yes`, `on` or `y` is true, `no`,
//! `off` or `n` false; a merge key (`<<: *base`) brings its mapping's keys in document
//! order; an alias is its anchor's value; a tag (`!!bool "true"`) says what a scalar is,
//! and a quoted scalar without one is a string. Pure.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Nodes deeper than this are refused (a hostile file cannot exhaust the stack).
const MAX_DEPTH: usize = 256;

/// The documents of `text` (YAML, JSON included), each as JSON. Split first as kubectl
/// splits a file: at every line that starts with `---`, whatever follows on it (`---#`).
pub fn documents(text: &str) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for chunk in chunks(text) {
        let mut builder = Builder::default();
        Parser::new_from_str(chunk).load(&mut builder, true).map_err(|err| err.to_string())?;
        if let Some(why) = builder.error {
            return Err(why);
        }
        for doc in builder.docs {
            flatten(doc, &mut out, 0);
        }
    }
    Ok(out)
}

/// `text` cut at each line starting with `---` (the separator lines left out).
fn chunks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with("---") {
            out.push(&text[start..at]);
            start = at + line.len();
        }
        at += line.len();
    }
    out.push(&text[start..]);
    out
}

/// A document, or, as kubectl reads any object whose `items` is an array, its items (lists
/// within lists too; an item without a kind takes the list's, less `List`).
fn flatten(doc: Value, out: &mut Vec<Value>, depth: usize) {
    match doc {
        Value::Null => {}
        Value::Object(mut map)
            if depth < MAX_DEPTH && map.get("items").is_some_and(Value::is_array) =>
        {
            let kind = map.get("kind").and_then(Value::as_str).and_then(|k| k.strip_suffix("List"));
            let kind = kind.filter(|k| !k.is_empty()).map(str::to_string);
            let version = map.get("apiVersion").cloned();
            let Some(Value::Array(items)) = map.remove("items") else { return };
            for mut item in items {
                if let Value::Object(fields) = &mut item {
                    if let Some(kind) = &kind {
                        fields.entry("kind").or_insert_with(|| Value::String(kind.clone()));
                    }
                    if let Some(version) = &version {
                        fields.entry("apiVersion").or_insert_with(|| version.clone());
                    }
                }
                flatten(item, out, depth + 1);
            }
        }
        doc => out.push(doc),
    }
}

/// A node being built: a sequence, or a mapping waiting for a key or for a key's value.
enum Open {
    Seq(Vec<Value>, usize),
    Map(Map<String, Value>, Option<String>, usize),
}

/// Builds JSON values from the parser's events.
#[derive(Default)]
struct Builder {
    docs: Vec<Value>,
    stack: Vec<Open>,
    anchors: HashMap<usize, Value>,
    error: Option<String>,
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, event: Event, _mark: Marker) {
        if self.error.is_some() {
            return;
        }
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                let value = scalar(text, style, tag.as_ref());
                self.done(value, anchor);
            }
            Event::Alias(id) => {
                let value = self.anchors.get(&id).cloned().unwrap_or(Value::Null);
                self.done(value, 0);
            }
            Event::SequenceStart(anchor, _) => self.open(Open::Seq(Vec::new(), anchor)),
            Event::MappingStart(anchor, _) => self.open(Open::Map(Map::new(), None, anchor)),
            Event::SequenceEnd | Event::MappingEnd => match self.stack.pop() {
                Some(Open::Seq(items, anchor)) => self.done(Value::Array(items), anchor),
                Some(Open::Map(map, _, anchor)) => self.done(Value::Object(map), anchor),
                None => {}
            },
            _ => {}
        }
    }
}

impl Builder {
    fn open(&mut self, node: Open) {
        if self.stack.len() >= MAX_DEPTH {
            self.error = Some(format!("nested more than {MAX_DEPTH} levels deep"));
            return;
        }
        self.stack.push(node);
    }

    /// A finished node: into its parent, or a document of its own.
    fn done(&mut self, value: Value, anchor: usize) {
        if anchor > 0 {
            self.anchors.insert(anchor, value.clone());
        }
        match self.stack.last_mut() {
            None => self.docs.push(value),
            Some(Open::Seq(items, _)) => items.push(value),
            // Keys in document order, a merge's too (as kubectl's YAML reader does: a key
            // after `<<` overrides it, and a merge overrides the keys before it).
            Some(Open::Map(map, key, _)) => match key.take() {
                None => *key = Some(key_of(&value)),
                Some(k) if k == "<<" => {
                    let bases = match value {
                        Value::Array(bases) => bases,
                        base => vec![base],
                    };
                    for base in bases {
                        if let Value::Object(fields) = base {
                            map.extend(fields);
                        }
                    }
                }
                Some(k) => {
                    map.insert(k, value);
                }
            },
        }
    }
}

/// A mapping key as JSON keys are: text.
fn key_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A scalar as YAML 1.1 resolves it (plain only; a quoted or block scalar is a string,
/// and so is anything tagged `!!str`).
fn scalar(text: String, style: TScalarStyle, tag: Option<&Tag>) -> Value {
    let tagged = |name: &str| {
        tag.is_some_and(|t| t.suffix == name || t.suffix.ends_with(&format!(":{name}")))
    };
    if tagged("str") {
        return Value::String(text);
    }
    // A tag says what a quoted scalar is (`!!bool "true"` is true).
    let typed = ["bool", "int", "float", "null"].iter().any(|t| tagged(t));
    if style != TScalarStyle::Plain && !typed {
        return Value::String(text);
    }
    match text.as_str() {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" => {
            return Value::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => {
            return Value::Bool(false);
        }
        _ => {}
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(&text);
    if let Some(hex) = digits.strip_prefix("0x") {
        if let Ok(n) = i64::from_str_radix(hex, 16) {
            return Value::Number(if text.starts_with('-') { -n } else { n }.into());
        }
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = text.parse::<i64>() {
            return Value::Number(n.into());
        }
    } else if digits.bytes().any(|b| b.is_ascii_digit())
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && let Some(n) = text.parse::<f64>().ok().and_then(Number::from_f64)
    {
        return Value::Number(n);
    }
    Value::String(text)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_document_is_one_input() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  \
                    - {name: c, image: 'nginx:1', ports: [{containerPort: 80}]}\n---\n---\n\
                    kind: Service\nspec: {ratio: 0.5, on: true}\n";
        let docs = documents(text).expect("YAML");
        assert_eq!(docs.len(), 2, "the empty document is skipped");
        assert_eq!(docs[0]["spec"]["containers"][0]["ports"][0]["containerPort"], 80);
        assert_eq!(docs[0]["metadata"]["name"], "a");
        assert_eq!(docs[1]["spec"]["ratio"], 0.5);
        assert_eq!(docs[1]["spec"]["true"], true, "a plain `on` key is true, as kubectl reads it");
        assert!(documents("a: [b").is_err());
    }

    #[test]
    fn yaml_1_1_booleans_merge_keys_aliases_and_lists_are_read_as_kubectl_reads_them() {
        let docs = documents(
            "a: yes\nb: 'yes'\nc: off\nd: !!str on\ne: 0x1F\nf: 1.5\ng: ~\nh: \"1\"\n\
             base: &b {privileged: true, x: 1}\nm: {<<: *b, x: 2}\nalias: *b\nn: 1\n",
        )
        .expect("YAML");
        let d = &docs[0];
        assert_eq!(d["a"], true);
        assert_eq!(d["b"], "yes", "quoted stays a string");
        assert_eq!(d["c"], false);
        assert_eq!(d["d"], "on");
        assert_eq!(d["e"], 31);
        assert_eq!(d["f"], 1.5);
        assert_eq!(d["g"], Value::Null);
        assert_eq!(d["h"], "1");
        assert_eq!(d["m"]["privileged"], true, "merged");
        assert_eq!(d["m"]["x"], 2, "a key after the merge overrides it");
        assert_eq!(d["alias"]["x"], 1);
        assert_eq!(d["false"], 1, "a plain `n` key is false (YAML 1.1)");
        let list = documents("kind: List\nitems:\n- kind: Pod\n- kind: Service\n").expect("YAML");
        assert_eq!(list.len(), 2);
        assert_eq!(list[1]["kind"], "Service");
        // Any object with items, lists within lists, kinds inherited.
        let nested = documents(
            "kind: ConfigMap\nitems:\n- kind: PodList\n  apiVersion: v1\n  items:\n  - metadata: {name: p}\n",
        )
        .expect("YAML");
        assert_eq!(nested.len(), 1);
        assert_eq!((&nested[0]["kind"], &nested[0]["apiVersion"]), (&json!("Pod"), &json!("v1")));
        let tagged = documents("a: !!bool \"true\"\nb: !!int \"7\"\nc: !!str 8\n").expect("YAML");
        assert_eq!(
            (&tagged[0]["a"], &tagged[0]["b"], &tagged[0]["c"]),
            (&json!(true), &json!(7), &json!("8"))
        );
        let order = documents("base: &b {privileged: true}\nm: {privileged: false, <<: *b}\n")
            .expect("YAML");
        assert_eq!(order[0]["m"]["privileged"], true, "a merge overrides the keys before it");
        // kubectl splits at `---#` too, and so do we.
        let split = documents("a\n---#\n{\"kind\": \"Pod\", \"spec\": {}}\n").expect("YAML");
        assert_eq!(split.len(), 2, "{split:?}");
        assert_eq!(split[1]["kind"], "Pod");
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(documents(&deep).is_err(), "too deep");
    }
}
