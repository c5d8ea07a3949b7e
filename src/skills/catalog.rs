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
mod tests {
    //! Precedence, the catalog's budget, the wrapper and what compaction keeps.

    use super::*;
    use crate::skills::front::SkillMeta;

    fn skill(name: &str, description: &str, origin: Origin) -> Skill {
        let meta = SkillMeta {
            name: name.to_string(),
            description: description.to_string(),
            license: None,
            compatibility: None,
            metadata: Default::default(),
            allowed_tools: Vec::new(),
            body: format!("Body of {name}. Use $ARGUMENTS.\n"),
        };
        Skill { meta, origin, dir: None, files: vec!["references/a.md".to_string()] }
    }

    #[test]
    fn the_last_of_a_name_wins() {
        let found = vec![
            skill("tf", "bundled", Origin::Bundled),
            skill("k8s", "bundled", Origin::Bundled),
            skill("tf", "user", Origin::User),
            skill("tf", "project", Origin::Project),
            skill("a", "user", Origin::User),
        ];
        let resolved = resolve(found);
        let seen: Vec<(&str, &str)> =
            resolved.iter().map(|s| (s.meta.name.as_str(), s.meta.description.as_str())).collect();
        assert_eq!(seen, [("tf", "project"), ("a", "user"), ("k8s", "bundled")]);
    }

    #[test]
    fn an_unapproved_project_skill_hides_nothing() {
        let found = vec![
            skill("tf", "bundled", Origin::Bundled),
            skill("tf", "project", Origin::Project),
            skill("own", "project", Origin::Project),
        ];
        let names = |skills: Vec<Skill>| -> Vec<(String, String)> {
            skills.into_iter().map(|s| (s.meta.name, s.meta.description)).collect()
        };
        let before = names(crate::skills::approval::usable(found.clone(), false));
        assert_eq!(before, [("tf".to_string(), "bundled".to_string())], "the bundled one stays");
        let after = names(crate::skills::approval::usable(found, true));
        assert_eq!(after[0], ("own".to_string(), "project".to_string()));
        assert_eq!(after[1], ("tf".to_string(), "project".to_string()), "approved, it wins");
    }

    #[test]
    fn the_catalog_keeps_to_its_budget_and_names_the_rest() {
        assert_eq!(budget(200_000), 16_000);
        assert_eq!(budget(8_000), 640);
        // (skills, description length, budget, listed, omitted)
        let rows: &[(usize, usize, usize, usize, bool)] = &[
            (3, 50, 16_000, 3, false),
            (50, 100, 16_000, 50, false),
            // header ~220 + n × 114 + the other names (~50 + 11 each) ≤ 2000: n = 11
            (50, 100, 2_000, 11, true),
            // the header and every name alone are past 640: names only, cut with a count
            (50, 100, 640, 0, true),
            (200, 1024, 16_000, 13, true),
            // not even a line fits: nothing
            (5, 50, 60, 0, false),
        ];
        for &(count, len, budget, listed, omits) in rows {
            let skills: Vec<Skill> = (0..count)
                .map(|i| skill(&format!("skill-{i:03}"), &"d".repeat(len), Origin::User))
                .collect();
            let text = render(&skills, budget);
            assert!(text.len() <= budget, "{count}×{len} in {budget}: {} chars", text.len());
            let shown = text.lines().filter(|l| l.starts_with("- skill-")).count();
            assert_eq!(shown, listed, "{count}×{len} in {budget}:\n{text}");
            assert_eq!(text.contains("Not listed for room"), omits, "{text}");
            if omits && budget > 200 {
                // The first omitted skill is named.
                assert!(text.contains(&format!(" skill-{listed:03}")), "{text}");
            }
        }
        assert_eq!(render(&[], 100), "");
    }

    #[test]
    fn the_wrapper_carries_body_arguments_and_files_and_is_found_again() {
        let s = skill("tf", "d", Origin::User);
        let wrapped = wrap(&s, Some("/skills/tf \"x\""), Some("envs/prod"));
        assert!(
            wrapped.starts_with("<skill_content name=\"tf\" dir=\"/skills/tf &quot;x&quot;\">\n")
        );
        assert!(wrapped.contains("Body of tf. Use envs/prod."), "{wrapped}");
        assert!(!wrapped.contains("Arguments:"), "{wrapped}");
        assert!(wrapped.contains("- references/a.md") && wrapped.ends_with(CLOSE));
        let mut plain = skill("k8s", "d", Origin::User);
        plain.meta.body = "Check probes.".to_string();
        let k8s = wrap(&plain, None, Some("deploy.yaml"));
        assert!(k8s.contains("Check probes.\n\nArguments: deploy.yaml"), "{k8s}");
        let older = wrap(&s, Some("/old"), None);
        let texts =
            [format!("before {older} after"), format!("{k8s}\n{wrapped}"), "none".to_string()];
        let kept = kept(texts.iter().map(String::as_str));
        assert_eq!(kept, [k8s, wrapped], "the last of each name, in load order");
    }
}
