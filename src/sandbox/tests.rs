//! The sandbox's layout and environment, on throw-away directories (entering it needs the
//! binary's supervisor: `tests/sandbox.rs`).

use std::path::{Path, PathBuf};

use super::env::is_credential_var;
use super::paths::layout;
use super::{Profile, Roots, Run, State};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("iac-sandbox-unit-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("test setup");
    std::fs::canonicalize(&dir).expect("test setup")
}

fn touch(path: &Path) {
    std::fs::create_dir_all(path.parent().expect("test setup")).expect("test setup");
    std::fs::write(path, b"x").expect("test setup");
}

#[test]
fn state_and_protected_names_are_found_anywhere_in_the_workspace() {
    let ws = scratch("walk");
    for file in [
        "terraform.tfstate",
        "env/prod/terraform.tfstate",
        "env/prod/terraform.tfstate.backup",
        "env/prod/terraform.tfstate.1700000000.backup",
        "modules/x/.terraform/terraform.tfstate",
        "modules/x/.git/config",
        ".iac-code/settings.json",
        ".mcp.json",
        ".agents/skills/a/SKILL.md",
        "main.tf",
        "node_modules/pkg/terraform.tfstate",
    ] {
        touch(&ws.join(file));
    }
    let config = scratch("walk-config");
    let roots = Roots { cwd: &ws, extra: &[], config_dir: &config, approved: &[], reveal: None };
    let env = |_: &str| None;
    let sealed = layout(Profile::Sealed, &roots, &env);
    assert_eq!(sealed.writable, vec![ws.clone()]);
    assert!(!sealed.too_large);
    for protected in [
        "terraform.tfstate",
        "env/prod/terraform.tfstate",
        "env/prod/terraform.tfstate.backup",
        "env/prod/terraform.tfstate.1700000000.backup",
        "modules/x/.terraform/terraform.tfstate",
        "modules/x/.git",
        ".iac-code",
        ".mcp.json",
        ".agents",
    ] {
        assert!(
            sealed.read_only.contains(&ws.join(protected)),
            "{protected}: {:?}",
            sealed.read_only
        );
    }
    assert!(!sealed.read_only.contains(&ws.join("main.tf")));
    // node_modules is not walked (it holds no state of the project's).
    assert!(!sealed.states.contains(&ws.join("node_modules/pkg/terraform.tfstate")));
    assert!(sealed.hidden.contains(&config), "our config dir is hidden: {:?}", sealed.hidden);

    let write = layout(Profile::Cloud(State::Write), &roots, &env);
    assert!(
        !write.read_only.contains(&ws.join("terraform.tfstate")),
        "an approved apply writes state"
    );
    assert!(write.read_only.contains(&ws.join("modules/x/.git")), ".git stays protected");
    let scratch_copy = layout(Profile::Cloud(State::Scratch), &roots, &env);
    assert!(!scratch_copy.read_only.contains(&ws.join("terraform.tfstate")), "a copy is written");
    assert_eq!(scratch_copy.states.len(), 5, "{:?}", scratch_copy.states);
}

#[test]
fn credential_stores_are_hidden_from_sealed_commands_only() {
    let home = scratch("home");
    for store in
        [".aws/credentials", ".kube/config", ".ssh/id_ed25519", ".netrc", ".docker/config.json"]
    {
        touch(&home.join(store));
    }
    let elsewhere = scratch("kubeconfig");
    touch(&elsewhere.join("kc.yaml"));
    let ws = scratch("ws-home");
    let config = scratch("cfg-home");
    let roots = Roots { cwd: &ws, extra: &[], config_dir: &config, approved: &[], reveal: None };
    let kc = elsewhere.join("kc.yaml").display().to_string();
    let home_text = home.display().to_string();
    let env = move |name: &str| match name {
        "HOME" => Some(home_text.clone()),
        "KUBECONFIG" => Some(format!("/nonexistent:{kc}")),
        _ => None,
    };
    let sealed = layout(Profile::Sealed, &roots, &env);
    for hidden in [".aws", ".kube", ".ssh", ".netrc", ".docker/config.json"] {
        assert!(sealed.hidden.contains(&home.join(hidden)), "{hidden}: {:?}", sealed.hidden);
    }
    assert!(sealed.hidden.contains(&elsewhere.join("kc.yaml")), "{:?}", sealed.hidden);
    let cloud = layout(Profile::Cloud(State::Scratch), &roots, &env);
    assert_eq!(
        cloud.hidden,
        vec![config.clone()],
        "a cloud client keeps the credentials, never our key"
    );
}

#[test]
fn the_root_directory_is_never_writable_and_no_workspace_is_hidden() {
    let config = scratch("cfg-root");
    let roots =
        Roots { cwd: Path::new("/"), extra: &[], config_dir: &config, approved: &[], reveal: None };
    let sealed = layout(Profile::Sealed, &roots, &|_| None);
    assert!(sealed.writable.is_empty(), "{:?}", sealed.writable);
    // A workspace inside a credential store (or our config) stays visible.
    let home = scratch("home-ws");
    let ws = home.join(".aws/project");
    std::fs::create_dir_all(&ws).expect("test setup");
    let home_text = home.display().to_string();
    let env = move |name: &str| (name == "HOME").then(|| home_text.clone());
    let roots = Roots { cwd: &ws, extra: &[], config_dir: &config, approved: &[], reveal: None };
    let sealed = layout(Profile::Sealed, &roots, &env);
    assert!(!sealed.hidden.iter().any(|h| ws.starts_with(h)), "{:?}", sealed.hidden);
}

#[test]
fn a_workspace_too_large_to_search_is_read_only_whole() {
    let ws = scratch("large");
    for i in 0..20_050 {
        std::fs::write(ws.join(format!("f{i}")), b"").expect("test setup");
    }
    let config = scratch("cfg-large");
    let roots = Roots { cwd: &ws, extra: &[], config_dir: &config, approved: &[], reveal: None };
    assert!(layout(Profile::Sealed, &roots, &|_| None).too_large);
    let _ = std::fs::remove_dir_all(&ws);
}

#[test]
fn credential_variables_are_named_by_prefix_name_and_mark() {
    for name in [
        "AWS_SECRET_ACCESS_KEY",
        "AWS_PROFILE",
        "ARM_CLIENT_SECRET",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE",
        "TF_TOKEN_app_terraform_io",
        "TF_VAR_db_password",
        "KUBECONFIG",
        "VAULT_TOKEN",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "STRIPE_API_KEY",
        "MY_SECRET",
        "SSH_AUTH_SOCK",
    ] {
        assert!(is_credential_var(name), "{name}");
    }
    for name in ["PATH", "HOME", "TF_VAR_region", "TERM", "LANG", "TF_LOG", "KUBE_EDITOR"] {
        assert!(!is_credential_var(name), "{name}");
    }
}

#[test]
fn each_run_says_what_it_was_given() {
    let sealed = Run::Confined(Profile::Sealed).meta();
    assert_eq!(sealed["confined"], true);
    assert_eq!(sealed["network"], false);
    assert_eq!(sealed["credentials"], false);
    let plan = Run::Confined(Profile::Cloud(State::Scratch)).meta();
    assert_eq!(
        (plan["network"].as_bool(), plan["state"].as_str()),
        (Some(true), Some("scratch-copy"))
    );
    let approved = Run::Approved.meta();
    assert_eq!(
        (approved["confined"].as_bool(), approved["why"].as_str()),
        (Some(false), Some("approved"))
    );
    assert!(Run::Approved.words().contains("outside the sandbox"));
}
