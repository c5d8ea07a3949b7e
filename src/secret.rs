//! Text that looks like a secret: PEM private keys, cloud and SaaS tokens of known shapes,
//! and literal values assigned to names such as `password` or `api_key`. What is named by
//! reference (`var.db_password`, `${aws_secret}`, `data.vault_…`) or is a placeholder
//! (`<token>`, `changeme`, `xxxx`) is not a secret. Pure; the patterns are compiled once.
//! Used to keep secrets out of memory; a reason never repeats the secret.

use std::sync::OnceLock;

use regex::Regex;

/// Why `text` looks like it holds a secret, if it does. The reason names the kind of
/// secret (and, for an assignment, the name assigned to), never the value.
pub fn find(text: &str) -> Option<String> {
    if has_private_key(text) {
        return Some("it contains a PEM private key".to_string());
    }
    for (regex, what) in patterns() {
        for found in regex.find_iter(text) {
            if !placeholder(found.as_str()) {
                return Some(format!("it contains what looks like {what}"));
            }
        }
    }
    assignment(text)
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

/// A PEM private key header anywhere in the text, at the start of a line.
fn has_private_key(text: &str) -> bool {
    text.match_indices("-----BEGIN ").any(|(at, _)| {
        let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
        text[line_start..at].trim().is_empty() && is_private_key_header(&text.as_bytes()[at..])
    })
}

/// The token shapes, each with what it is ("a GitHub token").
fn patterns() -> &'static [(Regex, &'static str)] {
    static PATTERNS: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        SHAPES
            .iter()
            .filter_map(|(pattern, what)| match Regex::new(pattern) {
                Ok(regex) => Some((regex, *what)),
                Err(err) => {
                    log::error!("secret pattern {pattern}: {err}");
                    None
                }
            })
            .collect()
    })
}

/// Regular expressions of token shapes that are secrets wherever they appear.
const SHAPES: &[(&str, &str)] = &[
    (r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "an AWS access key id"),
    (
        r#"(?i)aws_secret_access_key["']?\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}(?:[^A-Za-z0-9/+=]|$)"#,
        "an AWS secret access key",
    ),
    (r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b", "a GitHub token"),
    (r"\bgithub_pat_[A-Za-z0-9_]{22,}", "a GitHub token"),
    (r"\bglpat-[A-Za-z0-9_-]{20,}", "a GitLab access token"),
    (r"\bxox[abprs]-[A-Za-z0-9-]{10,}", "a Slack token"),
    (r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]*", "an OpenAI or Anthropic API key"),
    (r"\bAIza[0-9A-Za-z_-]{35}", "a Google API key"),
    (r"\b[sr]k_live_[0-9A-Za-z]{16,}", "a Stripe live key"),
    (r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", "a JSON Web Token"),
    (r"(?i)\bAccountKey=[A-Za-z0-9+/]{40,}={0,2}", "an Azure storage account key"),
    (r"[?&;\s]sig=[A-Za-z0-9%+/=]{30,}", "an Azure shared access signature"),
];

/// Shortest API key (after `sk-`) taken for one; shorter is a word like `sk-learn`.
const MIN_SK_KEY: usize = 32;

/// Whether a match is a placeholder or a documentation example, not a secret.
fn placeholder(found: &str) -> bool {
    if let Some(rest) = found.strip_prefix("sk-")
        && rest.len() < MIN_SK_KEY
    {
        return true;
    }
    let lower = found.to_ascii_lowercase();
    const WORDS: &[&str] = &[
        "xxxx",
        "****",
        "....",
        "…",
        "changeme",
        "change_me",
        "change-me",
        "example",
        "placeholder",
        "dummy",
        "redacted",
        "your_",
        "your-",
    ];
    if WORDS.iter().any(|w| lower.contains(w)) || (lower.starts_with('<') && lower.ends_with('>')) {
        return true;
    }
    // A value of one or two repeated characters (`ghp_000…`, `aaaa…`).
    let mut distinct: Vec<char> = lower.chars().filter(char::is_ascii_alphanumeric).collect();
    distinct.sort_unstable();
    distinct.dedup();
    distinct.len() < 5
}

/// Names whose literal values are secrets (at the end of the name: `db_password`,
/// `clientSecret`, `API_KEY`; not `secret_name` or `token_ttl`).
const ASSIGNMENT: &str = r#"(?i)(?:^|[^A-Za-z0-9_.-])([A-Za-z0-9_.-]*?(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key))["']?[ \t]*(?::|=|:=|=>)[ \t]*(?:"([^"\s]*)"|'([^'\s]*)'|([^\s"',;}\]]+))"#;

/// Shortest literal taken for a secret.
const MIN_LITERAL: usize = 8;

/// A literal secret assigned to a secret's name: why, naming the name.
fn assignment(text: &str) -> Option<String> {
    static REGEX: OnceLock<Option<Regex>> = OnceLock::new();
    let regex = REGEX.get_or_init(|| Regex::new(ASSIGNMENT).ok()).as_ref()?;
    for caps in regex.captures_iter(text) {
        let name = caps.get(1).map_or("", |m| m.as_str());
        let (value, quoted) = match (caps.get(2).or(caps.get(3)), caps.get(4)) {
            (Some(value), _) => (value.as_str(), true),
            (None, Some(value)) => (value.as_str(), false),
            (None, None) => continue,
        };
        if literal_secret(value, quoted) {
            let name = crate::text::clip(name, 64);
            return Some(format!("it sets `{name}` to what looks like a literal secret"));
        }
    }
    None
}

/// Whether a value assigned to a secret's name is itself a secret: long enough, and not a
/// reference, an expression or a placeholder.
fn literal_secret(value: &str, quoted: bool) -> bool {
    if value.chars().count() < MIN_LITERAL || placeholder(value) {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    const REFERENCES: &[&str] = &[
        "$", "{{", "%{", "var.", "local.", "data.", "module.", "each.", "arn:", "vault:", "ref+",
        "secret:", "env:", "http://", "https://", "file:", "/", "~/", "./", "../",
    ];
    if REFERENCES.iter().any(|r| lower.starts_with(r)) || lower.contains("${") {
        return false;
    }
    if quoted {
        return true;
    }
    // YAML tags, anchors and aliases (`!vault |`, `*db_password`).
    if value.starts_with(['!', '&', '*']) {
        return false;
    }
    // Unquoted: an expression (a call, an attribute path) is a reference; a lone word of
    // lower-case letters is a word (`password: required`), not a secret.
    let identifier =
        |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || "_-[]\"*".contains(c));
    if value.contains('(') || (value.contains('.') && value.split('.').all(identifier)) {
        return false;
    }
    !value.chars().all(|c| c.is_ascii_lowercase() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (text, the reason's words when it is a secret, or `None`).
    const ROWS: &[(&str, Option<&str>)] = &[
        // Private keys.
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n", Some("PEM private key")),
        ("notes:\n  -----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n", Some("PEM private key")),
        ("-----BEGIN CERTIFICATE-----\nMIIC\n", None),
        ("the header is `-----BEGIN PRIVATE KEY-----` in the docs", None),
        // AWS.
        ("aws_access_key_id = AKIAZ7QW4N2KX5RT3HVB", Some("AWS access key id")),
        ("session: ASIAQ2W3E4R5T6Y7U8I9", Some("AWS access key id")),
        ("the documented example AKIAIOSFODNN7EXAMPLE", None),
        ("AKIAZ7QW4N2KX5RT3HVBEXTRA is too long", None),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Rt3kLmN",
            Some("AWS secret access key"),
        ),
        ("AWS_SECRET_ACCESS_KEY=\"Zx9/Qw8+Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVbNm\"", Some("AWS secret")),
        ("aws_secret_access_key = ${AWS_SECRET}", None),
        // GitHub, GitLab, Slack.
        ("token: ghp_4fQ9zL2mN8pR5tV7xB1cD3eG6hJ0kW9sY2uA", Some("GitHub token")),
        ("GH_TOKEN=gho_Zq8Wm3Nx5Bv7Cr9Ty1Ui4Op6As2Df0Gh8Jk5", Some("GitHub token")),
        ("github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789", Some("GitHub token")),
        ("ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", None),
        ("glpat-Xy7Zq2Wm9Nb4Vc6Lk8Jh", Some("GitLab")),
        ("SLACK=xoxb-2048123456-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", Some("Slack token")),
        // LLM providers, Google, Stripe.
        ("OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0f", Some("OpenAI")),
        ("key sk-ant-api03-Zq8Wm3Nx5Bv7Cr9Ty1Ui4Op6As2Df0Gh8Jk5LzXc-AA", Some("Anthropic")),
        ("pip install scikit-learn; sk-learn is its nickname", None),
        ("sk-0123", None),
        ("google: AIzaSyB3x9Qw7Er5Ty3Ui1Op9As7Df5Gh3Jk1Lz0", Some("Google API key")),
        ("STRIPE=sk_live_51HqZ2mLkJ8nB3vC7xZ9qW4eR", Some("Stripe")),
        ("use sk_test_ keys in staging", None),
        // Tokens in other shapes.
        (
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            Some("JSON Web Token"),
        ),
        (
            "DefaultEndpointsProtocol=https;AccountName=st;AccountKey=Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVbNm1234567890ab==;",
            Some("Azure storage account key"),
        ),
        (
            "https://st.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig=Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz%3D",
            Some("shared access signature"),
        ),
        // Assignments of literals to secret names.
        ("db_password = \"Sup3r-S3cret-2024\"", Some("`db_password`")),
        ("  client_secret: 'q8W3m5N7b9V1c2X4'", Some("`client_secret`")),
        ("{\"apiKey\": \"a1b2c3d4e5f6g7h8\"}", Some("`apiKey`")),
        ("export DB_PASSWORD=hunter2hunter2", Some("`DB_PASSWORD`")),
        ("spring.datasource.password=Tr0ub4dor&3", Some("`spring.datasource.password`")),
        ("password: hunter2hunter2 # the old one", Some("`password`")),
        // References, placeholders, short values and other names.
        ("password = var.db_password", None),
        ("master_password = \"${random_password.db.result}\"", None),
        ("password = random_password.db.result", None),
        ("password = data.vault_generic_secret.db.data[\"password\"]", None),
        ("token: ${{ secrets.GITHUB_TOKEN }}", None),
        ("DB_PASSWORD=$(vault kv get -field=password secret/db)", None),
        ("password = \"changeme\"", None),
        ("api_key = \"<token>\"", None),
        ("client_secret = \"<client-secret-from-the-portal>\"", None),
        ("db_password = \"Ab<9x>Qz!r2\"", Some("`db_password`")),
        ("password: \"********\"", None),
        ("api_key = \"xxxxxxxxxxxxxxxx\"", None),
        ("password = \"abc123\"", None),
        ("secret_name = \"prod/db/credentials\"", None),
        ("secretName: postgres-credentials", None),
        ("token_ttl = \"3600s\"", None),
        ("secret_arn = \"arn:aws:secretsmanager:eu-west-1:123456789012:secret:db-AbC\"", None),
        ("ssh_private_key = file(\"~/.ssh/id_ed25519\")", None),
        ("private_key = \"~/.ssh/id_ed25519\"", None),
        ("password: required", None),
        ("password: !vault |", None),
        ("The db_password variable is marked sensitive = true; never print it.", None),
        ("resource \"aws_s3_bucket\" \"logs\" { bucket = \"acme-logs-prod\" }", None),
    ];

    #[test]
    fn secrets_are_found_and_references_are_not() {
        assert!(ROWS.len() >= 30);
        let mut wrong = Vec::new();
        for (text, expected) in ROWS {
            let got = find(text);
            match (expected, &got) {
                (Some(words), Some(reason)) if reason.contains(words) => {}
                (None, None) => {}
                _ => wrong.push(format!("{text:?}: expected {expected:?}, got {got:?}")),
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn a_reason_never_repeats_the_secret() {
        for (text, expected) in ROWS {
            let Some(reason) = find(text) else { continue };
            assert!(expected.is_some());
            // The name assigned to may be named; nothing else of the text may be.
            let unnamed: String = reason.split('`').step_by(2).collect();
            for word in text.split(|c: char| c.is_whitespace() || "=:\"'{}".contains(c)) {
                if word.len() >= 6 {
                    assert!(!unnamed.contains(word), "{reason:?} repeats {word:?}");
                }
            }
        }
    }

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(patterns().len(), SHAPES.len());
        assert!(Regex::new(ASSIGNMENT).is_ok());
    }

    #[test]
    fn private_key_headers_are_recognised() {
        assert!(is_private_key_header(b"-----BEGIN RSA PRIVATE KEY-----\nMII"));
        assert!(is_private_key_header(b"\n-----BEGIN OPENSSH PRIVATE KEY-----\n"));
        assert!(is_private_key_header(b"-----BEGIN PRIVATE KEY-----"));
        assert!(!is_private_key_header(b"-----BEGIN CERTIFICATE-----\nPRIVATE KEY"));
        assert!(!is_private_key_header(b"-----BEGIN PUBLIC KEY-----"));
        assert!(!is_private_key_header(b"resource \"x\" {}"));
    }
}
