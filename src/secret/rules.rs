//! The catalogue of secret shapes: each rule's pattern, how a match is judged, the bytes
//! every match holds, and the keywords that wake the rules (`shapes.rs` runs them).

/// How a match is judged after the pattern.
#[derive(Clone, Copy)]
pub(super) enum Check {
    /// A token shape: not a placeholder or documentation example.
    Token,
    /// A literal assigned to a secret's name: not a reference or expression.
    Literal,
    /// A literal after a secret's flag (`--password VALUE`): as `Literal`, and a plain word
    /// is a value.
    Flag,
    /// A value after a key-like name: high entropy.
    Entropy,
    /// A password in a URL: not a variable or mask.
    UrlPassword,
    /// Base64 of a PEM private key.
    Base64Pem,
}

/// One pattern. The value is the group `v`, `q` (double-quoted) or `s` (single-quoted),
/// else the whole match; the group `n` is the name assigned to.
pub(super) struct Rule {
    pub(super) kind: &'static str,
    pub(super) pattern: &'static str,
    pub(super) check: Check,
    /// Bytes one of which every match holds (empty: none known): a line without any is
    /// not looked at.
    pub(super) needs: &'static [u8],
}

/// What follows a secret's name in an assignment: `:`, `=`, `:=`, `=>`, then the value,
/// quoted (blanks allowed) or bare.
macro_rules! value {
    () => {
        r#"["']?[ \t]*(?::|=|:=|=>)[ \t]*(?:"(?P<q>[^"\n]*)"|'(?P<s>[^'\n]*)'|(?P<v>[^\s"',;}\]]+))"#
    };
}

pub(super) const RULES: &[Rule] = &[
    Rule {
        kind: "aws-access-key-id",
        pattern: r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?-u:\b)",
        check: Check::Token,
        needs: b"",
    },
    Rule {
        kind: "aws-secret-key",
        pattern: r#"(?i)aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?(?P<v>[A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)"#,
        check: Check::Token,
        needs: b":=",
    },
    Rule {
        kind: "github-token",
        pattern: r"(?-u:\b)(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}(?-u:\b)|github_pat_[A-Za-z0-9_]{22,})",
        check: Check::Token,
        needs: b"",
    },
    Rule {
        kind: "gitlab-token",
        pattern: r"(?-u:\b)gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,}",
        check: Check::Token,
        needs: b"",
    },
    Rule {
        kind: "slack-token",
        pattern: r"(?-u:\b)xox[abeprs]-[A-Za-z0-9-]{10,}",
        check: Check::Token,
        needs: b"",
    },
    Rule {
        kind: "stripe-key",
        pattern: r"(?-u:\b)(?:(?:sk|rk)_live_[0-9A-Za-z]{16,}|whsec_[0-9A-Za-z]{24,})",
        check: Check::Token,
        needs: b"",
    },
    Rule {
        kind: "api-key",
        pattern: r"(?-u:\b)sk-(?:ant-|proj-)?[A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]*",
        check: Check::Token,
        needs: b"",
    },
    Rule {
        kind: "google-api-key",
        pattern: r"(?-u:\b)AIza[0-9A-Za-z_-]{35}",
        check: Check::Token,
        needs: b"",
    },
    Rule {
        kind: "jwt",
        pattern: r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        check: Check::Token,
        needs: b"",
    },
    Rule {
        kind: "azure-key",
        pattern: r"(?i)(?-u:\b)(?:AccountKey|SharedAccessKey)=(?P<v>[A-Za-z0-9+/]{20,}={0,2})",
        check: Check::Token,
        needs: b"=",
    },
    Rule {
        kind: "azure-sas",
        pattern: r"[?&;\s]sig=(?P<v>[A-Za-z0-9%+/=]{30,})",
        check: Check::Token,
        needs: b"=",
    },
    Rule {
        kind: "private-key",
        pattern: r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{8,}={0,2}",
        check: Check::Base64Pem,
        needs: b"",
    },
    Rule {
        kind: "url-password",
        pattern: r#"(?-u:\b)[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^/\s:@"'<>]{1,256}:(?P<v>[^/\s@"'<>]{1,256})@"#,
        check: Check::UrlPassword,
        needs: b"@",
    },
    Rule {
        kind: "password",
        pattern: concat!(
            r#"(?i)--?(?P<n>[a-z-]*(?:password|passwd|passphrase|token|secret|api-?key))(?:=|[ \t]+)"#,
            r#"(?:"(?P<q>[^"\n]*)"|'(?P<s>[^'\n]*)'|(?P<v>[^\s"'|;&)]+))"#
        ),
        check: Check::Flag,
        needs: b"-",
    },
    Rule {
        kind: "password",
        pattern: concat!(
            r#"(?i)(?:^|[^A-Za-z0-9_.-])(?P<n>[A-Za-z0-9_.-]*?(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|key[_-]?data|credentials?))"#,
            value!()
        ),
        check: Check::Literal,
        needs: b":=",
    },
    Rule {
        kind: "high-entropy",
        pattern: concat!(
            r#"(?i)(?:^|[^A-Za-z0-9_.-])(?P<n>[A-Za-z0-9_.-]*?(?:key|auth|signature|salt|cred|hmac|private))"#,
            r#"["']?[ \t]*(?::|=|:=|=>)[ \t]*["']?(?P<v>[A-Za-z0-9+/=_.~-]{16,})"#
        ),
        check: Check::Entropy,
        needs: b":=",
    },
];

/// Keywords, at least one of which is in every match of every rule (case-insensitive),
/// each with the rules (bits of their indexes in `RULES`) it wakes.
pub(super) const KEYWORDS: &[(&str, u32)] = &[
    ("akia", 1 << 0),
    ("asia", 1 << 0),
    ("abia", 1 << 0),
    ("acca", 1 << 0),
    ("secret", 1 << 13 | 1 << 14),
    ("aws_secret", 1 << 1),
    ("awssecret", 1 << 1),
    ("ghp_", 1 << 2),
    ("gho_", 1 << 2),
    ("ghu_", 1 << 2),
    ("ghs_", 1 << 2),
    ("ghr_", 1 << 2),
    ("github_pat_", 1 << 2),
    ("glpat-", 1 << 3),
    ("gldt-", 1 << 3),
    ("glrt-", 1 << 3),
    ("glptt-", 1 << 3),
    ("xox", 1 << 4),
    ("_live_", 1 << 5),
    ("whsec_", 1 << 5),
    ("sk-", 1 << 6),
    ("aiza", 1 << 7),
    ("eyj", 1 << 8),
    ("key", 1 << 14 | 1 << 15),
    ("accountkey=", 1 << 9),
    ("sharedaccesskey=", 1 << 9),
    ("api-key", 1 << 13),
    ("apikey", 1 << 13),
    ("sig=", 1 << 10),
    ("ls0tls1crudjti", 1 << 11),
    ("://", 1 << 12),
    ("pass", 1 << 13 | 1 << 14),
    ("pwd", 1 << 14),
    ("token", 1 << 13 | 1 << 14),
    ("cred", 1 << 14 | 1 << 15),
    ("auth", 1 << 15),
    ("signature", 1 << 15),
    ("salt", 1 << 15),
    ("hmac", 1 << 15),
    ("private", 1 << 15),
    (BEGIN, 0),
];

/// Where a PEM block starts.
pub(super) const BEGIN: &str = "-----begin";
