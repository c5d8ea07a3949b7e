//! Judging a match: whether what a pattern found is a secret, or a placeholder, a
//! documentation example, a reference (`var.db_password`, `${aws_secret}`) or a word.

use base64::Engine;

/// How a placeholder starts: `__SECRET:` then the kind, `:`, the number and `__`. Never
/// a secret itself (this file), made and restored by `vault.rs`.
pub const OPEN: &str = "__SECRET:";

/// Shortest API key (after `sk-`) taken for one; shorter is a word like `sk-learn`.
const MIN_SK_KEY: usize = 32;

/// Shortest literal taken for a secret.
const MIN_LITERAL: usize = 8;

/// Whether a match is a placeholder or a documentation example, not a secret.
pub(super) fn placeholder(found: &str) -> bool {
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

/// Whether a value assigned to a secret's name is itself a secret: long enough, and not a
/// reference, an expression or a placeholder.
pub(super) fn literal_secret(value: &str, quoted: bool, flag: bool) -> bool {
    let value = value.trim();
    // A PEM key is its own kind (`shapes::pem`).
    if value.chars().count() < MIN_LITERAL || placeholder(value) || value.contains("-----BEGIN") {
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
    // Quoted, blanks and all, it is the value: a passphrase is words too
    // (`"correct horse battery staple"`), and hiding a sentence costs less than showing one.
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
    // A dotted path is a reference (`aws_db_instance.main.password`) unless a part of it
    // is random (a Terraform Cloud token, `xxxx.atlasv1.yyyy`).
    let random = |p: &str| {
        p.len() >= 20
            && p.bytes().any(|b| b.is_ascii_digit())
            && p.bytes().any(|b| b.is_ascii_uppercase())
            && p.bytes().any(|b| b.is_ascii_lowercase())
    };
    let path = value.contains('.') && value.split('.').all(identifier);
    if value.contains('(') || (path && !value.split('.').any(random)) {
        return false;
    }
    // After a flag (`--password swordfish`) a word is the value; after a name in YAML or
    // an assignment (`password: required`) a lone lower-case word is a word.
    flag || !value.chars().all(|c| c.is_ascii_lowercase() || c == '-' || c == '_')
}

/// Bits of entropy per character of `value`.
pub(super) fn entropy(value: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for b in value {
        counts[usize::from(*b)] += 1;
    }
    let n = value.len() as f64;
    counts.iter().filter(|c| **c > 0).map(|c| f64::from(*c) / n).map(|p| -p * p.log2()).sum()
}

/// Whether a value after a key-like name (`signing_key: …`) looks random: 16 characters or
/// more, letters and digits mixed, 3.5 bits of entropy per character or more.
pub(super) fn high_entropy(value: &str) -> bool {
    let bytes = value.as_bytes();
    let digits = bytes.iter().any(u8::is_ascii_digit);
    let letters = bytes.iter().any(u8::is_ascii_alphabetic);
    let dotted = value.contains('.') && !value.contains(['/', '+', '=']);
    let reference = value.starts_with(['/', '~', '.', '$']);
    digits && letters && !dotted && !reference && !placeholder(value) && entropy(bytes) >= 3.5
}

/// Whether a URL's password is a value, not a variable (`$PASS`, `${…}`) or a mask.
pub(super) fn url_password(value: &str) -> bool {
    !(value.is_empty()
        || value.starts_with(['$', '{', '<', '%', '*'])
        || value.chars().all(|c| c == 'x' || c == 'X' || c == '*')
        || value.contains(OPEN))
}

/// Whether base64 text decodes to a PEM private key.
pub(super) fn base64_pem(value: &str) -> bool {
    let head = &value.as_bytes()[..value.len().min(64) / 4 * 4];
    base64::engine::general_purpose::STANDARD
        .decode(head)
        .is_ok_and(|decoded| decoded.windows(11).any(|w| w == b"PRIVATE KEY"))
}

/// Whether 40 characters of base64 look like a random key: upper and lower case and digits,
/// 4 bits of entropy per character or more (a git hash, a word or a path does not).
pub(super) fn random_base64(run: &[u8]) -> bool {
    run.iter().any(u8::is_ascii_uppercase)
        && run.iter().any(u8::is_ascii_lowercase)
        && run.iter().any(u8::is_ascii_digit)
        && entropy(run) >= 4.0
}
