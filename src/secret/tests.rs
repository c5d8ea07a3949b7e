//! The shapes of secrets, row by row; redaction and restore through a `Vault`.

use super::*;

/// (text, the reason's words when it is a secret, or `None`).
const ROWS: &[(&str, Option<&str>)] = &[
    // Private keys.
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n", Some("PEM private key")),
    (
        "notes:\n  -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n",
        Some("PEM private key"),
    ),
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
fn private_key_headers_are_recognised() {
    assert!(is_private_key_header(b"-----BEGIN RSA PRIVATE KEY-----\nMII"));
    assert!(is_private_key_header(b"\n-----BEGIN OPENSSH PRIVATE KEY-----\n"));
    assert!(is_private_key_header(b"-----BEGIN PRIVATE KEY-----"));
    assert!(!is_private_key_header(b"-----BEGIN CERTIFICATE-----\nPRIVATE KEY"));
    assert!(!is_private_key_header(b"-----BEGIN PUBLIC KEY-----"));
    assert!(!is_private_key_header(b"resource \"x\" {}"));
}
