//! `MEMORY.md`, the index of a project's memory: one line per topic
//! (`- [name](name.md) (type): description`), and the part of it the system prompt carries
//! (the first 200 lines and 25 KiB, then a line saying what was left out). Pure.

use std::fmt::Write;

/// The index's first line.
pub const HEADER: &str = "# Memory";

/// Lines of the index the system prompt carries at most.
pub const PROMPT_LINES: usize = 200;

/// Bytes of the index the system prompt carries at most.
pub const PROMPT_BYTES: usize = 25 << 10;

/// Characters of a description kept in the index.
pub const MAX_DESCRIPTION: usize = 200;

/// What a topic is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Who the user is: role, preferences, how they like to work.
    User,
    /// Durable facts about the project: layout, environments, conventions, decisions.
    Project,
    /// What the user corrected or confirmed about the agent's work.
    Feedback,
    /// Where things live outside the project: dashboards, runbooks, tickets.
    Reference,
}

impl Kind {
    /// Every kind, in the order the tool's schema lists them.
    pub const ALL: [Kind; 4] = [Kind::User, Kind::Project, Kind::Feedback, Kind::Reference];

    /// The kind's name, as written in a topic's front matter and the index.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::User => "user",
            Kind::Project => "project",
            Kind::Feedback => "feedback",
            Kind::Reference => "reference",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == name.trim())
    }
}

/// A description as the index holds it: one line of printable characters, trimmed, at most
/// `MAX_DESCRIPTION` characters.
pub fn one_line(description: &str) -> String {
    let flat: String =
        description.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>();
    let words: Vec<&str> = flat.split_whitespace().collect();
    crate::text::clip(&words.join(" "), MAX_DESCRIPTION)
}

/// The index line of a topic.
pub fn line(name: &str, kind: Kind, description: &str) -> String {
    format!("- [{name}]({name}.md) ({}): {}", kind.as_str(), one_line(description))
}

/// The index with the topic `name`'s line set to `line`: an existing line for the topic is
/// replaced in place, else the line is added at the end. Other lines are kept as they are.
pub fn upsert(index: &str, name: &str, line: &str) -> String {
    let prefix = format!("- [{name}]({name}.md)");
    let mut out = String::with_capacity(index.len() + line.len() + HEADER.len() + 2);
    let mut found = false;
    for existing in index.lines() {
        if existing.starts_with(&prefix) {
            if !found {
                out.push_str(line);
                out.push('\n');
            }
            found = true;
        } else {
            out.push_str(existing);
            out.push('\n');
        }
    }
    if out.trim().is_empty() {
        out = format!("{HEADER}\n\n");
    }
    if !found {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The part of the index the system prompt carries: at most `PROMPT_LINES` lines and
/// `PROMPT_BYTES` bytes (whole lines), then a line saying how much was left out.
pub fn for_prompt(index: &str) -> String {
    let total = index.lines().count();
    let mut out = String::new();
    let mut kept = 0;
    for line in index.lines() {
        if kept == PROMPT_LINES || out.len() + line.len() + 1 > PROMPT_BYTES {
            break;
        }
        out.push_str(line);
        out.push('\n');
        kept += 1;
    }
    if kept < total {
        let _ = writeln!(
            out,
            "[{} more line(s) of MEMORY.md left out (the prompt carries {PROMPT_LINES} lines \
             or {} KiB at most); read_memory with no name shows the whole index]",
            total - kept,
            PROMPT_BYTES >> 10
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_replaces_its_line_and_keeps_the_others() {
        let one = line("vpc", Kind::Project, "the VPC layout");
        let index = upsert("", "vpc", &one);
        assert_eq!(index, "# Memory\n\n- [vpc](vpc.md) (project): the VPC layout\n");
        let two = line("style", Kind::Feedback, "prefers for_each\nover count");
        let index = upsert(&index, "style", &two);
        assert!(index.ends_with("- [style](style.md) (feedback): prefers for_each over count\n"));
        let index = upsert(&index, "vpc", &line("vpc", Kind::Reference, "moved to wiki"));
        let lines: Vec<&str> = index.lines().collect();
        assert_eq!(lines[2], "- [vpc](vpc.md) (reference): moved to wiki", "{index}");
        assert_eq!(lines.len(), 4, "{index}");
        // A topic whose name starts like another's is its own line.
        let index = upsert(&index, "vpc-peering", &line("vpc-peering", Kind::Project, "p"));
        assert_eq!(index.lines().filter(|l| l.starts_with("- [vpc")).count(), 2);
    }

    #[test]
    fn descriptions_are_one_bounded_line() {
        let long = "word ".repeat(100);
        let described = one_line(&format!("a\r\n\tb\u{1b}[31m {long}"));
        assert!(described.starts_with("a b [31m word"), "{described}");
        assert_eq!(described.chars().count(), MAX_DESCRIPTION);
        assert_eq!(Kind::parse(" feedback "), Some(Kind::Feedback));
        assert_eq!(Kind::parse("secret"), None);
    }

    #[test]
    fn the_prompt_carries_at_most_200_lines() {
        let index: String = (0..250).map(|i| format!("- [t{i}](t{i}.md) (project): x\n")).collect();
        let part = for_prompt(&index);
        assert_eq!(part.lines().count(), PROMPT_LINES + 1);
        assert!(part.lines().nth(PROMPT_LINES - 1).unwrap().starts_with("- [t199]"));
        assert!(part.ends_with("whole index]\n"), "{part}");
        assert!(part.contains("[50 more line(s)"), "{part}");
        let small = "# Memory\n\n- [a](a.md) (user): b\n";
        assert_eq!(for_prompt(small), small);
    }

    #[test]
    fn the_prompt_carries_at_most_25_kib() {
        let long = "d".repeat(150);
        let index: String =
            (0..190).map(|i| format!("- [t{i:03}](t{i:03}.md) (project): {long}\n")).collect();
        let part = for_prompt(&index);
        let (kept, note) = part.rsplit_once("\n[").unwrap();
        assert!(kept.len() < PROMPT_BYTES && kept.len() > PROMPT_BYTES - 200, "{}", kept.len());
        assert!(note.contains("more line(s)"));
        assert!(kept.lines().all(|l| l.ends_with(&long)), "whole lines only");
    }
}
