//! Secrets recognised by their shape, in one pass: an Aho-Corasick automaton of keywords
//! (case-insensitive) finds the lines that may hold one, and only those lines meet the
//! patterns, combined in one `RegexSet`; PEM private keys (also JSON-escaped, anywhere in a
//! line) are followed from `-----BEGIN` to their end; bare AWS secret keys (40 characters
//! of base64 with upper and lower case, digits and high entropy) are found by a byte scan.
//! Text with no keyword costs the automaton and the byte scan, nothing more.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::{Regex, RegexSet};

use super::check;

/// A secret found: its bytes in the text, its kind, and for an assignment the name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub start: usize,
    pub end: usize,
    pub kind: &'static str,
    /// The name a value is assigned to (`db_password`), when the shape has one.
    pub name: Option<(usize, usize)>,
}

/// How a match is judged after the pattern.
#[derive(Clone, Copy)]
enum Check {
    /// A token shape: not a placeholder or documentation example.
    Token,
    /// A literal assigned to a secret's name: not a reference or expression.
    Literal,
    /// A value after a key-like name: high entropy.
    Entropy,
    /// A password in a URL: not a variable or mask.
    UrlPassword,
    /// Base64 of a PEM private key.
    Base64Pem,
}

/// One pattern. The value is the group `v`, `q` (double-quoted) or `s` (single-quoted),
/// else the whole match; the group `n` is the name assigned to.
struct Rule {
    kind: &'static str,
    pattern: &'static str,
    check: Check,
}

/// What follows a secret's name in an assignment: `:`, `=`, `:=`, `=>`, then the value,
/// quoted (blanks allowed) or bare.
macro_rules! value {
    () => {
        r#"["']?[ \t]*(?::|=|:=|=>)[ \t]*(?:"(?P<q>[^"\n]*)"|'(?P<s>[^'\n]*)'|(?P<v>[^\s"',;}\]]+))"#
    };
}

const RULES: &[Rule] = &[
    Rule {
        kind: "aws-access-key-id",
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
        check: Check::Token,
    },
    Rule {
        kind: "aws-secret-key",
        pattern: r#"(?i)aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?(?P<v>[A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)"#,
        check: Check::Token,
    },
    Rule {
        kind: "github-token",
        pattern: r"\b(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b|github_pat_[A-Za-z0-9_]{22,})",
        check: Check::Token,
    },
    Rule {
        kind: "gitlab-token",
        pattern: r"\bgl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,}",
        check: Check::Token,
    },
    Rule { kind: "slack-token", pattern: r"\bxox[abeprs]-[A-Za-z0-9-]{10,}", check: Check::Token },
    Rule {
        kind: "stripe-key",
        pattern: r"\b(?:(?:sk|rk)_live_[0-9A-Za-z]{16,}|whsec_[0-9A-Za-z]{24,})",
        check: Check::Token,
    },
    Rule {
        kind: "api-key",
        pattern: r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]*",
        check: Check::Token,
    },
    Rule { kind: "google-api-key", pattern: r"\bAIza[0-9A-Za-z_-]{35}", check: Check::Token },
    Rule {
        kind: "jwt",
        pattern: r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        check: Check::Token,
    },
    Rule {
        kind: "azure-key",
        pattern: r"(?i)\b(?:AccountKey|SharedAccessKey)=(?P<v>[A-Za-z0-9+/]{20,}={0,2})",
        check: Check::Token,
    },
    Rule {
        kind: "azure-sas",
        pattern: r"[?&;\s]sig=(?P<v>[A-Za-z0-9%+/=]{30,})",
        check: Check::Token,
    },
    Rule {
        kind: "private-key",
        pattern: r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{8,}={0,2}",
        check: Check::Base64Pem,
    },
    Rule {
        kind: "url-password",
        pattern: r#"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^/\s:@"'<>]{1,256}:(?P<v>[^/\s@"'<>]{1,256})@"#,
        check: Check::UrlPassword,
    },
    Rule {
        kind: "password",
        pattern: concat!(
            r#"(?i)--?[a-z-]*(?:password|passwd|passphrase|token|secret|api-?key)(?:=|[ \t]+)"#,
            r#"(?:"(?P<q>[^"\n]*)"|'(?P<s>[^'\n]*)'|(?P<v>[^\s"'|;&)]+))"#
        ),
        check: Check::Literal,
    },
    Rule {
        kind: "password",
        pattern: concat!(
            r#"(?i)(?:^|[^A-Za-z0-9_.-])(?P<n>[A-Za-z0-9_.-]*?(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|key[_-]?data|credentials?))"#,
            value!()
        ),
        check: Check::Literal,
    },
    Rule {
        kind: "high-entropy",
        pattern: concat!(
            r#"(?i)(?:^|[^A-Za-z0-9_.-])(?P<n>[A-Za-z0-9_.-]*?(?:key|auth|signature|salt|cred|hmac|private))"#,
            r#"["']?[ \t]*(?::|=|:=|=>)[ \t]*["']?(?P<v>[A-Za-z0-9+/=_.~-]{16,})"#
        ),
        check: Check::Entropy,
    },
];

/// Keywords, at least one of which is in every match of every rule (case-insensitive).
const KEYWORDS: &[&str] = &[
    "akia",
    "asia",
    "abia",
    "acca",
    "secret",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "gldt-",
    "glrt-",
    "glptt-",
    "xox",
    "_live_",
    "whsec_",
    "sk-",
    "aiza",
    "eyj",
    "key",
    "sig=",
    "://",
    "pass",
    "pwd",
    "token",
    "auth",
    "signature",
    "salt",
    "cred",
    "hmac",
    "private",
    "ls0tls1crudjti",
    BEGIN,
];

/// Where a PEM block starts.
const BEGIN: &str = "-----begin";

/// Widest stretch of a line looked at around a keyword, each side.
const WINDOW: usize = 4096;

struct Compiled {
    keywords: AhoCorasick,
    set: RegexSet,
    rules: Vec<Regex>,
}

fn compiled() -> Option<&'static Compiled> {
    static COMPILED: OnceLock<Option<Compiled>> = OnceLock::new();
    COMPILED
        .get_or_init(|| {
            let keywords = AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::LeftmostFirst)
                .build(KEYWORDS);
            let set = RegexSet::new(RULES.iter().map(|r| r.pattern));
            let rules: Result<Vec<Regex>, _> =
                RULES.iter().map(|r| Regex::new(r.pattern)).collect();
            match (keywords, set, rules) {
                (Ok(keywords), Ok(set), Ok(rules)) => Some(Compiled { keywords, set, rules }),
                (keywords, set, rules) => {
                    log::error!(
                        "secret patterns: {:?} {:?} {:?}",
                        keywords.err(),
                        set.err(),
                        rules.err()
                    );
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
    let mut windows: Vec<(usize, usize)> = Vec::new();
    for hit in compiled.keywords.find_iter(bytes) {
        if KEYWORDS[hit.pattern().as_usize()] == BEGIN {
            pem(text, hit.start(), found);
        }
        if windows.last().is_some_and(|&(_, end)| hit.start() < end) {
            continue;
        }
        windows.push(window(text, hit.start()));
    }
    for (start, end) in windows {
        rules_in(compiled, text, start, end, found);
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

fn rules_in(compiled: &Compiled, text: &str, start: usize, end: usize, found: &mut Vec<Found>) {
    let line = &text[start..end];
    for index in compiled.set.matches(line).iter() {
        let rule = &RULES[index];
        for caps in compiled.rules[index].captures_iter(line) {
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
                Check::Literal => check::literal_secret(value.as_str(), quoted),
                Check::Entropy => check::high_entropy(value.as_str()),
                Check::UrlPassword => check::url_password(value.as_str()),
                Check::Base64Pem => check::base64_pem(value.as_str()),
            };
            if !ok || value.as_str().contains(super::vault::OPEN) {
                continue;
            }
            let name = caps.name("n").map(|n| (start + n.start(), start + n.end()));
            let kind = match name.map(|(a, b)| text[a..b].to_ascii_lowercase()) {
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

/// Runs of exactly 40 base64 characters that look random (`aws-secret-key`).
fn bare_aws_secrets(bytes: &[u8], found: &mut Vec<Found>) {
    let body = |b: u8| b.is_ascii_alphanumeric() || b == b'/' || b == b'+';
    let mut i = 0;
    while i < bytes.len() {
        if !body(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && body(bytes[i]) {
            i += 1;
        }
        if i - start == AWS_SECRET_LEN
            && bytes.get(i) != Some(&b'=')
            && check::random_base64(&bytes[start..i])
            && !found.iter().any(|f| f.start < i && start < f.end)
        {
            found.push(Found { start, end: i, kind: "aws-secret-key", name: None });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles_and_every_rule_has_a_keyword() {
        assert!(compiled().is_some());
        assert_eq!(compiled().map(|c| c.rules.len()), Some(RULES.len()));
    }
}
