//! The rules as a table: (rules, call, verdict), then every parse error.

use super::*;

/// A call as the table writes it.
enum Call<'a> {
    /// bash, each simple command parsed.
    Bash(&'a [&'a str]),
    /// bash, not parsed whole: the commands understood and the raw text.
    Opaque(&'a [&'a str], &'a str),
    /// A file tool and its paths.
    Files(&'a str, &'a [&'a str]),
    /// web_fetch and its host.
    Fetch(Option<&'a str>),
    /// Any other tool, by name.
    Tool(&'a str),
}

/// The rules of `lines`, each `allow|ask|deny <rule>`.
fn set(lines: &[&str]) -> RuleSet {
    let rules = lines
        .iter()
        .map(|line| {
            let (verdict, text) = line.split_once(' ').expect("verdict and rule");
            let verdict = match verdict {
                "allow" => Verdict::Allow,
                "ask" => Verdict::Ask,
                "deny" => Verdict::Deny,
                other => panic!("not a verdict: {other}"),
            };
            Rule::parse(text, verdict, Source::Flag("--test")).expect(text)
        })
        .collect();
    RuleSet::new(rules)
}

fn judge(rules: &RuleSet, call: &Call) -> Option<(Verdict, String)> {
    let owned = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let (tool, commands, opaque, paths, host) = match call {
        Call::Bash(c) => ("bash", owned(c), None, Vec::new(), None),
        Call::Opaque(c, raw) => ("bash", owned(c), Some(*raw), Vec::new(), None),
        Call::Files(tool, p) => (*tool, Vec::new(), None, owned(p), None),
        Call::Fetch(host) => ("web_fetch", Vec::new(), None, Vec::new(), *host),
        Call::Tool(tool) => (*tool, Vec::new(), None, Vec::new(), None),
    };
    let subject = Subject { tool, commands: &commands, opaque, paths: &paths, host, patterns: &[] };
    rules.verdict(&subject).map(|(v, rule)| (v, rule.text.clone()))
}

use Call::*;
use Verdict::*;

#[rustfmt::skip]
const TABLE: &[(&[&str], Call, Option<Verdict>)] = &[
    // Whole-line command patterns.
    (&["allow bash(git *)"], Bash(&["git status"]), Some(Allow)),
    (&["allow bash(git *)"], Bash(&["git status", "rm -rf x"]), None),
    (&["allow bash(git *)"], Bash(&["git"]), None),
    (&["allow bash(git *)"], Bash(&["gitk --all"]), None),
    (&["allow bash(git:*)"], Bash(&["git"]), Some(Allow)),
    (&["allow bash(git:*)"], Bash(&["git log -1"]), Some(Allow)),
    (&["allow Bash(npm run test:*)"], Bash(&["npm run test"]), Some(Allow)),
    (&["allow Bash(npm run test:*)"], Bash(&["npm run test --watch"]), Some(Allow)),
    (&["allow Bash(npm run test:*)"], Bash(&["npm run testing"]), None),
    (&["allow bash(make test)"], Bash(&["make test"]), Some(Allow)),
    (&["allow bash(make test)"], Bash(&["make  test"]), Some(Allow)),
    (&["allow bash(make test)"], Bash(&["make test-all"]), None),
    (&["allow bash(make test)"], Bash(&["sudo make test"]), None),
    (&["allow bash(terraform plan*)"], Bash(&["terraform plan -out=tf.plan"]), Some(Allow)),
    (&["allow bash(terraform plan*)"], Bash(&["terraform apply"]), None),
    (&["allow bash(git *)", "allow bash(make test)"], Bash(&["git add .", "make test"]), Some(Allow)),
    (&["allow bash(*)"], Bash(&["anything at all"]), Some(Allow)),
    (&["allow bash(git *)"], Bash(&[]), None),
    (&[], Bash(&["ls"]), None),
    // Deny over ask over allow.
    (&["allow bash(git *)", "deny bash(git push*)"], Bash(&["git push origin"]), Some(Deny)),
    (&["allow bash(git *)", "ask bash(git push*)"], Bash(&["git push"]), Some(Ask)),
    (&["ask bash(git push*)", "deny bash(git push --force*)"], Bash(&["git push --force"]), Some(Deny)),
    (&["allow bash", "deny bash(rm *)"], Bash(&["ls", "rm -rf /"]), Some(Deny)),
    (&["allow bash", "ask bash(terraform apply*)"], Bash(&["terraform apply"]), Some(Ask)),
    (&["deny bash(* --force)"], Bash(&["git push --force"]), Some(Deny)),
    // Commands not parsed whole.
    (&["allow bash"], Opaque(&[], "echo $(date)"), Some(Allow)),
    (&["allow bash(echo *)"], Opaque(&["echo hi"], "echo hi; $(x)"), None),
    (&["allow bash(*)"], Opaque(&[], "eval \"$X\""), None),
    (&["deny bash(rm -rf*)"], Opaque(&[], "x=$(rm -rf /)"), Some(Deny)),
    (&["deny bash(rm *)"], Opaque(&[], "/bin/rm -rf y $(z)"), Some(Deny)),
    (&["deny bash(rm *)"], Opaque(&[], "terraform plan $(z)"), None),
    (&["ask bash(terraform destroy*)"], Opaque(&[], "cd a && `terraform \t destroy`"), Some(Ask)),
    (&["allow bash(git *)", "ask bash(git push:*)"], Opaque(&["git status"], "git status; $(git push)"), Some(Ask)),
    (&["deny bash(git push*)"], Opaque(&["git status"], "git status; $(x)"), None),
    (&["deny bash(* --force)"], Opaque(&[], "git push $(x) --force"), Some(Deny)),
    // Path globs.
    (&["allow write_file(*.tf)"], Files("write_file", &["main.tf"]), Some(Allow)),
    (&["allow write_file(*.tf)"], Files("write_file", &["infra/main.tf"]), None),
    (&["allow write_file(**/*.tf)"], Files("write_file", &["infra/main.tf"]), Some(Allow)),
    (&["allow write_file(**/*.tf)"], Files("write_file", &["main.tf"]), Some(Allow)),
    (&["allow edit_file(modules/**)"], Files("edit_file", &["modules/vpc/main.tf"]), Some(Allow)),
    (&["allow edit_file(modules/**)"], Files("edit_file", &["modules/a.tf", "b.tf"]), None),
    (&["allow write_file(*.tf)"], Files("edit_file", &["main.tf"]), None),
    (&["allow Write(*.tf)"], Files("write_file", &["./main.tf"]), Some(Allow)),
    (&["allow Edit(./docs/*)"], Files("edit_file", &["docs/a.md"]), Some(Allow)),
    (&["deny read_file(/etc/**)"], Files("read_file", &["/etc/ssl/cert.pem"]), Some(Deny)),
    (&["deny Read(//etc/**)"], Files("read_file", &["/etc/passwd"]), Some(Deny)),
    (&["allow read_file", "deny Read(secrets/**)"], Files("read_file", &["a.md", "secrets/k"]), Some(Deny)),
    (&["allow read_file"], Files("read_file", &[]), Some(Allow)),
    (&["allow read_file(*.md)"], Files("read_file", &[]), None),
    (&["ask write_file", "allow write_file(*)"], Files("write_file", &["a.tf"]), Some(Ask)),
    (&["allow grep(infra/**)"], Files("grep", &["infra/modules"]), Some(Allow)),
    // Domains.
    (&["allow web_fetch(domain:registry.terraform.io)"], Fetch(Some("registry.terraform.io")), Some(Allow)),
    (&["allow web_fetch(domain:terraform.io)"], Fetch(Some("registry.terraform.io")), Some(Allow)),
    (&["allow web_fetch(domain:example.com)"], Fetch(Some("badexample.com")), None),
    (&["allow web_fetch(domain:example.com)"], Fetch(Some("EXAMPLE.COM.")), Some(Allow)),
    (&["allow web_fetch(domain:example.com)"], Fetch(None), None),
    (&["allow web_fetch", "deny WebFetch(domain:evil.com)"], Fetch(Some("x.evil.com")), Some(Deny)),
    (&["allow web_fetch"], Fetch(None), Some(Allow)),
    // MCP tools and the others, by name.
    (&["allow mcp__docs__*"], Tool("mcp__docs__search"), Some(Allow)),
    (&["allow mcp__docs__*"], Tool("mcp__other__search"), None),
    (&["allow mcp__docs"], Tool("mcp__docs__search"), Some(Allow)),
    (&["allow mcp__docs__search"], Tool("mcp__docs__searchx"), None),
    (&["allow mcp__docs__search", "deny mcp__*"], Tool("mcp__docs__search"), Some(Deny)),
    (&["allow glob", "allow agent"], Tool("agent"), Some(Allow)),
    (&["allow bash"], Tool("agent"), None),
];

#[test]
fn the_table_of_rules_calls_and_verdicts() {
    assert!(TABLE.len() >= 40);
    let mut wrong = Vec::new();
    for (n, (rules, call, want)) in TABLE.iter().enumerate() {
        let got = judge(&set(rules), call).map(|(v, _)| v);
        if got != *want {
            wrong.push(format!("row {}: {rules:?}: got {got:?}, want {want:?}", n + 1));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_verdict_names_the_rule_that_gave_it() {
    let rules = set(&["allow bash(git *)", "deny bash(git push*)", "allow bash(make test)"]);
    let got = judge(&rules, &Bash(&["git status", "git push"]));
    assert_eq!(got, Some((Deny, "bash(git push*)".to_string())));
    let got = judge(&rules, &Bash(&["git status", "make test"]));
    assert_eq!(got, Some((Allow, "bash(git *)".to_string())));
    let rule = &rules.rules()[1];
    assert_eq!(rule.tool, "bash");
    assert_eq!(rule.to_string(), "deny rule 'bash(git push*)' (--test)");
}

#[test]
fn names_are_ours_or_claude_codes() {
    for (text, tool) in [
        ("Bash(ls)", "bash"),
        ("Read", "read_file"),
        ("Write(*.tf)", "write_file"),
        ("Edit", "edit_file"),
        ("MultiEdit(*.tf)", "edit_file"),
        ("TodoWrite", "update_plan"),
        ("Task", "agent"),
        ("LS", "list_files"),
        ("WebFetch(domain:a.io)", "web_fetch"),
        ("Glob", "glob"),
        ("Grep", "grep"),
        ("  list_files  ", "list_files"),
        ("mcp__srv", "mcp__srv__*"),
        ("mcp__*", "mcp__*"),
    ] {
        let rule = Rule::parse(text, Allow, Source::Env("X")).expect(text);
        assert_eq!(rule.tool, tool, "{text}");
        assert_eq!(rule.text, text.trim());
    }
    for tool in BUILTIN_TOOLS {
        assert!(Rule::parse(tool, Deny, Source::Env("X")).is_ok(), "{tool}");
    }
}

#[test]
fn bad_rules_are_refused_naming_the_rule() {
    for (text, want) in [
        ("", "an empty rule"),
        ("   ", "an empty rule"),
        ("bash(git status", "unbalanced parentheses"),
        ("bash((", "unbalanced parentheses"),
        ("bash(echo (x)", "unbalanced parentheses"),
        ("bash)x", "without its '('"),
        ("bash(x)y", "text after the closing parenthesis"),
        ("Shell(ls)", "unknown tool 'Shell'"),
        ("read_files", "unknown tool 'read_files'"),
        ("BASH", "unknown tool 'BASH'"),
        ("mcp__", "not an MCP tool name"),
        ("mcp__a b", "not an MCP tool name"),
        ("bash()", "empty parentheses"),
        ("bash(  )", "empty parentheses"),
        ("bash(:*)", "nothing before ':*'"),
        ("agent(explore)", "agent takes no pattern"),
        ("update_plan(x)", "takes no pattern"),
        ("mcp__srv__tool(x)", "takes no pattern"),
        ("write_file([)", "bad path pattern"),
        ("write_file(a{b)", "bad path pattern"),
        ("read_file(~/.ssh/**)", "'~' is not expanded"),
        ("web_fetch(example.com)", "write web_fetch(domain:example.com)"),
        ("web_fetch(domain:)", "not a host name"),
        ("web_fetch(domain:https://x.io)", "not a host name"),
        ("web_fetch(domain:*.x.io)", "not a host name"),
    ] {
        let err = Rule::parse(text, Allow, Source::Flag("--allowed-tools")).expect_err(text);
        assert!(err.contains(want), "{text:?}: {err}");
        if !text.trim().is_empty() {
            assert!(err.contains(&format!("'{}'", text.trim())), "{text:?} not named: {err}");
        }
    }
}

#[test]
fn lists_split_on_commas_outside_parentheses() {
    assert_eq!(split_list("bash(git *),write_file"), ["bash(git *)", "write_file"]);
    assert_eq!(split_list(" bash(echo a,b) , read_file ,"), ["bash(echo a,b)", "read_file"]);
    assert_eq!(split_list("bash(("), ["bash(("]);
    assert!(split_list(" , ").is_empty());
}

#[test]
fn sources_say_where_a_rule_was_written() {
    assert_eq!(
        Source::User("/h/.iac-code/settings.json".into()).to_string(),
        "/h/.iac-code/settings.json"
    );
    assert_eq!(Source::Flag("--allowed-tools").to_string(), "--allowed-tools");
    assert_eq!(Source::Env("IAC_CODE_ALLOWED_TOOLS").to_string(), "IAC_CODE_ALLOWED_TOOLS");
    assert!(Verdict::Allow < Verdict::Ask && Verdict::Ask < Verdict::Deny);
}

/// A command with hidden parts, as a pattern, meets a deny or ask rule when some command
/// it may stand for matches the rule (issue 32: `t=touch; $t M` against `bash(touch *)`).
#[test]
fn a_hidden_part_may_be_what_a_deny_rule_names() {
    let rows: &[(&str, &str, bool)] = &[
        ("touch *", "* M", true),
        ("touch *", "*h M", true),
        ("touch *", "ls *", false),
        ("touch", "*x M", false),
        ("touch", "* M", false),
        ("touch", "*", true),
        ("rm -rf *", "rm * /", true),
        ("rm -rf *", "rm -f /", false),
        ("git push*", "git * --force", true),
        ("git push*", "git status *", false),
        ("npm run test:*", "* test", true),
        ("terraform destroy*", "terraform *", true),
        ("terraform destroy*", "tofu *", false),
        ("*", "anything", true),
        ("a*b*c", "*c", true),
        ("a*b", "*x*", true),
        ("ab", "a*c", false),
    ];
    for (rule, pattern, want) in rows {
        let rules = set(&[&format!("deny bash({rule})")]);
        let patterns = [pattern.to_string()];
        let subject =
            Subject { tool: "bash", commands: &[], patterns: &patterns, ..Subject::default() };
        let got = rules.verdict(&subject).map(|(v, _)| v);
        assert_eq!(got == Some(Deny), *want, "deny bash({rule}) vs pattern {pattern:?}");
    }
    // A pattern never allows: a command not known word for word is not every allowed one.
    let rules = set(&["allow bash(touch *)"]);
    let (commands, patterns) = (["$t M".to_string()], ["* M".to_string()]);
    let subject = Subject {
        tool: "bash",
        commands: &commands,
        opaque: Some("$t M"),
        patterns: &patterns,
        ..Subject::default()
    };
    assert_eq!(rules.verdict(&subject).map(|(v, _)| v), None);
    // Too long to compare is taken to meet.
    let long = ["x".repeat(5_000) + "*"];
    let rules = set(&[&format!("deny bash({}*)", "y".repeat(1_000))]);
    let subject = Subject { tool: "bash", patterns: &long, ..Subject::default() };
    assert_eq!(rules.verdict(&subject).map(|(v, _)| v), Some(Deny));
}
