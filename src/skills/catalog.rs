//! What the model sees of skills, pure: precedence (a later skill of a name replaces an
//! earlier one), the catalog of names and descriptions in the system prompt (bounded to a
//! share of the context window, the rest named as omitted), and the `<skill_content>`
//! wrapper of a loaded skill, which compaction finds and keeps.

use std::fmt::Write;

use super::{Origin, Skill};

/// Share of the context window (percent) the catalog may take.
pub const BUDGET_PERCENT: u64 = 2;
/// The wrapper's opening.
pub const OPEN: &str = "<skill_content name=\"";
/// The wrapper's end.
pub const CLOSE: &str = "</skill_content>";

/// The skills in force: of several with one name, the last found (bundled < user <
/// project, outermost directory first). Project skills first, then the user's, then
/// bundled ones, each by name.
pub fn resolve(found: Vec<Skill>) -> Vec<Skill> {
    let mut out: Vec<Skill> = Vec::new();
    for skill in found {
        out.retain(|s| s.meta.name != skill.meta.name);
        out.push(skill);
    }
    let rank = |o: &Origin| match o {
        Origin::Project => 0,
        Origin::User => 1,
        Origin::Bundled => 2,
    };
    out.sort_by(|a, b| (rank(&a.origin), &a.meta.name).cmp(&(rank(&b.origin), &b.meta.name)));
    out
}

/// The catalog's size limit in characters for a context window of `tokens` (four
/// characters a token).
pub fn budget(context_window: u64) -> usize {
    (context_window * BUDGET_PERCENT / 100 * 4) as usize
}

/// The system prompt's skills section, at most `budget` characters (empty without skills).
pub fn render(skills: &[Skill], budget: usize) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n# Skills\nSkills are instructions for particular tasks. When a task matches a \
         skill's description, load the skill with the skill tool before you start, and follow \
         it. Its folder is then readable with read_file; run its scripts with bash.\n",
    );
    let entries: Vec<String> = skills
        .iter()
        .map(|s| format!("- {}: {}\n", s.meta.name, one_line(&s.meta.description)))
        .collect();
    let mut listed = 0;
    for (i, entry) in entries.iter().enumerate() {
        // Listed only while every skill after it can still be named.
        let rest = omitted(&skills[i + 1..], usize::MAX);
        if out.len() + entry.len() + rest.len() > budget {
            break;
        }
        out.push_str(entry);
        listed += 1;
    }
    let rest = omitted(&skills[listed..], budget.saturating_sub(out.len()));
    out.push_str(&rest);
    if out.len() > budget {
        // Not even the header fits: the names alone, as many as fit, or nothing.
        out = omitted(skills, budget);
        if out.len() > budget {
            out.clear();
        }
    }
    out
}

/// The line that names skills left out for room (as many names as fit in `room`, then a
/// count).
fn omitted(skills: &[Skill], room: usize) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let head = format!("Not listed for room ({} skills; load them by name):", skills.len());
    let mut out = head;
    for (i, skill) in skills.iter().enumerate() {
        let more = format!(" … and {} more\n", skills.len() - i);
        if out.len() + skill.meta.name.len() + 2 + more.len() > room {
            out.push_str(&more);
            return out;
        }
        out.push(' ');
        out.push_str(&skill.meta.name);
        if i + 1 < skills.len() {
            out.push(',');
        }
    }
    out.push('\n');
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A loaded skill for the model: its body (with `$ARGUMENTS` replaced, or the arguments
/// after it) and its files, wrapped with its name and folder.
pub fn wrap(skill: &Skill, dir: Option<&str>, arguments: Option<&str>) -> String {
    let name = attribute(&skill.meta.name);
    let mut out = match dir {
        Some(dir) => format!("{OPEN}{name}\" dir=\"{}\">\n", attribute(dir)),
        None => format!("{OPEN}{name}\">\n"),
    };
    let arguments = arguments.map(str::trim).filter(|a| !a.is_empty());
    let body = skill.meta.body.trim_end();
    match arguments {
        Some(args) if body.contains("$ARGUMENTS") => {
            out.push_str(&body.replace("$ARGUMENTS", args))
        }
        _ => out.push_str(body),
    }
    out.push('\n');
    if let Some(args) = arguments.filter(|_| !body.contains("$ARGUMENTS")) {
        let _ = writeln!(out, "\nArguments: {args}");
    }
    if !skill.files.is_empty() {
        let place = if dir.is_some() {
            "in its folder; read them with read_file (paths relative to dir), run scripts/ with bash"
        } else {
            "(not unpacked: not readable now)"
        };
        let _ = writeln!(out, "\nFiles of this skill {place}:");
        for file in &skill.files {
            let _ = writeln!(out, "- {file}");
        }
    }
    out.push_str(CLOSE);
    out
}

/// Quotes and angle brackets out of an attribute value.
fn attribute(text: &str) -> String {
    text.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The `<skill_content>` blocks in `texts` (oldest first), the last of each name once, in
/// the order they were last loaded: what compaction keeps after its summary.
pub fn kept<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for text in texts {
        let mut rest = text;
        while let Some(start) = rest.find(OPEN) {
            let Some(len) = rest[start..].find(CLOSE) else { break };
            let block = &rest[start..start + len + CLOSE.len()];
            let name = block[OPEN.len()..].split('"').next().unwrap_or("").to_string();
            out.retain(|(n, _)| *n != name);
            out.push((name, block.to_string()));
            rest = &rest[start + len + CLOSE.len()..];
        }
    }
    out.into_iter().map(|(_, block)| block).collect()
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
