//! Reading `hooks`: both forms, matchers in the rule syntax, timeouts, and every kind of
//! bad input refused with the entry named.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;

fn path() -> PathBuf {
    PathBuf::from("/home/u/.iac-code/settings.json")
}

fn read(value: Value) -> Result<Vec<HookSpec>, String> {
    from_settings(&value, &path(), &Source::User(path()))
}

fn bash(line: &str) -> Vec<String> {
    vec![line.to_string()]
}

fn call<'a>(tool: &'a str, commands: &'a [String], paths: &'a [String]) -> Subject<'a> {
    Subject { tool, commands, paths, ..Subject::default() }
}

#[test]
fn flat_and_nested_forms_read_alike() {
    let flat = read(json!({"PreToolUse": [
        {"matcher": "bash(terraform apply*)", "command": "./guard.sh", "timeout": 5}
    ]}))
    .expect("as set up");
    let nested = read(json!({"PreToolUse": [
        {"matcher": "bash(terraform apply*)",
         "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}
    ]}))
    .expect("as set up");
    for hooks in [&flat, &nested] {
        assert_eq!(hooks.len(), 1);
        let hook = &hooks[0];
        assert_eq!(hook.event, Event::PreToolUse);
        assert_eq!(hook.command, "./guard.sh");
        assert_eq!(hook.timeout, Duration::from_secs(5));
        assert_eq!(hook.matcher_text, "bash(terraform apply*)");
        assert_eq!(hook.source, Source::User(path()));
        let apply = bash("terraform apply -auto-approve");
        assert!(hook.matches_call(&call("bash", &apply, &[])));
        let plan = bash("terraform plan");
        assert!(!hook.matches_call(&call("bash", &plan, &[])));
    }
}

#[test]
fn a_nested_entry_gives_one_hook_per_command_each_with_the_matcher() {
    let hooks = read(json!({"PostToolUse": [{"matcher": "Write|Edit", "hooks": [
        {"type": "command", "command": "terraform fmt"},
        {"type": "command", "command": "tflint", "timeout": 0.5}
    ]}]}))
    .expect("as set up");
    let got: Vec<(&str, Duration)> =
        hooks.iter().map(|h| (h.command.as_str(), h.timeout)).collect();
    assert_eq!(got, [("terraform fmt", DEFAULT_TIMEOUT), ("tflint", Duration::from_millis(500))]);
    let tf = vec!["main.tf".to_string()];
    for tool in ["write_file", "edit_file"] {
        assert!(hooks[0].matches_call(&call(tool, &[], &tf)), "{tool}: Claude Code's names");
    }
    assert!(!hooks[0].matches_call(&call("read_file", &[], &tf)));
}

#[test]
fn matchers_follow_the_rule_syntax() {
    type Row<'a> = (&'a str, &'a str, &'a [&'a str], &'a [&'a str], bool);
    let table: &[Row] = &[
        ("*", "bash", &["rm -rf x"], &[], true),
        ("", "web_fetch", &[], &[], true),
        ("bash", "bash", &["ls"], &[], true),
        ("bash(terraform apply*)", "bash", &["cd infra", "terraform apply"], &[], true),
        ("bash(terraform apply*)", "bash", &["terraform plan"], &[], false),
        ("write_file(*.tf)|edit_file(*.tf)", "edit_file", &[], &["main.tf"], true),
        ("write_file(*.tf)|edit_file(*.tf)", "write_file", &[], &["README.md"], false),
        ("write_file(**/*.tf)", "write_file", &[], &["infra/net/main.tf"], true),
        ("bash(a | b)", "bash", &["a | b"], &[], true),
        ("mcp__docs__*", "mcp__docs__search", &[], &[], true),
        ("mcp__docs__*", "bash", &["ls"], &[], false),
    ];
    for (matcher, tool, commands, paths, expected) in table {
        let hooks = read(json!({"PreToolUse": [{"matcher": matcher, "command": "true"}]}))
            .unwrap_or_else(|why| panic!("{matcher}: {why}"));
        let commands: Vec<String> = commands.iter().map(|c| c.to_string()).collect();
        let paths: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        let subject = call(tool, &commands, &paths);
        assert_eq!(hooks[0].matches_call(&subject), *expected, "{matcher} on {tool} {commands:?}");
    }
}

#[test]
fn a_command_not_parsed_whole_matches_when_the_pattern_occurs_in_it() {
    let hooks = read(json!({"PreToolUse": [
        {"matcher": "bash(terraform apply*)", "command": "true"}
    ]}))
    .expect("as set up");
    let commands = bash("eval x");
    let subject = Subject {
        tool: "bash",
        commands: &commands,
        opaque: Some("eval \"terraform apply -auto-approve\""),
        ..Subject::default()
    };
    assert!(hooks[0].matches_call(&subject));
}

#[test]
fn session_start_matches_how_the_session_started() {
    let hooks = read(json!({"SessionStart": [
        {"matcher": "resume", "command": "a"}, {"command": "b"}
    ], "Stop": [{"matcher": "*", "command": "c"}], "UserPromptSubmit": [{"command": "d"}]}))
    .expect("as set up");
    assert!(hooks[0].matches_source("resume") && !hooks[0].matches_source("startup"));
    assert!(hooks[1].matches_source("startup") && hooks[1].matches_source("resume"));
    assert_eq!(hooks.len(), 4);
}

#[test]
fn bad_hooks_are_refused_naming_the_entry() {
    let table: &[(Value, &str)] = &[
        (json!([]), "hooks must be an object keyed by event"),
        (json!({"Notification": []}), "unknown hook event hooks.Notification"),
        (json!({"PreToolUse": {}}), "hooks.PreToolUse must be a list"),
        (json!({"PreToolUse": ["x"]}), "hooks.PreToolUse[0]: must be an object"),
        (json!({"PreToolUse": [{}]}), "hooks.PreToolUse[0]: no command"),
        (json!({"PreToolUse": [{"command": ""}]}), "[0].command: an empty command"),
        (json!({"PreToolUse": [{"command": 1}]}), "[0].command: must be a string"),
        (json!({"PreToolUse": [{"command": "x", "timout": 3}]}), "unknown key 'timout'"),
        (json!({"PreToolUse": [{"command": "x", "timeout": 0}]}), "[0].timeout: 0: expected"),
        (json!({"PreToolUse": [{"command": "x", "timeout": 601}]}), "at most 600"),
        (json!({"PreToolUse": [{"command": "x", "timeout": "5"}]}), ".timeout: \"5\""),
        (json!({"PreToolUse": [{"command": "x", "type": "prompt"}]}), "only \"command\" hooks"),
        (json!({"PreToolUse": [{"command": "x", "matcher": 3}]}), ".matcher: must be a string"),
        (
            json!({"PreToolUse": [{"command": "x", "matcher": "Shell(rm*)"}]}),
            "unknown tool 'Shell'",
        ),
        (json!({"PreToolUse": [{"command": "x", "matcher": "bash("}]}), "unbalanced"),
        (json!({"PreToolUse": [{"command": "x", "matcher": "|"}]}), "names nothing"),
        (json!({"Stop": [{"command": "x", "matcher": "bash"}]}), "Stop hooks take no matcher"),
        (json!({"SessionStart": [{"command": "x", "matcher": "clear"}]}), "how the session"),
        (json!({"PostToolUse": [{"matcher": "*", "hooks": "x"}]}), "[0].hooks: must be a list"),
        (json!({"PostToolUse": [{"matcher": "*", "hooks": []}]}), "[0].hooks: an empty list"),
        (json!({"PostToolUse": [{"hooks": [{"command": "x"}], "command": "y"}]}), "'command'"),
        (json!({"PostToolUse": [{"hooks": [{"command": "x", "matcher": "*"}]}]}), "'matcher'"),
        (json!({"PostToolUse": [{"hooks": [7]}]}), "[0].hooks[0]: must be an object"),
        (json!({"PostToolUse": [{"hooks": [{"type": "command"}]}]}), "[0].hooks[0]: no command"),
    ];
    for (value, expected) in table {
        let err = read(value.clone()).expect_err(&value.to_string());
        assert!(err.contains(expected), "{value}: {err}");
        assert!(err.starts_with("/home/u/.iac-code/settings.json"), "{err}");
    }
}

#[test]
fn a_project_file_is_read_only_for_its_hooks() {
    let file = Path::new("/p/.iac-code/settings.json");
    let text = r#"{"permissions": {"deny": ["bash(rm*)"]},
                   "hooks": {"Stop": [{"command": "make check"}]}}"#;
    let hooks = of_project_file(text, file).expect("as set up");
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0].source, Source::Project(file.to_path_buf()));
    assert!(of_project_file("{}", file).expect("as set up").is_empty());
    assert!(of_project_file("[]", file).unwrap_err().contains("expected a JSON object"));
    let bad = r#"{"hooks": {"Stop": [{"command": "x", "matcher": "bash"}]}}"#;
    assert!(of_project_file(bad, file).unwrap_err().contains("take no matcher"));
}

#[test]
fn project_hooks_run_only_once_exactly_this_content_is_approved() {
    let dir = std::env::temp_dir().join(format!("iac-project-hooks-{}", std::process::id()));
    let config = dir.join("config");
    std::fs::create_dir_all(dir.join(".iac-code")).expect("as set up");
    let text = r#"{"hooks": {"PreToolUse": [{"matcher": "bash", "command": "guard"}]}}"#;
    std::fs::write(dir.join(".iac-code/settings.json"), text).expect("as set up");
    let before = project_hooks(&dir, &config).expect("as set up");
    assert!(before.hooks.is_empty());
    assert_eq!(before.unapproved, 1);
    super::super::permissions::approve_project(&dir, &config).expect("as set up");
    let half = project_hooks(&dir, &config).expect("as set up");
    assert!(half.hooks.is_empty(), "what the hooks run is approved too");
    approve_runs(&dir, &config).expect("as set up");
    let after = project_hooks(&dir, &config).expect("as set up");
    assert_eq!(after.hooks.len(), 1);
    assert_eq!(after.unapproved, 0);
    // A script a hook runs changes (a pull, the model's write): none runs until approved.
    let guarded = r#"{"hooks": {"PreToolUse": [{"matcher": "bash", "command": "./guard.sh"}]}}"#;
    std::fs::write(dir.join(".iac-code/settings.json"), guarded).expect("as set up");
    std::fs::write(dir.join("guard.sh"), "exit 0\n").expect("as set up");
    super::super::permissions::approve_project(&dir, &config).expect("as set up");
    approve_runs(&dir, &config).expect("as set up");
    assert_eq!(project_hooks(&dir, &config).expect("as set up").hooks.len(), 1);
    std::fs::write(dir.join("guard.sh"), "exit 2\n").expect("as set up");
    let changed = project_hooks(&dir, &config).expect("as set up");
    assert!(changed.hooks.is_empty(), "a changed script stops the hooks");
    assert!(changed.changed.iter().any(|f| f.ends_with("guard.sh")), "{:?}", changed.changed);
    std::fs::write(dir.join(".iac-code/settings.json"), text).expect("as set up");
    std::fs::write(dir.join(".iac-code/settings.json"), format!("{text} ")).expect("as set up");
    assert!(
        project_hooks(&dir, &config).expect("as set up").hooks.is_empty(),
        "changed: asked again"
    );
    std::fs::write(dir.join(".iac-code/settings.json"), r#"{"hooks": {"Stop": 1}}"#)
        .expect("as set up");
    assert!(project_hooks(&dir, &config).is_err(), "malformed: an error, approved or not");
    std::fs::remove_dir_all(&dir).expect("as set up");
}

#[test]
fn a_project_settings_file_is_known_to_hold_hooks() {
    assert!(super::super::permissions::PROJECT_KEYS.contains(&KEY), "not warned as ignored");
}

#[test]
fn a_new_file_beside_a_hook_script_stops_the_hooks_and_too_many_are_never_approved() {
    let dir = std::env::temp_dir().join(format!("iac-project-hook-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = dir.join("config");
    std::fs::create_dir_all(dir.join(".iac-code")).expect("as set up");
    std::fs::create_dir_all(dir.join("hooks")).expect("as set up");
    let text =
        r#"{"hooks": {"PreToolUse": [{"matcher": "bash", "command": "python3 hooks/check.py"}]}}"#;
    std::fs::write(dir.join(".iac-code/settings.json"), text).expect("as set up");
    std::fs::write(dir.join("hooks/check.py"), "import util\n").expect("as set up");
    std::fs::write(dir.join("hooks/util.py"), "ok = True\n").expect("as set up");
    super::super::permissions::approve_project(&dir, &config).expect("as set up");
    approve_runs(&dir, &config).expect("as set up");
    let approved = project_hooks(&dir, &config).expect("as set up");
    assert_eq!(approved.hooks.len(), 1);
    let check = approved.check.expect("a check of what they run");
    assert!(check.changed().is_empty() && check.withheld().is_none());
    let real = std::fs::canonicalize(&dir).expect("as set up");
    let module = real.join("hooks/util.py");
    assert_eq!(HOOKS.runner_of(&config, &module), Some(real.join(".iac-code/settings.json")));
    let added = real.join("hooks/sub/new.py");
    assert!(HOOKS.runner_of(&config, &added).is_some(), "a new file there is covered too");
    assert_eq!(HOOKS.runner_of(&config, &real.join("main.tf")), None);
    std::fs::write(dir.join("hooks/extra.py"), "evil()\n").expect("as set up");
    assert_eq!(check.changed(), [real.join("hooks/extra.py").display().to_string()]);
    assert!(check.withheld().expect("withheld").contains("hooks/extra.py changed since"));
    assert!(project_hooks(&dir, &config).expect("as set up").hooks.is_empty());
    for n in 0..super::super::hook_runs::MAX_DIR_ENTRIES {
        std::fs::write(dir.join(format!("hooks/m{n}.py")), "").expect("as set up");
    }
    let err = approve_runs(&dir, &config).expect_err("over the bounds");
    assert!(err.contains("cannot be approved") && err.contains("more than 256"), "{err}");
    let over = project_hooks(&dir, &config).expect("as set up");
    assert!(over.hooks.is_empty() && over.changed[0].contains("too much to keep"), "{over:?}");
    std::fs::remove_dir_all(&dir).expect("as set up");
}
