//! Tests of where rules come from: settings, variables, flags, and approved project files.

use std::collections::HashMap;

use serde_json::json;

use super::*;
use crate::config::Config;

struct MapEnv(HashMap<&'static str, String>);
impl Env for MapEnv {
    fn get(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("iac-perm-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch files");
    dir
}

fn texts(rules: &RuleSet) -> Vec<(Verdict, &str)> {
    rules.rules().iter().map(|r| (r.verdict, r.text.as_str())).collect()
}

#[test]
fn settings_lists_become_rules_with_their_source() {
    let path = Path::new("/h/settings.json");
    let source = Source::User(path.to_path_buf());
    let value = json!({"allow": ["bash(make test)", "Write(*.tf)"], "deny": ["bash(rm *)"]});
    let rules = from_settings(&value, path, &source).expect("valid rules");
    assert_eq!(
        texts(&rules),
        [
            (Verdict::Allow, "bash(make test)"),
            (Verdict::Allow, "Write(*.tf)"),
            (Verdict::Deny, "bash(rm *)")
        ]
    );
    assert_eq!(rules.rules()[0].source, source);
    for (value, want) in [
        (json!(["bash"]), "permissions must be an object"),
        (json!({"mode": "default"}), "unknown key permissions.mode"),
        (json!({"allow": "bash"}), "permissions.allow must be a list"),
        (json!({"deny": ["bash", 3]}), "permissions.deny[1] must be a string"),
        (json!({"ask": ["bash(("]}), "permissions.ask: rule 'bash((': unbalanced"),
    ] {
        let err = from_settings(&value, path, &source).expect_err("refused");
        assert!(err.starts_with("/h/settings.json: ") && err.contains(want), "{value}: {err}");
    }
}

#[test]
fn variables_and_flags_are_comma_lists() {
    let env = MapEnv(HashMap::from([
        (ALLOWED_VAR, "bash(git *), write_file".to_string()),
        (DISALLOWED_VAR, "bash(echo a,b)".to_string()),
    ]));
    let rules = from_env(&env).expect("valid rules");
    assert_eq!(
        texts(&rules),
        [
            (Verdict::Allow, "bash(git *)"),
            (Verdict::Allow, "write_file"),
            (Verdict::Deny, "bash(echo a,b)")
        ]
    );
    assert_eq!(rules.rules()[2].source, Source::Env(DISALLOWED_VAR));
    let env = MapEnv(HashMap::from([(DISALLOWED_VAR, "bash((".to_string())]));
    let err = from_env(&env).expect_err("refused").to_string();
    assert!(err.contains("IAC_CODE_DISALLOWED_TOOLS: rule 'bash(('"), "{err}");

    let rules = from_flags(&["read_file,grep".into(), "glob".into()], &["bash".into()])
        .expect("valid rules");
    assert_eq!(rules.rules().len(), 4);
    assert_eq!(rules.rules()[3].source, Source::Flag("--disallowed-tools"));
    let err = from_flags(&["Shell(ls)".into()], &[]).expect_err("refused");
    assert!(matches!(err, Error::Config(_)), "{err}");
    assert!(err.to_string().contains("--allowed-tools: rule 'Shell(ls)'"), "{err}");
}

#[test]
fn config_gathers_settings_variables_and_flags() {
    let dir = scratch("config");
    std::fs::write(
        dir.join("settings.json"),
        r#"{"permissions": {"ask": ["bash(terraform apply*)"]}}"#,
    )
    .expect("scratch files");
    let env = MapEnv(HashMap::from([
        ("IAC_CODE_CONFIG_DIR", dir.display().to_string()),
        (ALLOWED_VAR, "read_file".to_string()),
    ]));
    let mut config = Config::from_env(&env).expect("valid rules");
    config.with_rule_flags(&[], &["bash(rm *)".into()]).expect("valid rules");
    assert_eq!(
        texts(&config.permissions),
        [
            (Verdict::Ask, "bash(terraform apply*)"),
            (Verdict::Allow, "read_file"),
            (Verdict::Deny, "bash(rm *)")
        ]
    );
    assert_eq!(config.permissions.rules()[0].source, Source::User(dir.join("settings.json")));
    std::fs::write(dir.join("settings.json"), r#"{"permissions": {"allow": ["bash()"]}}"#)
        .expect("scratch files");
    let err = Config::from_env(&env).expect_err("refused").to_string();
    assert!(err.contains("settings.json: permissions.allow: rule 'bash()'"), "{err}");
    std::fs::remove_dir_all(&dir).expect("scratch files");
}

#[test]
fn project_allow_rules_wait_for_approval_of_this_content() {
    let dir = scratch("project");
    let (project, config) = (dir.join("p"), dir.join("cfg"));
    std::fs::create_dir_all(project.join(".iac-code")).expect("scratch files");
    assert_eq!(project_rules(&project, &config).expect("usable project settings").path, None);
    let file = project.join(PROJECT_FILE);
    std::fs::write(
        &file,
        r#"{"permissions": {"allow": ["bash(make test)", "write_file(*.tf)"], "deny": ["bash(rm *)"]}, "hooks": {}}"#,
    )
    .expect("scratch files");
    let real = file.canonicalize().expect("scratch files");
    let found = project_rules(&project, &config).expect("usable project settings");
    assert_eq!(texts(&found.rules), [(Verdict::Deny, "bash(rm *)")], "deny applies at once");
    assert_eq!(found.unapproved_allows, 2);
    assert_eq!(found.path.as_deref(), Some(real.as_path()));

    let approved = approve_project(&project, &config).expect("usable project settings");
    assert!(approved.approved && approved.rules.rules().len() == 3);
    let found = project_rules(&project, &config).expect("usable project settings");
    assert_eq!((found.rules.rules().len(), found.unapproved_allows), (3, 0));
    assert_eq!(found.rules.rules()[0].source, Source::Project(real));

    // Any change asks again; the deny rules still apply.
    std::fs::write(&file, r#"{"permissions": {"allow": ["bash"], "deny": ["bash(rm *)"]}}"#)
        .expect("scratch files");
    let found = project_rules(&project, &config).expect("usable project settings");
    assert_eq!((found.rules.rules().len(), found.unapproved_allows), (1, 1));

    // Malformed files are errors naming the file and the rule.
    std::fs::write(&file, r#"{"permissions": {"deny": ["bash(("]}}"#).expect("scratch files");
    let err = project_rules(&project, &config).expect_err("refused");
    assert!(err.contains(".iac-code/settings.json: permissions.deny: rule 'bash(('"), "{err}");
    std::fs::write(&file, "[]").expect("scratch files");
    assert!(
        project_rules(&project, &config).expect_err("refused").contains("expected a JSON object")
    );
    assert!(matches!(approve_project(&project, &config), Err(Error::Config(_))));

    // A linked `.iac-code` (another project's approved settings, say) is never read.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).expect("scratch files");
    std::os::unix::fs::symlink(project.join(".iac-code"), other.join(".iac-code"))
        .expect("scratch files");
    assert!(project_rules(&other, &config).expect_err("refused").contains("symbolic link"));
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).expect("scratch files");
    assert!(matches!(approve_project(&empty, &config), Err(Error::Usage(_))));
    std::fs::remove_dir_all(&dir).expect("scratch files");
}

#[test]
fn a_projects_settings_are_the_nearest_up_to_its_git_root() {
    let dir = scratch("nearest");
    let (repo, config) = (dir.join("repo"), dir.join("cfg"));
    let prod = repo.join("envs/prod");
    std::fs::create_dir_all(repo.join(".git")).expect("scratch files");
    std::fs::create_dir_all(prod.join(".iac-code/skills")).expect("scratch files");
    std::fs::create_dir_all(repo.join(".iac-code")).expect("scratch files");
    std::fs::write(dir.join("outside.json"), "{}").expect("scratch files");
    let deny = |rule: &str| format!(r#"{{"permissions": {{"deny": ["{rule}"]}}}}"#);
    std::fs::write(repo.join(PROJECT_FILE), deny("bash(terraform apply*)")).expect("scratch");
    // A `.iac-code` that holds no settings (only skills) is passed over.
    let found = project_rules(&prod, &config).expect("usable project settings");
    assert_eq!(texts(&found.rules), [(Verdict::Deny, "bash(terraform apply*)")]);
    std::fs::write(prod.join(PROJECT_FILE), deny("bash(rm *)")).expect("scratch files");
    let found = project_rules(&prod, &config).expect("usable project settings");
    assert_eq!(texts(&found.rules), [(Verdict::Deny, "bash(rm *)")], "the nearest wins");
    // Above the git root nothing is read; the user's own directory never counts.
    std::fs::create_dir_all(dir.join(".iac-code")).expect("scratch files");
    std::fs::write(dir.join(PROJECT_FILE), deny("bash")).expect("scratch files");
    std::fs::remove_dir_all(repo.join(".iac-code")).expect("scratch files");
    std::fs::remove_dir_all(prod.join(".iac-code")).expect("scratch files");
    assert_eq!(project_rules(&prod, &config).expect("usable").path, None, "not above the root");
    assert_eq!(project_rules(&dir, &dir.join(".iac-code")).expect("usable").path, None);
    std::fs::remove_dir_all(&dir).expect("scratch files");
}
