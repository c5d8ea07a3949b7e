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
    ("public_key = \"AAAAB3NzaC1yc2EAAAADAQABAAABgQC7\"", None),
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

/// The forms a review found the old memory filter let through, and the other new shapes.
const NEW_FORMS: &[(&str, &str)] = &[
    (
        "{\"type\": \"service_account\", \"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----\\n\"}",
        "private-key",
    ),
    ("db_password = \"words with spaces\"", "password"),
    ("mysql --password Tr0ub4dor3x --host db", "password"),
    ("vault login --token=hvs9Qw7Er5Ty3Ui1Op9As", "token"),
    ("the key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Rt3kLmN here", "aws-secret-key"),
    ("token: ghp_4fQ9zL2mN8pR5tV7xB1c\u{200B}D3eG6hJ0kW9sY2uA", "github-token"),
    ("DATABASE_URL=postgres://app:Hn4q8Zr2Lw@db.internal:5432/app", "url-password"),
    ("signing_key: 9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c", "high-entropy"),
    (
        "client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB",
        "private-key",
    ),
    (
        "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVbNm12=",
        "azure-key",
    ),
    (
        "Server=tcp:db.database.windows.net;Database=app;User ID=admin;Password=Hn4q8Zr2Lw!x;",
        "password",
    ),
    ("whsec_Zq8Wm3Nx5Bv7Cr9Ty1Ui4Op6As2Df0Gh8", "stripe-key"),
    ("mysql --password swordfish --host db", "password"),
    ("psql --password 'open sesame now' -h db", "password"),
    ("backup_passphrase: \"correct horse battery staple\"", "password"),
    ("curl --token s3cr3tv4lu3x https://api", "token"),
    ("token = Xk9pQ2mL7vB4nR8t.atlasv1.Zq8Wm3Nx5Bv7Cr9Ty1Ui4Op6As2Df0Gh8Jk", "token"),
];

fn vault() -> Vault {
    Vault::new(std::sync::Arc::new(Policy::default()))
}

#[test]
fn every_new_form_is_found_by_memory_and_redacted() {
    for (text, kind) in NEW_FORMS {
        assert!(find(text).is_some(), "memory let through {text:?}");
        let (redacted, tally) = vault().redact(text);
        assert!(tally.kinds.iter().any(|k| k == kind), "{text:?}: {tally:?} {redacted}");
        assert!(redacted.contains(&format!("{OPEN}{kind}:")), "{redacted}");
    }
}

#[test]
fn a_private_keys_body_read_without_its_header_is_still_redacted() {
    let vault = vault();
    let body = [
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
        "k3Fq9Zx2Lm8Nw4Rt6Yu1Io3Pa5Sd7Fg9Hj2Kl4Zx6Cv8Bn0Mq2We4Rt6Y",
    ];
    let key = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n{}\n-----END PRIVATE KEY-----\n",
        body[0], body[1]
    );
    let (redacted, _) = vault.redact(&key);
    assert!(!redacted.contains(body[0]), "{redacted}");
    // `sed 1d key.pem`: the body alone.
    let (redacted, tally) = vault.redact(&format!("{}\n{}\n", body[0], body[1]));
    assert_eq!(tally.count, 2, "{redacted}");
    assert!(!redacted.contains(body[0]) && !redacted.contains(body[1]), "{redacted}");
}

#[test]
fn a_value_gets_one_placeholder_and_comes_back_on_restore() {
    let vault = vault();
    let secret = "Sup3r-S3cret-2024";
    let (first, tally) = vault.redact(&format!("db_password = \"{secret}\""));
    assert_eq!(tally.count, 1);
    assert!(!first.contains(secret));
    // The value alone, later, is known by its exact value.
    let (second, tally) = vault.redact(&format!("echo {secret}; echo {secret}"));
    assert_eq!(tally.count, 2);
    let placeholder = first.split('"').nth(1).expect("ok");
    assert_eq!(second, format!("echo {placeholder}; echo {placeholder}"));
    let command = format!("printf '%s' {placeholder} > f");
    assert_eq!(vault.restore(&command).expect("ok"), format!("printf '%s' {secret} > f"));
    let args = serde_json::json!({ "content": format!("pw={placeholder}\n"), "n": 1 });
    let restored = vault.restore_value(&args).expect("ok");
    assert_eq!(restored["content"], format!("pw={secret}\n"));
}

#[test]
fn a_value_never_shown_cannot_be_named_by_guessing_its_placeholder() {
    let vault = vault();
    // Learned (a host credential), never in anything redacted: its number is guessable.
    vault.learn("credential", "AKIA-host-credential-value-1234");
    let guess = format!("{OPEN}credential:1__");
    assert!(vault.restore(&format!("curl -d {guess} x")).is_err(), "refused while unseen");
    assert!(vault.entries().is_empty(), "nothing unseen is kept");
    let (shown, _) = vault.redact("key AKIA-host-credential-value-1234 here");
    assert_eq!(shown, format!("key {guess} here"));
    assert_eq!(vault.restore(&guess).expect("shown now"), "AKIA-host-credential-value-1234");
    assert_eq!(vault.entries().len(), 1);
}

#[test]
fn an_unknown_placeholder_is_an_error() {
    let vault = vault();
    let err = vault.restore("echo __SECRET:password:7__").expect_err("an unknown placeholder");
    assert!(err.contains("__SECRET:password:7__"), "{err}");
    // Not a placeholder: left as it is.
    assert_eq!(vault.restore("__SECRET:Bad__").expect("ok"), "__SECRET:Bad__");
}

#[test]
fn placeholders_are_never_taken_for_secrets() {
    let vault = vault();
    let (once, _) = vault.redact("api_key = \"q8W3m5N7b9V1c2X4z6\"");
    let (twice, tally) = vault.redact(&once);
    assert_eq!(once, twice);
    assert_eq!(tally.count, 0);
}

#[test]
fn terraform_sensitive_values_are_learned_from_state_and_plan() {
    let state = r#"{"version": 4, "outputs": {"pw": {"value": "Zq8mN3xB7vC2", "type": "string", "sensitive": true}},
      "resources": [{"instances": [{"attributes": {"input": {"value": {"password": "Lw9pQ2rT5yU8", "user": "admin1"}}},
      "sensitive_attributes": [[{"type": "get_attr", "value": "input"}, {"type": "get_attr", "value": "password"}]]}]}]}"#;
    let plan = r#"{"variables": {"db": {"value": "Kj7hG5fD3sA1"}, "region": {"value": "eu-west-1"}},
      "configuration": {"root_module": {"variables": {"db": {"sensitive": true}}}},
      "resource_changes": [{"change": {"after": {"a": "Mn6bV4cX2zL0", "b": "visible"}, "after_sensitive": {"a": true}}}]}"#;
    let vault = vault();
    let (redacted, _) = vault.redact(&format!("STDOUT:\n{state}\n"));
    assert!(!redacted.contains("Zq8mN3xB7vC2") && !redacted.contains("Lw9pQ2rT5yU8"));
    assert!(redacted.contains("admin1"));
    let (redacted, _) = vault.redact(plan);
    assert!(!redacted.contains("Kj7hG5fD3sA1") && !redacted.contains("Mn6bV4cX2zL0"));
    assert!(redacted.contains("eu-west-1") && redacted.contains("visible"));
    // Learned: the bare value, later, is hidden too.
    let (later, tally) = vault.redact("Zq8mN3xB7vC2\n");
    assert_eq!((later.contains("Zq8m"), tally.kinds), (false, vec!["terraform-sensitive".into()]));
}

#[test]
fn kubernetes_secret_data_is_learned_encoded_and_decoded() {
    // `czNjcjN0LXZhbHVlLTQy` is base64 of `s3cr3t-value-42`.
    let yaml = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  pw: czNjcjN0LXZhbHVlLTQy\nstringData:\n  other: plain-but-secret-9\n";
    let vault = vault();
    let (redacted, _) = vault.redact(yaml);
    assert!(!redacted.contains("czNjcjN0LXZhbHVlLTQy") && !redacted.contains("plain-but-secret-9"));
    let (decoded, _) = vault.redact("the value: s3cr3t-value-42");
    assert!(!decoded.contains("s3cr3t-value-42"), "{decoded}");
    let json = r#"{"kind": "Secret", "data": {"token": "bXktdG9rZW4tdmFsdWU="}}"#;
    let (redacted, _) = vault.redact(json);
    assert!(!redacted.contains("bXktdG9rZW4tdmFsdWU="));
    assert!(find(json).is_some() && find(yaml).is_some());
}

#[test]
fn the_teams_patterns_and_values_are_redacted_and_off_is_off() {
    let policy = Policy {
        on: true,
        patterns: vec![regex::Regex::new(r"ACME-[0-9]{6}").expect("ok")],
        values: vec!["internal-codename-x".to_string()],
    };
    let vault = Vault::new(std::sync::Arc::new(policy));
    let (redacted, tally) = vault.redact("ACME-123456 and internal-codename-x");
    assert_eq!(tally.count, 2, "{redacted}");
    let off = Vault::new(std::sync::Arc::new(Policy { on: false, ..Policy::default() }));
    let text = "db_password = \"Sup3r-S3cret-2024\"";
    assert_eq!(off.redact(text).0, text);
}

#[test]
fn format_characters_are_removed_before_matching() {
    let text = "AKIAZ7QW4N2K\u{200D}X5RT3HVB and \u{FEFF}rest";
    assert_eq!(strip_format(text), "AKIAZ7QW4N2KX5RT3HVB and rest");
    assert!(matches!(strip_format("plain │ box"), Cow::Borrowed(_)));
    assert!(vault().redact(text).1.count == 1);
}

#[test]
fn logs_lose_shapes_to_their_kind() {
    let line = "INFO MCP server x: connecting with password=Hn4q8Zr2Lw!x and ghp_4fQ9zL2mN8pR5tV7xB1cD3eG6hJ0kW9sY2uA";
    let scrubbed = scrub(line);
    assert!(!scrubbed.contains("Hn4q8Zr2Lw!x") && !scrubbed.contains("ghp_4fQ9"), "{scrubbed}");
    assert!(scrubbed.contains("__SECRET:github-token__"), "{scrubbed}");
    assert!(matches!(scrub("INFO session started"), Cow::Borrowed(_)));
}

#[test]
fn a_loaded_historys_placeholders_are_never_given_again() {
    let vault = Vault::new_empty(std::sync::Arc::new(Policy::default()));
    vault.skip_past("earlier: __SECRET:token:7__ and __SECRET:password:3__");
    let (text, _) = vault.redact("db_password = \"Sup3r-S3cret-2024\"");
    assert!(text.contains("__SECRET:password:8__"), "{text}");
    let err = vault.restore("__SECRET:token:7__").expect_err("forgotten");
    assert!(err.contains("loaded again"), "{err}");
}

#[test]
fn kept_entries_come_back_with_their_placeholders_and_new_ones_follow() {
    let first = vault();
    let (text, _) = first.redact("api_key = \"q8W3m5N7b9V1c2X4z6\" and token: Zx9Qw8Er7Ty6Ui5");
    let kept = first.entries();
    assert_eq!(kept.len(), 2);
    let second = Vault::new_empty(std::sync::Arc::new(Policy::default()));
    second.restore_entries(kept.clone());
    assert_eq!(second.restore(&text).expect("known"), first.restore(&text).expect("known"));
    let (new, _) = second.redact("password = \"An0ther-S3cret-value\"");
    let highest = kept
        .iter()
        .filter_map(|[_, _, p]| p.trim_end_matches('_').rsplit(':').next()?.parse::<usize>().ok())
        .max();
    assert!(new.contains(&format!(":{}__", highest.expect("numbers") + 1)), "{new}");
}

#[test]
fn the_logs_hide_every_value_a_vault_learned_even_without_a_shape() {
    let vault = vault();
    let value = "plainvalue-of-a-host-credential-91";
    assert_eq!(scrub(&format!("frame {value}")), format!("frame {value}"), "no shape of its own");
    vault.learn("credential", value);
    assert_eq!(scrub(&format!("frame {value} end")), "frame __SECRET:credential__ end");
}
