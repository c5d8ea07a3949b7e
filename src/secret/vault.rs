//! A session's secrets: every value redacted so far and its placeholder
//! (`__SECRET:kind:N__`, the same value the same placeholder for the session's life), the
//! exact values matched everywhere (one Aho-Corasick automaton, rebuilt when one is added),
//! and the restore of placeholders in a tool's input. Kept for load and resume by the
//! session (`session/vault_file.rs`, sealed); what cannot be taken back stays unknown.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use serde_json::Value;

use super::Policy;
use super::check::OPEN;
use super::shapes::{self, Found};

const CLOSE: &str = "__";

/// Shortest value matched exactly wherever it shows up (shorter ones only where a shape
/// found them: a four-letter password would hide every word it is part of).
pub const MIN_EXACT: usize = 6;

/// What a redaction did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Secrets replaced.
    pub count: usize,
    /// Their kinds, sorted, each once.
    pub kinds: Vec<String>,
}

impl Tally {
    fn add(&mut self, kind: &str) {
        self.count += 1;
        if let Err(at) = self.kinds.binary_search_by(|k| k.as_str().cmp(kind)) {
            self.kinds.insert(at, kind.to_string());
        }
    }

    /// Adds another view of the same secrets: its kinds, and its count where it shows
    /// more than this one.
    pub fn merge_view(&mut self, other: Tally) {
        let count = self.count.max(other.count);
        self.merge(other);
        self.count = count;
    }

    /// Adds what another redaction did.
    pub fn merge(&mut self, other: Tally) {
        self.count += other.count;
        for kind in other.kinds {
            if let Err(at) = self.kinds.binary_search(&kind) {
                self.kinds.insert(at, kind);
            }
        }
    }
}

struct Entry {
    kind: String,
    value: String,
    placeholder: String,
    /// The placeholder stood in for the value in something redacted (a tool's result, a
    /// message): only such a placeholder is restored. A value learned and never seen (the
    /// host's credentials, state read in the background) cannot be named by guessing.
    shown: bool,
}

#[derive(Default)]
struct Inner {
    entries: Vec<Entry>,
    by_value: HashMap<String, usize>,
    by_placeholder: HashMap<String, usize>,
    /// The entries matched exactly (long enough), and the automaton over their values.
    exact: Vec<usize>,
    automaton: Option<AhoCorasick>,
    stale: bool,
    /// Numbers at or below this one were given before (a loaded session's history): never
    /// given again, so an old placeholder cannot name a new value.
    skip: usize,
}

/// The secrets of one session (shared by its sub-agents).
pub struct Vault {
    policy: Arc<Policy>,
    inner: Mutex<Inner>,
    /// The terraform state files read so far.
    states: Mutex<super::StateWatch>,
}

impl Vault {
    /// An empty vault under `policy` (its own values learned already).
    pub fn new(policy: Arc<Policy>) -> Vault {
        let vault = Vault::new_empty(policy);
        vault.learn_policy_values();
        vault
    }

    /// A vault under `policy` that knows nothing yet (see [`Vault::skip_past`]).
    pub fn new_empty(policy: Arc<Policy>) -> Vault {
        Vault { policy, inner: Mutex::new(Inner::default()), states: Mutex::default() }
    }

    /// Learns the policy's own exact values.
    pub fn learn_policy_values(&self) {
        for value in &self.policy.values {
            self.learn("custom", value);
        }
    }

    /// Whether redaction is on.
    pub fn on(&self) -> bool {
        self.policy.on
    }

    /// Learns the sensitive values of the terraform state files in and below `cwd` that
    /// changed since last time.
    pub fn refresh(&self, cwd: &std::path::Path) {
        crate::sync::lock(&self.states).refresh(self, cwd);
    }

    /// Learns `value` as a secret of `kind`, matched exactly from now on.
    pub fn learn(&self, kind: &str, value: &str) {
        let value = value.trim();
        if value.len() < MIN_EXACT || value.contains(OPEN) {
            return;
        }
        let mut inner = crate::sync::lock(&self.inner);
        inner.entry(kind, value);
    }

    /// `text` with every secret replaced by its placeholder, and what was replaced.
    pub fn redact(&self, text: &str) -> (String, Tally) {
        self.redact_showing(text, true)
    }

    /// Learns the secrets `text` holds without showing their placeholders to anyone (a
    /// credential store read at start): they stay unrestorable until a redaction shows
    /// them.
    pub fn absorb(&self, text: &str) {
        let _ = self.redact_showing(text, false);
    }

    fn redact_showing(&self, text: &str, show: bool) -> (String, Tally) {
        let mut tally = Tally::default();
        if !self.policy.on {
            return (text.to_string(), tally);
        }
        let text = super::strip_format(text);
        let mut found = Vec::new();
        let mut learned = Vec::new();
        super::learn::structures(&text, &mut |kind, value| learned.push((kind, value)));
        shapes::scan(&text, &mut found);
        for regex in &self.policy.patterns {
            for m in regex.find_iter(&text).filter(|m| !m.is_empty()) {
                found.push(Found { start: m.start(), end: m.end(), kind: "custom", name: None });
            }
        }
        // Each line of a private key's body is learned too: a later read of the body alone
        // (`sed 1d key.pem`) is redacted by its values.
        for f in found.iter().filter(|f| f.kind == "private-key") {
            for line in text[f.start..f.end].split('\n').flat_map(|l| l.split("\\n")) {
                let line = line.trim();
                let base64 = line.bytes().all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b));
                if line.len() >= 32 && base64 {
                    learned.push(("private-key", line.to_string()));
                }
            }
        }
        // A placeholder already in the text is never (part of) a secret.
        let kept = placeholders(&text);
        found.retain(|f| !kept.iter().any(|&(start, end)| f.start < end && start < f.end));
        let mut inner = crate::sync::lock(&self.inner);
        for (kind, value) in learned {
            if value.len() >= MIN_EXACT && !value.contains(OPEN) {
                inner.entry(kind, &value);
            }
        }
        let mut spans: Vec<(usize, usize, usize)> = Vec::with_capacity(found.len());
        for f in &found {
            let index = inner.entry(f.kind, &text[f.start..f.end]);
            spans.push((f.start, f.end, index));
        }
        inner.exact_spans(&text, &mut spans);
        spans.retain(|&(a, b, _)| !kept.iter().any(|&(start, end)| a < end && start < b));
        spans.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end, index) in spans {
            if start < at {
                continue;
            }
            out.push_str(&text[at..start]);
            let entry = &mut inner.entries[index];
            entry.shown |= show;
            out.push_str(&entry.placeholder);
            tally.add(&entry.kind);
            at = end;
        }
        out.push_str(&text[at..]);
        (out, tally)
    }

    /// Numbers the placeholders in `text` (a history this vault did not make) are never
    /// given again: those placeholders stay unknown rather than naming new values.
    pub fn skip_past(&self, text: &str) {
        let mut inner = crate::sync::lock(&self.inner);
        for (start, end) in placeholders(text) {
            let number = text[start..end - CLOSE.len()].rsplit(':').next();
            if let Some(n) = number.and_then(|n| n.parse::<usize>().ok()) {
                // Only before anything was given (the numbers of given ones are fixed).
                if inner.entries.is_empty() {
                    inner.skip = inner.skip.max(n);
                }
            }
        }
    }

    /// Every value shown and its placeholder as `[kind, value, placeholder]`, in the order
    /// given (to keep for load and resume; see `session/vault_file.rs`).
    pub fn entries(&self) -> Vec<[String; 3]> {
        let inner = crate::sync::lock(&self.inner);
        inner
            .entries
            .iter()
            .filter(|e| e.shown)
            .map(|e| [e.kind.clone(), e.value.clone(), e.placeholder.clone()])
            .collect()
    }

    /// Takes back kept entries, each with its placeholder; later ones are numbered after them.
    pub fn restore_entries(&self, entries: Vec<[String; 3]>) {
        let mut inner = crate::sync::lock(&self.inner);
        for [kind, value, placeholder] in entries {
            let Some(len) = placeholder.strip_prefix(OPEN).and_then(placeholder_len) else {
                continue;
            };
            if len + OPEN.len() != placeholder.len() || inner.by_value.contains_key(&value) {
                continue;
            }
            let number = placeholder[..placeholder.len() - CLOSE.len()].rsplit(':').next();
            let number = number.and_then(|n| n.parse::<usize>().ok()).unwrap_or(0);
            let index = inner.entries.len();
            inner.by_value.insert(value.clone(), index);
            inner.by_placeholder.insert(placeholder.clone(), index);
            if value.len() >= MIN_EXACT {
                inner.exact.push(index);
                inner.stale = true;
            }
            inner.entries.push(Entry { kind, value, placeholder, shown: true });
            inner.skip = inner.skip.max(number.saturating_sub(inner.entries.len()));
        }
    }

    /// How many values it holds.
    pub fn len(&self) -> usize {
        crate::sync::lock(&self.inner).entries.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every string in `value` redacted in place.
    pub fn redact_value(&self, value: &mut Value, tally: &mut Tally) {
        match value {
            Value::String(text) => {
                let (redacted, more) = self.redact(text);
                if more.count > 0 {
                    *text = redacted;
                    tally.merge(more);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_value(v, tally)),
            Value::Object(map) => map.values_mut().for_each(|v| self.redact_value(v, tally)),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// `text` with every placeholder replaced by its value; a placeholder this session
    /// never gave is an error naming it.
    pub fn restore(&self, text: &str) -> Result<String, String> {
        if !text.contains(OPEN) {
            return Ok(text.to_string());
        }
        let inner = crate::sync::lock(&self.inner);
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find(OPEN) {
            out.push_str(&rest[..at]);
            let after = &rest[at + OPEN.len()..];
            let Some(len) = placeholder_len(after) else {
                out.push_str(OPEN);
                rest = after;
                continue;
            };
            let placeholder = &rest[at..at + OPEN.len() + len];
            match inner.by_placeholder.get(placeholder).map(|i| &inner.entries[*i]) {
                Some(entry) if entry.shown => out.push_str(&entry.value),
                _ => {
                    return Err(format!(
                        "{placeholder} is not a secret of this session (it was never shown in \
                         it, or the session was loaded again where its kept placeholders \
                         cannot be opened): nothing ran"
                    ));
                }
            }
            rest = &rest[at + OPEN.len() + len..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// Every string in `value` restored (see [`Vault::restore`]).
    pub fn restore_value(&self, value: &Value) -> Result<Value, String> {
        Ok(match value {
            Value::String(text) => Value::String(self.restore(text)?),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.restore_value(v)).collect::<Result<_, _>>()?)
            }
            Value::Object(map) => {
                Value::Object(
                    map.iter()
                        .map(|(k, v)| Ok((k.clone(), self.restore_value(v)?)))
                        .collect::<Result<_, String>>()?,
                )
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
        })
    }
}

/// Where `text` holds placeholders (whether this session gave them or not).
/// The placeholders `text` holds, each once, in order.
pub fn placeholders_in(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (start, end) in placeholders(text) {
        if !out.iter().any(|p| *p == text[start..end]) {
            out.push(text[start..end].to_string());
        }
    }
    out
}

fn placeholders(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices(OPEN) {
        if let Some(len) = placeholder_len(&text[at + OPEN.len()..]) {
            out.push((at, at + OPEN.len() + len));
        }
    }
    out
}

/// The length of `kind:N__` at the start of `after`, if it is one.
fn placeholder_len(after: &str) -> Option<usize> {
    let colon = after.find(':')?;
    let kind = &after[..colon];
    if kind.is_empty()
        || kind.len() > 48
        || !kind.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return None;
    }
    let digits = after[colon + 1..].bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || !after[colon + 1 + digits..].starts_with(CLOSE) {
        return None;
    }
    Some(colon + 1 + digits + CLOSE.len())
}

impl Inner {
    /// The entry of `value`, added (as `kind`) when new.
    fn entry(&mut self, kind: &str, value: &str) -> usize {
        if let Some(index) = self.by_value.get(value) {
            return *index;
        }
        let index = self.entries.len();
        let placeholder = format!("{OPEN}{kind}:{}{CLOSE}", self.skip + index + 1);
        self.by_value.insert(value.to_string(), index);
        self.by_placeholder.insert(placeholder.clone(), index);
        let exact = value.len() >= MIN_EXACT;
        if exact {
            super::known::remember(value, kind_name(kind));
        }
        let (kind, value) = (kind.to_string(), value.to_string());
        self.entries.push(Entry { kind, value, placeholder, shown: false });
        if exact {
            self.exact.push(index);
            self.stale = true;
        }
        index
    }

    /// Every place `text` holds a value matched exactly, as (start, end, entry).
    fn exact_spans(&mut self, text: &str, spans: &mut Vec<(usize, usize, usize)>) {
        if self.exact.is_empty() {
            return;
        }
        if self.stale || self.automaton.is_none() {
            let values: Vec<&str> =
                self.exact.iter().map(|i| self.entries[*i].value.as_str()).collect();
            self.automaton =
                AhoCorasickBuilder::new().match_kind(MatchKind::LeftmostLongest).build(values).ok();
            self.stale = false;
        }
        let Some(automaton) = &self.automaton else { return };
        for m in automaton.find_iter(text) {
            spans.push((m.start(), m.end(), self.exact[m.pattern().as_usize()]));
        }
    }
}

/// A kind as a static name for the logs (a team's own kinds are `custom`).
fn kind_name(kind: &str) -> &'static str {
    const KINDS: [&str; 8] = [
        "credential",
        "private-key",
        "password",
        "token",
        "terraform-sensitive",
        "kubernetes-secret",
        "custom",
        "secret",
    ];
    KINDS.iter().find(|k| **k == kind).copied().unwrap_or("secret")
}
