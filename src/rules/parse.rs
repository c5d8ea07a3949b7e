//! Reading one rule as a team writes it (`bash(git *)`, Claude Code's `Bash(npm run
//! test:*)`, `mcp__srv__*`) and splitting a comma-separated list of them. Every error
//! names the rule and says what to write instead.

use super::pattern::{CommandPattern, Domain, PathPattern};
use super::{Rule, Source, Spec, Verdict};

/// Our built-in tools, which a rule may name.
pub const BUILTIN_TOOLS: &[&str] = &[
    "read_file",
    "list_files",
    "glob",
    "grep",
    "write_file",
    "edit_file",
    "bash",
    "web_fetch",
    "agent",
    "update_plan",
    "read_memory",
    "write_memory",
    "skill",
    "ask_user",
    "exit_plan_mode",
];

/// Claude Code's names for our tools.
const CLAUDE_NAMES: &[(&str, &str)] = &[
    ("Bash", "bash"),
    ("Read", "read_file"),
    ("Write", "write_file"),
    ("Edit", "edit_file"),
    ("MultiEdit", "edit_file"),
    ("Task", "agent"),
    ("TodoWrite", "update_plan"),
    ("WebFetch", "web_fetch"),
    ("Glob", "glob"),
    ("Grep", "grep"),
    ("LS", "list_files"),
];

/// The tools whose calls have paths a glob can match.
const PATH_TOOLS: &[&str] = &["read_file", "list_files", "glob", "grep", "write_file", "edit_file"];

/// What the parentheses of a tool hold.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Takes {
    Command,
    Path,
    Domain,
    Nothing,
}

impl Rule {
    /// Reads `text` (`bash(terraform plan*)`, `write_file(*.tf)`,
    /// `web_fetch(domain:example.com)`, `mcp__srv__*`, `read_file`) as a rule with
    /// `verdict` from `source`, or says what is wrong with it.
    pub fn parse(text: &str, verdict: Verdict, source: Source) -> Result<Rule, String> {
        let text = text.trim();
        let fail = |why: String| Err(format!("rule '{text}': {why}"));
        if text.is_empty() {
            return Err("an empty rule: write a tool name such as read_file, or a pattern such \
                        as bash(make test)"
                .to_string());
        }
        let (name, inner) = match text.find('(') {
            None if text.contains(')') => {
                return fail("a ')' without its '(': write tool(pattern)".to_string());
            }
            None => (text, None),
            Some(open) => {
                let Some(inner) = text[open + 1..].strip_suffix(')') else {
                    return fail(if text[open..].contains(')') {
                        "text after the closing parenthesis: write tool(pattern)".to_string()
                    } else {
                        "unbalanced parentheses: a '(' without its ')'".to_string()
                    });
                };
                if !balanced(inner) {
                    return fail("unbalanced parentheses in the pattern".to_string());
                }
                (text[..open].trim_end(), Some(inner))
            }
        };
        let (tool, takes) = match tool_name(name) {
            Ok(found) => found,
            Err(why) => return fail(why),
        };
        let spec = match (inner, takes) {
            (None, _) => None,
            (Some(inner), _) if inner.trim().is_empty() => {
                return fail(format!(
                    "empty parentheses: write {name} alone to match every call, or a pattern \
                     inside them"
                ));
            }
            (Some(_), Takes::Nothing) => {
                return fail(format!(
                    "{tool} takes no pattern: write {name} alone to match every call"
                ));
            }
            (Some(inner), Takes::Command) => {
                let body = inner.trim().strip_suffix(":*").unwrap_or(inner).trim();
                if body.is_empty() {
                    return fail("nothing before ':*': write bash(PREFIX:*)".to_string());
                }
                Some(Spec::Command(CommandPattern::new(inner)))
            }
            (Some(inner), Takes::Path) => match PathPattern::new(inner) {
                Ok(pattern) => Some(Spec::Path(pattern)),
                Err(why) => return fail(why),
            },
            (Some(inner), Takes::Domain) => match Domain::new(inner) {
                Ok(domain) => Some(Spec::Domain(domain)),
                Err(why) => return fail(why),
            },
        };
        Ok(Rule { verdict, tool, spec, text: text.to_string(), source })
    }
}

/// Our name for the tool `name` (ours, Claude Code's, or an MCP name or glob) and what
/// its parentheses hold.
fn tool_name(name: &str) -> Result<(String, Takes), String> {
    let ours = CLAUDE_NAMES.iter().find(|(claude, _)| *claude == name).map(|(_, ours)| *ours);
    if let Some(tool) = ours.or_else(|| BUILTIN_TOOLS.iter().copied().find(|t| *t == name)) {
        let takes = match tool {
            "bash" => Takes::Command,
            "web_fetch" => Takes::Domain,
            _ if PATH_TOOLS.contains(&tool) => Takes::Path,
            _ => Takes::Nothing,
        };
        return Ok((tool.to_string(), takes));
    }
    if let Some(rest) = name.strip_prefix("mcp__") {
        let valid = |c: char| c.is_ascii_alphanumeric() || "_-.*".contains(c);
        if rest.is_empty() || !rest.chars().all(valid) {
            return Err(format!(
                "'{name}' is not an MCP tool name: write mcp__<server>__<tool> or \
                 mcp__<server>__*"
            ));
        }
        // Claude Code's `mcp__server` stands for every tool of the server.
        let tool = if rest.contains("__") || rest.contains('*') {
            name.to_string()
        } else {
            format!("{name}__*")
        };
        return Ok((tool, Takes::Nothing));
    }
    let claude: Vec<&str> = CLAUDE_NAMES.iter().map(|(c, _)| *c).collect();
    Err(format!(
        "unknown tool '{name}': expected one of {}, Claude Code's {}, or mcp__<server>__<tool>",
        BUILTIN_TOOLS.join(", "),
        claude.join(", ")
    ))
}

/// Whether every `(` in `text` has its `)` after it, and no `)` comes first.
fn balanced(text: &str) -> bool {
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            _ => {}
        }
    }
    depth == 0
}

/// The rules of a comma-separated list (`bash(git *),write_file`): split on the commas
/// outside parentheses, each trimmed, empty ones left out.
pub fn split_list(text: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(text[start..].trim());
    out.retain(|rule| !rule.is_empty());
    out
}
