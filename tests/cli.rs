//! The command line: help, version, usage errors and the man page staying in step.

use std::collections::BTreeSet;
use std::process::{Output, Stdio};

use crate::support::command::iac_code;
use crate::support::workspace::Workspace;

/// Runs the binary in a fresh workspace with `args` and `env`.
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let ws = Workspace::new("cli");
    iac_code(&ws)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("spawn iac-code")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn help_and_version_go_to_stdout() {
    let out = run(&["--help"], &[]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("iac-code acp [OPTIONS]"), "{}", text(&out.stdout));
    assert!(out.stderr.is_empty());
    let out = run(&["--version"], &[]);
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), format!("iac-code {}\n", env!("CARGO_PKG_VERSION")));
    let out = run(&["acp", "--help"], &[]);
    assert!(out.status.success() && text(&out.stdout).contains("--transport"));
}

#[test]
fn usage_errors_exit_2_with_one_clear_line() {
    let cases: &[(&[&str], &str)] = &[
        (&["acp", "--bogus"], "invalid option '--bogus'"),
        (&["acp", "--transport", "ws"], "invalid --transport 'ws'"),
        (&["acp", "--port", "65536"], "invalid --port '65536'"),
        (&["acp", "--idle-timeout", "0"], "invalid --idle-timeout '0'"),
        (&["frobnicate"], "unknown command 'frobnicate'"),
        (&["chat", "--permission-mode", "yolo"], "invalid --permission-mode 'yolo'"),
        (&["acp", "--transport", "http", "--host", "0.0.0.0"], "without IACCODE_ACP_HTTP_TOKEN"),
    ];
    for (args, want) in cases {
        let out = run(args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        let stderr = text(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: stdout must stay clean");
    }
}

#[test]
fn bad_configuration_exits_2_naming_the_variable() {
    let cases = [
        ("IAC_CODE_MAX_TOKENS", "lots"),
        ("IAC_CODE_PROVIDER", "skynet"),
        ("IAC_CODE_STREAM_IDLE_TIMEOUT", "-3"),
        ("IAC_CODE_DISALLOWED_TOOLS", "bash(("),
        ("IAC_CODE_ALLOWED_TOOLS", "read_file,Shell(ls)"),
    ];
    for (name, value) in cases {
        let out = run(&["acp"], &[(name, value)]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(name), "{name}: {}", text(&out.stderr));
        assert!(out.stdout.is_empty());
    }
}

/// Runs the binary in `ws` with `args` and `env`.
fn run_in(ws: &Workspace, args: &[&str], env: &[(&str, &str)]) -> Output {
    iac_code(ws)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("spawn iac-code")
}

#[test]
fn bad_permission_rules_exit_2_naming_the_rule() {
    let ws = Workspace::new("cli-rules-bad");
    std::fs::write(
        ws.config().join("settings.json"),
        r#"{"permissions": {"allow": ["bash(make test)"], "deny": ["Shell(rm *)"]}}"#,
    )
    .unwrap();
    for args in [&["config", "show"][..], &["-p", "hello"], &["acp"]] {
        let out = run_in(&ws, args, &[]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("settings.json: permissions.deny: rule 'Shell(rm *)'"), "{stderr}");
        assert!(stderr.contains("unknown tool 'Shell'"), "{args:?}: {stderr}");
    }
    std::fs::remove_file(ws.config().join("settings.json")).unwrap();
    let out = run_in(&ws, &["acp", "--disallowed-tools", "bash(("], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--disallowed-tools: rule 'bash(('"),
        "{}",
        text(&out.stderr)
    );
    let out = run_in(&ws, &["-p", "hi", "--allowed-tools", "bash(git *),web_fetch(x.io)"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("web_fetch(domain:x.io)"), "{}", text(&out.stderr));
}

#[test]
fn project_rules_are_shown_and_their_allows_wait_for_approval() {
    let ws = Workspace::new("cli-rules-project");
    let env = [("IAC_CODE_ALLOWED_TOOLS", "bash(git *), read_file")];
    let out = run_in(&ws, &["config", "approve"], &[]);
    assert_eq!(out.status.code(), Some(2), "nothing to approve");
    assert!(text(&out.stderr).contains("no .iac-code/settings.json"), "{}", text(&out.stderr));

    ws.write(
        ".iac-code/settings.json",
        r#"{"permissions": {"allow": ["bash(make test)"], "deny": ["bash(rm *)"]}}"#,
    );
    let file = ws.path(".iac-code/settings.json").display().to_string();
    let out = run_in(&ws, &["config", "show"], &env);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    for line in [
        "permissions.allow\tbash(git *)\tIAC_CODE_ALLOWED_TOOLS".to_string(),
        "permissions.allow\tread_file\tIAC_CODE_ALLOWED_TOOLS".to_string(),
        format!(
            "permissions.allow\tbash(make test)\t{file} (not approved: iac-code config approve)"
        ),
        format!("permissions.deny\tbash(rm *)\t{file}"),
    ] {
        assert!(shown.lines().any(|l| l == line), "{line:?} in {shown}");
    }

    let out = run_in(&ws, &["config", "approve"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "allow\tbash(make test)\ndeny\tbash(rm *)\n");
    assert!(text(&out.stderr).contains(&file), "{}", text(&out.stderr));
    let approvals = std::fs::read_to_string(ws.config().join("project-approvals.json")).unwrap();
    assert!(approvals.contains(&file), "{approvals}");

    let out = run_in(&ws, &["config", "show", "--json"], &[]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(json["permissions"]["project"]["approved"], true);
    assert_eq!(json["permissions"]["rules"][0]["rule"], "bash(make test)");
    assert_eq!(json["permissions"]["rules"][0]["applies"], true);
    assert_eq!(json["provider"]["source"], "unset", "the settings are still there");

    // A changed file needs approving again; a malformed one is exit status 2.
    ws.write(".iac-code/settings.json", r#"{"permissions": {"allow": ["bash"]}}"#);
    let out = run_in(&ws, &["config", "show", "--json"], &[]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(json["permissions"]["project"]["approved"], false);
    assert_eq!(json["permissions"]["rules"][0]["applies"], false);
    ws.write(".iac-code/settings.json", r#"{"permissions": {"ask": ["bash()"]}}"#);
    for args in [&["config", "show"][..], &["config", "approve"]] {
        let out = run_in(&ws, args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains("permissions.ask: rule 'bash()'"),
            "{}",
            text(&out.stderr)
        );
    }
}

fn flags(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("--") {
        let rest = &text[i + 2..];
        let name: String =
            rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
        if name.len() > 1 && name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
            out.insert(format!("--{name}"));
        }
    }
    out
}

/// The variables named in `text`: `IAC_CODE_*` and `IACCODE_*` (a name ending in `_`, as in
/// `IAC_CODE_*`, is a family, not a variable).
fn variables(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for prefix in ["IAC_CODE_", "IACCODE_"] {
        for (i, _) in text.match_indices(prefix) {
            if text[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let name: String =
                text[i..].chars().take_while(|c| c.is_ascii_uppercase() || *c == '_').collect();
            if !name.ends_with('_') {
                out.insert(name);
            }
        }
    }
    out
}

/// The subcommands `--help` lists ("sessions list", "mcp add-json", "chat"): the words
/// after `iac-code` on each usage line, up to the first option or placeholder.
fn subcommands(help: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in help.lines() {
        let Some(usage) = line.strip_prefix("  iac-code ") else { continue };
        let usage = usage.split("  ").next().unwrap_or_default();
        let words: Vec<&str> = usage
            .split_whitespace()
            .map(|w| w.trim_start_matches('[').trim_end_matches(']'))
            .take_while(|w| {
                w.starts_with(|c: char| c.is_ascii_lowercase())
                    && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
            })
            .collect();
        if !words.is_empty() {
            out.insert(words.join(" "));
        }
    }
    out
}

/// The variables the code reads: every `"IAC_CODE_…"` and `"IACCODE_…"` string in `src/`.
fn variables_in_the_code() -> BTreeSet<String> {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut vars = BTreeSet::new();
    for file in walk(std::path::Path::new(src)) {
        let code = std::fs::read_to_string(&file).unwrap();
        for (i, _) in code.match_indices('"') {
            let name: String =
                code[i + 1..].chars().take_while(|c| c.is_ascii_uppercase() || *c == '_').collect();
            let ours = name.starts_with("IAC_CODE_") || name.starts_with("IACCODE_");
            if ours && !name.ends_with('_') {
                vars.insert(name);
            }
        }
    }
    vars
}

/// The man page is the complete reference: every flag and subcommand `--help` names and
/// every `IAC_CODE_*` variable the code reads is documented there.
#[test]
fn man_page_documents_every_flag_subcommand_and_variable() {
    let help = text(&run(&["--help"], &[]).stdout);
    let man_path = concat!(env!("CARGO_MANIFEST_DIR"), "/man/iac-code.1");
    let man = std::fs::read_to_string(man_path).expect("man page").replace("\\-", "-");
    // The examples and the development section after them also show other programs'
    // flags (cargo, install.sh, deploy/release.sh), and so do the infrastructure gate's
    // and the policies' sections (terraform's, kubectl's, helm's, git's).
    let documented = man.split(".SH EXAMPLES").next().unwrap_or_default();
    let mut ours = documented.to_string();
    for section in [".SH INFRASTRUCTURE GATE", ".SH POLICY"] {
        let (before, rest) = ours.split_once(section).expect("the section");
        let after = rest.split_once("\n.SH ").map_or("", |(_, rest)| rest);
        ours = format!("{before}\n.SH {after}");
    }
    assert_eq!(flags(&help), flags(&ours), "flags differ between --help and the man page");
    let commands = subcommands(&help);
    for must in ["chat", "acp", "doctor", "sessions migrate", "mcp add-json", "policy eval"] {
        assert!(commands.contains(must), "{must} not found in --help: {commands:?}");
    }
    for command in &commands {
        let heading = [format!(".B {command} "), format!(".B {command}\n")];
        let named = format!("\\fBiac-code {command}\\fR");
        assert!(
            heading.iter().any(|h| documented.contains(h.as_str())) || documented.contains(&named),
            "the subcommand '{command}' has no entry in the man page"
        );
    }
    let vars = variables_in_the_code();
    assert!(vars.len() >= 10, "{vars:?}");
    for var in vars.iter().filter(|v| v.starts_with("IAC_CODE_")) {
        assert!(man.contains(var.as_str()), "{var} is not in man/iac-code.1");
    }
}

/// The README is the front door, not the reference: it need not name every flag or
/// variable, but each `--flag` and `IAC_CODE_*` it names must exist (a flag of iac-code,
/// of `install.sh`, or of a program whose flags the gate judges, as the man page's
/// INFRASTRUCTURE GATE names them).
#[test]
fn readme_names_only_flags_and_variables_that_exist() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).expect("README.md");
    let help = text(&run(&["--help"], &[]).stdout);
    let install = std::fs::read_to_string(format!("{root}/install.sh")).expect("install.sh");
    let man = std::fs::read_to_string(format!("{root}/man/iac-code.1")).expect("man page");
    let man = man.replace("\\-", "-");
    let gate = man.split_once(".SH INFRASTRUCTURE GATE").expect("the gate").1;
    let gate = gate.split_once("\n.SH ").map_or(gate, |(section, _)| section);
    let real: BTreeSet<String> =
        [flags(&help), flags(&install), flags(gate)].into_iter().flatten().collect();
    let named = flags(&readme);
    assert!(named.len() >= 5, "the README names hardly any flag: {named:?}");
    for flag in &named {
        assert!(real.contains(flag), "README.md names {flag}, which is no flag of iac-code");
    }
    let vars = variables_in_the_code();
    let named = variables(&readme);
    assert!(named.len() >= 5, "the README names hardly any variable: {named:?}");
    for var in &named {
        assert!(vars.contains(var), "README.md names {var}, which the code never reads");
    }
}

pub fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}
