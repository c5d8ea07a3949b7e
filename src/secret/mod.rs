//! What a secret is, and keeping secrets out of the model's context (issue 33). One room
//! owns it: `rules.rs` (the catalogue) and `shapes.rs` (running it: tokens, keys,
//! passwords in assignments and flags, URLs with credentials, PEM private keys anywhere,
//! high-entropy values after key-like names, bare AWS secret keys; one keyword automaton,
//! then the rules its keywords wake on the lines it points at), `check.rs` (a placeholder,
//! a reference or a word is not a secret), `learn.rs` (what terraform marks sensitive and
//! Kubernetes `Secret` data, learned as exact values), `vault.rs` (a session's
//! placeholders, redaction and restore) and `host.rs` (the host's own credentials:
//! environment, provider key, credential stores, terraform state files). Memory's filter
//! ([`find`]), the logs ([`scrub`], with every value any vault of the process learned:
//! `known.rs`) and redaction all use it. Format characters
//! (U+200B…U+200D, U+2060, U+FEFF) are removed before matching.

mod check;
mod host;
mod known;
mod learn;
mod rules;
mod shapes;
mod vault;

use std::borrow::Cow;

pub use check::OPEN;
pub use host::{StateWatch, from_env, from_stores};
pub use shapes::{Found, scan};
pub use vault::{MIN_EXACT, Tally, Vault, placeholders_in};

/// How a node redacts: on or off (`IAC_CODE_REDACT=off`, `"redact": "off"`), and the
/// team's own patterns and exact values (`redactPatterns`, `redactValues`).
#[derive(Debug, Clone)]
pub struct Policy {
    pub on: bool,
    pub patterns: Vec<regex::Regex>,
    pub values: Vec<String>,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy { on: true, patterns: Vec::new(), values: Vec::new() }
    }
}

/// The format characters a secret may hide behind (zero-width space, non-joiner, joiner,
/// word joiner, byte-order mark).
const FORMAT: [char; 5] = ['\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}'];

/// `text` without format characters.
pub fn strip_format(text: &str) -> Cow<'_, str> {
    // Each is three bytes in UTF-8 starting 0xE2 or 0xEF (box drawing and dashes share
    // the first): look at those only.
    const BYTES: [[u8; 3]; 5] = [
        [0xE2, 0x80, 0x8B],
        [0xE2, 0x80, 0x8C],
        [0xE2, 0x80, 0x8D],
        [0xE2, 0x81, 0xA0],
        [0xEF, 0xBB, 0xBF],
    ];
    let bytes = text.as_bytes();
    let has = memchr::memchr2_iter(0xE2, 0xEF, bytes)
        .any(|at| bytes.get(at..at + 3).is_some_and(|b| BYTES.iter().any(|f| f == b)));
    if !has {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().filter(|c| !FORMAT.contains(c)).collect())
}

/// `text` with every secret its shapes show, and every value a vault of this process
/// learned, replaced by `__SECRET:<kind>__` (no number: for logs, which no session's vault
/// sees; off with `IAC_CODE_REDACT=off`).
pub fn scrub(text: &str) -> Cow<'_, str> {
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let off = OFF.get_or_init(|| {
        std::env::var("IAC_CODE_REDACT").is_ok_and(|v| matches!(v.trim(), "off" | "false" | "0"))
    });
    if *off {
        return Cow::Borrowed(text);
    }
    let stripped = strip_format(text);
    let mut found = Vec::new();
    scan(&stripped, &mut found);
    known::spans(&stripped, &mut found);
    if found.is_empty() {
        return stripped;
    }
    found.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
    let mut out = String::with_capacity(stripped.len());
    let mut at = 0;
    for f in &found {
        if f.start < at {
            continue;
        }
        out.push_str(&stripped[at..f.start]);
        out.push_str(&format!("{OPEN}{}__", f.kind));
        at = f.end;
    }
    out.push_str(&stripped[at..]);
    Cow::Owned(out)
}

/// What a kind of secret is called in a sentence.
fn described(kind: &str) -> &'static str {
    match kind {
        "private-key" => "a PEM private key",
        "aws-access-key-id" => "an AWS access key id",
        "aws-secret-key" => "an AWS secret access key",
        "github-token" => "a GitHub token",
        "gitlab-token" => "a GitLab access token",
        "slack-token" => "a Slack token",
        "stripe-key" => "a Stripe live key",
        "api-key" => "an OpenAI or Anthropic API key",
        "google-api-key" => "a Google API key",
        "jwt" => "a JSON Web Token",
        "azure-key" => "an Azure storage account key",
        "azure-sas" => "an Azure shared access signature",
        "url-password" => "a password in a URL",
        "high-entropy" => "a random key",
        "terraform-sensitive" => "a value terraform marks sensitive",
        "kubernetes-secret" => "the data of a Kubernetes Secret",
        _ => "a secret",
    }
}

/// Why `text` looks like it holds a secret, if it does. The reason names the kind of
/// secret (and, for an assignment, the name assigned to), never the value.
pub fn find(text: &str) -> Option<String> {
    let text = strip_format(text);
    let mut found = Vec::new();
    scan(&text, &mut found);
    found.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
    if let Some(first) = found.first() {
        if let Some((start, end)) = first.name {
            let name = crate::text::clip(&text[start..end], 64);
            return Some(format!("it sets `{name}` to what looks like a literal secret"));
        }
        return Some(format!("it contains what looks like {}", described(first.kind)));
    }
    let mut kind = None;
    learn::structures(&text, &mut |k, value| {
        if value.len() >= MIN_EXACT {
            kind.get_or_insert(k);
        }
    });
    kind.map(|kind| format!("it contains {}", described(kind)))
}

/// The first bytes of a PEM private key (`-----BEGIN … PRIVATE KEY-----`).
pub fn is_private_key_header(head: &[u8]) -> bool {
    let head = &head[..head.len().min(128)];
    let start = head.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(head.len());
    let head = &head[start..];
    head.starts_with(b"-----BEGIN ")
        && head
            .split(|b| *b == b'\n')
            .next()
            .is_some_and(|line| line.windows(11).any(|w| w == b"PRIVATE KEY"))
}

#[cfg(test)]
mod tests;
