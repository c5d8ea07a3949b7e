//! The bundled Agent Skills (`src/skills/bundled/`), read as text: each folder is a valid
//! skill, names only our tools, guards every destructive or secret-printing command it
//! mentions, links only files it ships, and every command it shows in a shell block is
//! judged by the infrastructure gate as the skill's text says. Their shipped examples are
//! run for real in `bundled_skills_run.rs`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use iac_code::infra::{Tier, classify};

/// Where the bundled skills live.
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/skills/bundled");

/// The six skills of the issue, exactly.
const NAMES: [&str; 6] = [
    "ansible-check",
    "helm-chart",
    "kubernetes-review",
    "terraform-module",
    "terraform-plan-review",
    "terraform-safe-refactor",
];

/// The tools a skill may name: the built-in ones plus those of the skills and memory work.
const TOOLS: &str = "read_file list_files glob grep write_file edit_file bash web_fetch agent \
    update_plan exit_plan_mode skill read_memory write_memory ask_user";

/// Tools not in `rules::BUILTIN_TOOLS` yet (added by the skills and memory work).
const COMING: &str = "skill read_memory write_memory";

/// Other agents' tool names a skill copied from elsewhere would carry.
const FOREIGN_TOOLS: &str = "Bash Read Write Edit MultiEdit Grep Glob LS WebFetch WebSearch Task \
    TodoWrite apply_patch run_shell_command read_many_files search_file_content write_todos \
    str_replace create_file list_dir";

/// Commands that lose infrastructure or force their way; prose must guard each mention.
const RISKY: &str = "-auto-approve, --force, kubectl delete, helm uninstall, helm rollback, \
    rollout undo, terraform destroy, state rm, state mv, force-unlock, ansible-vault view, \
    output -json, get secret";

/// Words no command in a shell block of a skill may hold.
const RISKY_WORDS: &[&str] =
    &["destroy", "-destroy", "-auto-approve", "--force", "delete", "uninstall", "force-unlock"];

/// Words that make a mention a prohibition or a user-only action.
const GUARDS: &[&str] =
    &["never", "unless the user", "only if the user", "only when the user", "do not", "don't"];

/// One skill folder, read.
pub struct Skill {
    pub name: String,
    pub dir: PathBuf,
    pub front: Vec<(String, String)>,
    pub body: String,
}

impl Skill {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.front.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// Every bundled skill, sorted by folder name.
pub fn skills() -> Vec<Skill> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(ROOT)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| {
            let text = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
            let (front, body) =
                split_front(&text).unwrap_or_else(|| panic!("{}: no front matter", dir.display()));
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            Skill { name, dir, front, body }
        })
        .collect()
}

/// The front matter's `key: value` lines and the body, or `None` without `---` fences.
fn split_front(text: &str) -> Option<(Vec<(String, String)>, String)> {
    let rest = text.strip_prefix("---\n")?;
    let end = rest.find("\n---\n")?;
    let front = rest[..end]
        .lines()
        .map(|line| {
            let (k, v) = line.split_once(':').unwrap_or_else(|| panic!("not key: value: {line}"));
            (k.to_string(), v.trim().to_string())
        })
        .collect();
    Some((front, rest[end + 5..].to_string()))
}

/// Every file under `dir`, recursively, sorted.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The Markdown files of a skill: SKILL.md and any under references/.
fn markdown(skill: &Skill) -> Vec<(PathBuf, String)> {
    files(&skill.dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// A plain YAML scalar on one line that any front matter reader takes as written.
fn plain_scalar(value: &str) -> bool {
    !value.is_empty()
        && !value.contains(": ")
        && !value.contains(" #")
        && !value.starts_with(['"', '\'', '[', '{', '>', '|', '&', '*', '!', '%', '@', '`', '-'])
}

#[test]
fn every_bundled_skill_is_a_valid_agent_skill() {
    let skills = skills();
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, NAMES, "the bundled skill folders");
    let allowed_keys = ["name", "description", "license", "compatibility", "metadata"];
    for skill in &skills {
        let at = &skill.name;
        for (key, value) in &skill.front {
            assert!(allowed_keys.contains(&key.as_str()), "{at}: unexpected key {key}");
            assert!(plain_scalar(value), "{at}: {key} is not a plain one-line scalar: {value}");
        }
        assert_eq!(skill.get("name"), Some(at.as_str()), "{at}: name differs from the folder");
        let fine = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
        let trimmed = !at.starts_with('-') && !at.ends_with('-') && !at.contains("--");
        assert!(at.len() <= 64 && at.chars().all(fine) && trimmed, "{at}: not a skill name");
        let description = skill.get("description").unwrap_or_default();
        let chars = description.chars().count();
        assert!((1..=1024).contains(&chars), "{at}: description of {chars} chars");
        assert!(!description.contains(['<', '>']), "{at}: angle brackets in the description");
        assert!(description.contains("Use when"), "{at}: the description says no 'Use when'");
        assert_eq!(skill.get("license"), Some("Apache-2.0"), "{at}: license");
        let compatibility = skill.get("compatibility").unwrap_or_default();
        assert!(compatibility.chars().count() <= 500, "{at}: compatibility over 500 chars");
        let body_lines = skill.body.lines().count();
        assert!(skill.body.trim().len() > 500, "{at}: the body is (nearly) empty");
        assert!(body_lines <= 300, "{at}: the body has {body_lines} lines (keep it under 300)");
        assert!(skill.body.trim_start().starts_with("# "), "{at}: the body has no title");
        for file in files(&skill.dir) {
            let lines = std::fs::read_to_string(&file).unwrap().lines().count();
            assert!(lines <= 400, "{}: {lines} lines", file.display());
        }
    }
    // The catalog (names and descriptions) goes into every system prompt: the six fit in
    // 2 % of a 32k-token context (about 640 tokens, 2,400 characters) with room to spare.
    let catalog: usize = skills.iter().map(|s| s.get("description").unwrap().len() + 24).sum();
    assert!(catalog <= 2400, "the bundled catalog takes {catalog} characters");
}

#[test]
fn skills_name_only_tools_we_have() {
    let tools: Vec<&str> = TOOLS.split_whitespace().collect();
    for tool in &tools {
        assert!(
            iac_code::rules::BUILTIN_TOOLS.contains(tool)
                || COMING.split_whitespace().any(|t| t == *tool),
            "{tool}: listed here but not a tool of ours"
        );
    }
    for tool in iac_code::rules::BUILTIN_TOOLS {
        assert!(tools.contains(tool), "{tool}: a tool of ours missing from this test's list");
    }
    for skill in skills() {
        let mut ours = BTreeSet::new();
        for (path, text) in markdown(&skill) {
            for (span, after) in code_spans(&text) {
                let at = format!("{}: `{span}`", path.display());
                let foreign = FOREIGN_TOOLS.split_whitespace().any(|t| t == span);
                assert!(!foreign, "{at}: another agent's tool name");
                if after.trim_start().starts_with("tool") {
                    assert!(tools.contains(&span), "{at}: called a tool but is not one of ours");
                }
                if tools.contains(&span) {
                    ours.insert(span.to_string());
                }
            }
        }
        assert!(!ours.is_empty(), "{}: names none of our tools", skill.name);
    }
}

/// Each inline code span (outside fenced blocks) with the text right after it.
fn code_spans(text: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    for (prose, _) in prose_lines(text) {
        let mut rest = prose;
        while let Some(open) = rest.find('`') {
            let Some(len) = rest[open + 1..].find('`') else { break };
            let span = &rest[open + 1..open + 1 + len];
            rest = &rest[open + len + 2..];
            out.push((span, rest));
        }
    }
    out
}

/// The lines outside fenced code blocks, each with its 0-based line number.
fn prose_lines(text: &str) -> Vec<(&str, usize)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push((line, n));
        }
    }
    out
}

/// Prose split into paragraphs and list items, as one string each.
fn chunks(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut last = usize::MAX - 1;
    for (line, n) in prose_lines(text) {
        let trimmed = line.trim_start();
        let item = trimmed.starts_with("- ")
            || trimmed.split_once(". ").is_some_and(|(d, _)| d.parse::<u32>().is_ok());
        if trimmed.is_empty() {
            last = usize::MAX - 1;
            continue;
        }
        if item || n != last + 1 || out.is_empty() {
            out.push(String::new());
        }
        let chunk = out.last_mut().unwrap();
        chunk.push(' ');
        chunk.push_str(trimmed);
        last = n;
    }
    out
}

#[test]
fn destructive_commands_are_only_mentioned_with_a_guard() {
    for skill in skills() {
        for (path, text) in markdown(&skill) {
            for chunk in chunks(&text) {
                let lower = chunk.to_lowercase();
                for risky in RISKY.split(", ").filter(|r| chunk.contains(r)) {
                    assert!(
                        GUARDS.iter().any(|g| lower.contains(g)),
                        "{}: `{risky}` without a guard in:\n{chunk}",
                        path.display()
                    );
                }
            }
        }
    }
}

/// The commands of each shell block, continuation lines joined, with the prose paragraph
/// right before the block.
pub fn shell_commands(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (mut before, mut ended) = (String::new(), true);
    let mut block: Option<String> = None;
    for line in text.lines() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut block, fence) {
            (None, Some(lang)) if ["bash", "sh", "shell"].contains(&lang.trim()) => {
                block = Some(String::new())
            }
            (None, Some(_)) => block = Some("#skip".to_string()),
            (Some(cmds), Some(_)) => {
                if !cmds.starts_with("#skip") {
                    for cmd in cmds.replace("\\\n", " ").lines() {
                        let cmd = cmd.trim();
                        if !cmd.is_empty() && !cmd.starts_with('#') {
                            out.push((cmd.to_string(), before.clone()));
                        }
                    }
                }
                (block, ended) = (None, true);
            }
            (Some(cmds), None) => {
                cmds.push_str(line);
                cmds.push('\n');
            }
            (None, None) if line.trim().is_empty() => ended = true,
            (None, None) => {
                if ended {
                    (before, ended) = (String::new(), false);
                }
                before.push(' ');
                before.push_str(line.trim());
            }
        }
    }
    out
}

#[test]
fn every_shown_command_is_judged_as_the_skill_says() {
    let cwd = std::env::temp_dir();
    let env = |name: &str| (name == "HOME").then(|| "/root".to_string());
    let mut judged = 0;
    for skill in skills() {
        // SKILL.md is the procedure; references/ hold examples of the user's own files.
        let path = skill.dir.join("SKILL.md");
        let text = std::fs::read_to_string(&path).unwrap();
        for (cmd, before) in shell_commands(&text) {
            judged += 1;
            let at = format!("{}: {cmd}", path.display());
            let words: Vec<&str> = cmd.split_whitespace().collect();
            for risky in RISKY_WORDS {
                assert!(!words.contains(risky), "{at}: shows `{risky}` in a command");
            }
            assert!(!cmd.contains("state rm") && !cmd.contains("state mv"), "{at}");
            assert!(!placeholder(&cmd), "{at}: an <angle> placeholder parses as redirection");
            let c = classify(&cmd, &cwd, &env);
            if c.tier == Tier::Destroy {
                let saved = c
                    .terraform
                    .as_ref()
                    .is_some_and(|t| t.plan_file.is_some() && !t.destroy && t.unknown.is_empty());
                assert!(saved, "{at}: destroy tier ({:?}), not a saved plan", c.reasons);
            }
            if c.tier >= Tier::Mutate && !c.file_only {
                assert!(
                    before.to_lowercase().contains("ask"),
                    "{at}: {} tier ({:?}) but the text before it does not say to ask:\n{before}",
                    c.tier.id(),
                    c.reasons
                );
            }
            if let Some(why) = &c.secret {
                assert!(cmd.contains(" | "), "{at}: prints secrets unfiltered ({why})");
            }
        }
    }
    assert!(judged >= 30, "only {judged} commands found: is the block parser broken?");
}

/// Whether a command holds a `<word>` placeholder.
fn placeholder(cmd: &str) -> bool {
    cmd.split('<').skip(1).any(|rest| {
        rest.split_once('>').is_some_and(|(inside, _)| {
            !inside.is_empty()
                && inside.chars().all(|c| c.is_ascii_alphanumeric() || "-_ ".contains(c))
        })
    })
}

#[test]
fn skills_link_only_files_they_ship_and_ship_only_files_they_name() {
    for skill in skills() {
        let text = std::fs::read_to_string(skill.dir.join("SKILL.md")).unwrap();
        let mut named = BTreeSet::new();
        for prefix in ["references/", "scripts/"] {
            for (i, _) in text.match_indices(prefix) {
                let path: String = text[i..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || "-_./".contains(*c))
                    .collect();
                let path = path.trim_end_matches('.');
                assert!(
                    skill.dir.join(path).exists(),
                    "{}: links {path}, which it does not ship",
                    skill.name
                );
                named.insert(path.trim_end_matches('/').to_string());
            }
        }
        for file in files(&skill.dir) {
            let rel = file.strip_prefix(&skill.dir).unwrap().to_string_lossy().into_owned();
            if rel == "SKILL.md" {
                continue;
            }
            assert!(
                named.iter().any(|n| rel == *n || rel.starts_with(&format!("{n}/"))),
                "{}: ships {rel} but SKILL.md never points to it",
                skill.name
            );
        }
    }
}
