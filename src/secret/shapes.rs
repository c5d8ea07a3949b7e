//! Secrets recognised by their shape, in one pass: an Aho-Corasick automaton of keywords
//! (over a lower-case copy) finds the lines that may hold one, and only those lines meet the
//! patterns their keywords wake (a bit mask per keyword), one pass of each; PEM private keys (also JSON-escaped, anywhere in a
//! line) are followed from `-----BEGIN` to their end; bare AWS secret keys (40 characters
//! of base64 with upper and lower case, digits and high entropy) are found by a byte scan.
//! Text with no keyword costs the automaton and the byte scan, nothing more. Each pattern
//! is compiled the first time a keyword wakes it (all of them together weigh megabytes,
//! and a log line or a session may never need most), and every one is checked to compile
//! by the unit tests.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::Regex;

use super::check;
use super::rules::{BEGIN, Check, KEYWORDS, RULES};

/// A secret found: its bytes in the text, its kind, and for an assignment the name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub start: usize,
    pub end: usize,
    pub kind: &'static str,
    /// The name a value is assigned to (`db_password`), when the shape has one.
    pub name: Option<(usize, usize)>,
}

/// Widest stretch of a line looked at around a keyword, each side.
const WINDOW: usize = 4096;

struct Compiled {
    keywords: AhoCorasick,
    /// Each keyword's rules, with those of the keywords inside it (a match of the longer
    /// hides the shorter one from a leftmost search).
    masks: Vec<u32>,
    /// Each rule's pattern, compiled when first needed.
    rules: Vec<OnceLock<Option<Regex>>>,
}

impl Compiled {
    /// Rule `index`'s pattern (`None`, logged once, if it does not compile).
    fn rule(&self, index: usize) -> Option<&Regex> {
        self.rules[index]
            .get_or_init(|| {
                Regex::new(RULES[index].pattern)
                    .map_err(|err| log::error!("secret pattern {index}: {err}"))
                    .ok()
            })
            .as_ref()
    }
}

fn compiled() -> Option<&'static Compiled> {
    static COMPILED: OnceLock<Option<Compiled>> = OnceLock::new();
    COMPILED
        .get_or_init(|| {
            // Matched against the text in lower case (a copy; the same byte offsets): a
            // case-sensitive automaton is several times faster than a case-insensitive one.
            let keywords = AhoCorasickBuilder::new()
                .match_kind(MatchKind::LeftmostFirst)
                .build(KEYWORDS.iter().map(|(k, _)| k));
            let rules = RULES.iter().map(|_| OnceLock::new()).collect();
            match keywords {
                Ok(keywords) => {
                    let masks = KEYWORDS
                        .iter()
                        .map(|(outer, _)| {
                            let inside = KEYWORDS.iter().filter(|(k, _)| outer.contains(k));
                            inside.fold(0, |mask, (_, rules)| mask | rules)
                        })
                        .collect();
                    Some(Compiled { keywords, masks, rules })
                }
                Err(err) => {
                    log::error!("secret keywords: {err}");
                    None
                }
            }
        })
        .as_ref()
}

/// Every secret `text` holds by its shape, in no particular order (overlaps possible).
pub fn scan(text: &str, found: &mut Vec<Found>) {
    let Some(compiled) = compiled() else { return };
    let bytes = text.as_bytes();
    // Each line a keyword is in, once, with the rules its keywords wake.
    let mut windows: Vec<(usize, usize, u32)> = Vec::new();
    let lower = text.to_ascii_lowercase();
    for hit in compiled.keywords.find_iter(lower.as_bytes()) {
        let (keyword, _) = KEYWORDS[hit.pattern().as_usize()];
        let rules = compiled.masks[hit.pattern().as_usize()];
        if keyword == BEGIN {
            pem(text, hit.start(), found);
        }
        if let Some(last) = windows.last_mut()
            && hit.start() < last.1
        {
            last.2 |= rules;
            continue;
        }
        let (start, end) = window(text, hit.start());
        windows.push((start, end, rules));
    }
    for (start, end, rules) in windows {
        rules_in(compiled, text, (start, end), rules, found);
    }
    bare_aws_secrets(bytes, found);
}

/// The line around `at`, at most `WINDOW` bytes each side, on character boundaries.
fn window(text: &str, at: usize) -> (usize, usize) {
    let bytes = text.as_bytes();
    let low = at.saturating_sub(WINDOW);
    let mut start = memchr::memrchr(b'\n', &bytes[low..at]).map_or(low, |n| low + n + 1);
    let high = (at + WINDOW).min(bytes.len());
    let mut end = memchr::memchr(b'\n', &bytes[at..high]).map_or(high, |n| at + n);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (start, end)
}

fn rules_in(
    compiled: &Compiled,
    text: &str,
    (start, end): (usize, usize),
    rules: u32,
    found: &mut Vec<Found>,
) {
    let line = &text[start..end];
    for (index, rule) in RULES.iter().enumerate().filter(|(i, _)| rules & (1 << i) != 0) {
        if !rule.needs.is_empty()
            && !rule.needs.iter().any(|b| memchr::memchr(*b, line.as_bytes()).is_some())
        {
            continue;
        }
        let Some(pattern) = compiled.rule(index) else { continue };
        for caps in pattern.captures_iter(line) {
            let (value, quoted) = match (caps.name("q").or(caps.name("s")), caps.name("v")) {
                (Some(value), _) => (value, true),
                (None, Some(value)) => (value, false),
                (None, None) => match caps.get(0) {
                    Some(value) => (value, false),
                    None => continue,
                },
            };
            let ok = match rule.check {
                Check::Token => !check::placeholder(value.as_str()),
                Check::Literal => check::literal_secret(value.as_str(), quoted, false),
                Check::Flag => check::literal_secret(value.as_str(), quoted, true),
                Check::Entropy => check::high_entropy(value.as_str()),
                Check::UrlPassword => check::url_password(value.as_str()),
                Check::Base64Pem => check::base64_pem(value.as_str()),
            };
            if !ok || value.as_str().contains(check::OPEN) {
                continue;
            }
            let name = caps.name("n").map(|n| (start + n.start(), start + n.end()));
            let kind = match name.map(|(a, b)| text[a..b].to_ascii_lowercase()) {
                // A public key is no secret, however random it looks.
                Some(name) if rule.kind == "high-entropy" && name.contains("public") => continue,
                Some(name) if rule.kind == "password" && !name.contains("pass") => {
                    if name.contains("token") { "token" } else { "secret" }
                }
                _ => rule.kind,
            };
            found.push(Found {
                start: start + value.start(),
                end: start + value.end(),
                kind,
                name,
            });
        }
    }
}

/// A PEM private key whose `-----BEGIN` is at `at`: to the end of its `-----END … KEY-----`
/// line (or of the text, when it was cut off).
fn pem(text: &str, at: usize, found: &mut Vec<Found>) {
    let head = &text.as_bytes()[at..];
    let line = &head[..head.len().min(80)];
    let dashes = line.get(11..).and_then(|rest| memchr::memmem::find(rest, b"-----"));
    let Some(dashes) = dashes else { return };
    let label = &line[11..11 + dashes];
    if !label.ends_with(b"PRIVATE KEY") {
        return;
    }
    // A header with no key after it is a mention (documentation), not a key.
    let after = &head[(11 + dashes + 5).min(head.len())..];
    let mut i = 0;
    while i < after.len() {
        match after[i] {
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            b'\\' if after.get(i + 1).is_some_and(|b| *b == b'n' || *b == b'r') => i += 2,
            _ => break,
        }
    }
    let body =
        after[i..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'+' || **b == b'/');
    if body.count() < MIN_PEM_BODY {
        return;
    }
    let rest = &text[at..];
    let end = match rest.find("-----END ") {
        Some(n) => {
            let after = &rest[n + 9..];
            after.find("-----").map_or(rest.len(), |m| n + 9 + m + 5)
        }
        None => rest.len(),
    };
    found.push(Found { start: at, end: at + end, kind: "private-key", name: None });
}

/// Fewest base64 characters after a PEM header for it to be a key.
const MIN_PEM_BODY: usize = 16;

/// Length of an AWS secret access key.
const AWS_SECRET_LEN: usize = 40;

/// Runs of exactly 40 base64 characters that look random (`aws-secret-key`). One
/// branch-free step per byte: the run's length is carried, and looked at only where a run
/// ends.
fn bare_aws_secrets(bytes: &[u8], found: &mut Vec<Found>) {
    static BODY: [u8; 256] = {
        let mut table = [0u8; 256];
        let mut b = 0;
        while b < 256 {
            let c = b as u8;
            table[b] = (c.is_ascii_alphanumeric() || c == b'/' || c == b'+') as u8;
            b += 1;
        }
        table
    };
    let mut run = 0usize;
    let mut ends = Vec::new();
    for (i, b) in bytes.iter().enumerate() {
        let body = usize::from(BODY[usize::from(*b)]);
        if run == AWS_SECRET_LEN && body == 0 {
            ends.push(i);
        }
        run = (run + 1) * body;
    }
    if run == AWS_SECRET_LEN {
        ends.push(bytes.len());
    }
    for end in ends {
        let start = end - AWS_SECRET_LEN;
        if bytes.get(end) != Some(&b'=')
            && check::random_base64(&bytes[start..end])
            && !found.iter().any(|f| f.start < end && start < f.end)
        {
            found.push(Found { start, end, kind: "aws-secret-key", name: None });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles_and_every_rule_has_a_keyword() {
        let compiled = compiled().unwrap();
        assert_eq!(compiled.rules.len(), RULES.len());
        for (index, rule) in RULES.iter().enumerate() {
            assert!(compiled.rule(index).is_some(), "{}", rule.pattern);
        }
        assert!(RULES.len() <= 32);
        for index in 0..RULES.len() {
            assert!(KEYWORDS.iter().any(|(_, rules)| rules & (1 << index) != 0), "{index}");
        }
    }
}
