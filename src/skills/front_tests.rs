//! Tables for SKILL.md parsing: what is kept, what warns, what skips the skill.

use super::*;

fn skill(front: &str, body: &str) -> String {
    format!("---\n{front}\n---\n{body}")
}

#[test]
fn reads_every_field_of_the_format() {
    let text = skill(
        "name: tf-plan\ndescription: Review a terraform plan. Use before apply.\nlicense: \
         Apache-2.0\ncompatibility: needs terraform >= 1.5\nmetadata:\n  author: infra\n  \
         version: 1\nallowed-tools: Bash(terraform plan:*) Read Grep",
        "\n# Steps\nRun plan.\n",
    );
    let (meta, problems) = parse(&text, "tf-plan");
    assert_eq!(problems, vec![]);
    let meta = meta.expect("parsed");
    assert_eq!(meta.name, "tf-plan");
    assert_eq!(meta.description, "Review a terraform plan. Use before apply.");
    assert_eq!(meta.license.as_deref(), Some("Apache-2.0"));
    assert_eq!(meta.compatibility.as_deref(), Some("needs terraform >= 1.5"));
    assert_eq!(meta.metadata.get("version").map(String::as_str), Some("1"));
    assert_eq!(meta.allowed_tools, ["Bash(terraform plan:*)", "Read", "Grep"]);
    assert_eq!(meta.body, "# Steps\nRun plan.\n");
}

#[test]
fn lenient_table() {
    // (front matter, folder, used?, a problem mentioning, fatal?)
    let rows: &[(&str, &str, bool, &str, bool)] = &[
        ("name: a\n", "a", false, "no description", true),
        ("name: a\ndescription: ''", "a", false, "no description", true),
        ("name: other\ndescription: d", "a", true, "differs from its folder", false),
        ("name: Bad_Name\ndescription: d", "good", true, "not valid", false),
        ("description: d", "good", true, "no name", false),
        ("name: -a\ndescription: d", "-a", false, "valid name", true),
        ("name: a--b\ndescription: d", "x--y", false, "valid name", true),
        ("name: a\ndescription: d\nfoo: 1", "a", true, "unknown field 'foo'", false),
        ("name: a\ndescription: d: with colon", "a", true, "not valid YAML", false),
        ("name: a\ndescription: d\nmetadata:\n  k: [x", "a", false, "not valid YAML", true),
        ("- a\n- b", "a", false, "not a YAML mapping", true),
        ("name: a\ndescription: d\nmetadata: [1]", "a", true, "not a mapping", false),
        ("name: a\ndescription: d\nlicense: [x]", "a", true, "'license' is not text", false),
    ];
    for (front, folder, used, mention, fatal) in rows {
        let (meta, problems) = parse(&skill(front, "body"), folder);
        assert_eq!(meta.is_some(), *used, "{front:?}: {problems:?}");
        let found = problems.iter().find(|p| p.message.contains(mention));
        let found = found.unwrap_or_else(|| panic!("{front:?}: no '{mention}' in {problems:?}"));
        assert_eq!(found.fatal, *fatal, "{front:?}");
    }
}

#[test]
fn names_follow_the_format() {
    for good in ["a", "terraform-plan-review", "k8s", &"x".repeat(64)] {
        assert!(valid_name(good), "{good}");
    }
    for bad in ["", "-a", "a-", "a--b", "A", "a_b", "a b", "ä", &"x".repeat(65)] {
        assert!(!valid_name(bad), "{bad}");
    }
}

#[test]
fn bounds_and_shapes() {
    let long = "d".repeat(1100);
    let (meta, problems) = parse(&skill(&format!("name: a\ndescription: {long}"), ""), "a");
    assert_eq!(meta.expect("parsed").description.chars().count(), MAX_DESCRIPTION);
    assert!(problems.iter().any(|p| p.message.contains("1100 characters")), "{problems:?}");
    let compat = "c".repeat(501);
    let (meta, _) =
        parse(&skill(&format!("name: a\ndescription: d\ncompatibility: {compat}"), ""), "a");
    assert_eq!(meta.expect("parsed").compatibility.expect("parsed").len(), MAX_COMPATIBILITY);
    let body = "line\n".repeat(BODY_LINES + 1);
    let (meta, problems) = parse(&skill("name: a\ndescription: d", &body), "a");
    assert!(meta.is_some() && problems.iter().any(|p| p.message.contains("500 lines")));
    for text in ["no front matter", "---\nname: a\n", "---x\nname: a\n---\n"] {
        let (meta, problems) = parse(text, "a");
        assert!(meta.is_none() && problems[0].fatal, "{text:?}");
    }
    let deep = format!("name: a\ndescription: d\nx: {}{}", "[".repeat(300), "]".repeat(300));
    let (meta, problems) = parse(&skill(&deep, ""), "a");
    assert!(meta.is_none() && problems[0].message.contains("nests too deeply"));
    let crlf = "---\r\nname: a\r\ndescription: d\r\n---\r\nbody\r\n";
    assert_eq!(parse(crlf, "a").0.expect("parsed").body, "body\r\n");
}

#[test]
fn allowed_tools_split_outside_parentheses() {
    assert_eq!(split_tools("Bash(git status:*) Read"), ["Bash(git status:*)", "Read"]);
    assert_eq!(split_tools("Read, Grep,Glob"), ["Read", "Grep", "Glob"]);
    let (meta, _) =
        parse(&skill("name: a\ndescription: d\nallowed-tools: [Read, 'Bash(ls:*)']", ""), "a");
    assert_eq!(meta.expect("parsed").allowed_tools, ["Read", "Bash(ls:*)"]);
}
