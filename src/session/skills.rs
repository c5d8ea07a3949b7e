//! A session's skills: found anew for every turn (bundled, the user's, the project's), the
//! project's put to the user before they are used (like a project `.mcp.json`: approved
//! by their files' hashes, asked again when one changes, a refusal kept for the session),
//! problems logged once; the `/name` command of a skill; `/skills`; and the command list
//! the client is told about.

use serde_json::json;

use super::approve::Approval;
use super::{PromptIo, Services, Session};
use crate::agent::event::AgentEvent;
use crate::cancel::CancelToken;
use crate::config::approval::Standing;
use crate::skills::approval::{Pending, usable};
use crate::skills::{Active, Origin, Skill, bundled, discover};
use crate::sync::lock;

/// Every skill of the session's cwd (before approval), and the problems found.
fn found(session: &Session) -> crate::skills::Found {
    crate::skills::find(discover::home().as_deref(), &session.root)
}

/// What the project's skills' approval is now, without asking: approved, or not.
fn approved_now(services: &Services, session: &Session, skills: &[Skill]) -> bool {
    match Pending::of(&session.root, skills) {
        None => true,
        Some(pending) => pending.standing(&services.config.config_dir) == Standing::Approved,
    }
}

/// Before a turn: the skills it may use, after asking about the project's when their
/// approval does not hold (once per content in a session).
pub(super) fn before_turn(
    services: &Services,
    session: &Session,
    io: &PromptIo,
    cancel: &CancelToken,
) -> Active {
    let crate::skills::Found { skills, all, .. } = found(session);
    let cache = bundled::cache_root(discover::home().as_deref());
    let Some(pending) = Pending::of(&session.root, &skills) else {
        return Active::new(skills, cache);
    };
    let config_dir = &services.config.config_dir;
    let signature = format!("{}{:?}", pending.text, pending.runs);
    let asked = lock(&session.skills_asked).clone();
    let approved = match asked {
        Some((seen, answer)) if seen == signature => answer,
        _ => match pending.standing(config_dir) {
            Standing::Approved => true,
            standing => {
                let yes = ask(&pending, &skills, &standing, io, cancel);
                if yes && let Err(err) = pending.approve(config_dir) {
                    log::error!("cannot remember the approval of the project's skills: {err}");
                }
                *lock(&session.skills_asked) = Some((signature, yes));
                if yes {
                    // Their commands join the list the client shows.
                    let mut all = super::available(services, session);
                    for s in skills.iter().filter(|s| s.origin == Origin::Project) {
                        if !all.iter().any(|(n, _, _)| *n == s.meta.name) {
                            let description = crate::text::clip(&s.meta.description, 200);
                            let hint = Some("arguments".to_string());
                            all.push((s.meta.name.clone(), description, hint));
                        }
                    }
                    io.sink.emit(AgentEvent::Commands(all));
                }
                yes
            }
        },
    };
    Active::new(usable(all, approved), cache)
}

/// The prompt a `/name arguments` turn sends: the skill's content (the skill active), or
/// the text unchanged when it names no usable skill.
pub(super) fn expand(skills: &Active, text: String) -> String {
    let Some(rest) = text.trim_start().strip_prefix('/') else { return text };
    let (name, arguments) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    skills.command(name, arguments).unwrap_or(text)
}

/// Asks whether to use the project's skills; true if approved.
fn ask(
    pending: &Pending,
    skills: &[Skill],
    standing: &Standing,
    io: &PromptIo,
    cancel: &CancelToken,
) -> bool {
    let project: Vec<&Skill> = skills.iter().filter(|s| s.origin == Origin::Project).collect();
    let names: Vec<&str> = project.iter().map(|s| s.meta.name.as_str()).collect();
    let mut title = format!(
        "Use this project's skills ({})? They instruct the agent, and their scripts may be run.",
        names.join(", ")
    );
    if let Standing::Changed(files) = standing {
        title.push_str(&format!(" Changed since they were approved: {}.", files.join(", ")));
    }
    let listed: Vec<String> = project
        .iter()
        .map(|s| {
            format!(
                "- {} ({}): {}",
                s.meta.name,
                s.source(),
                crate::text::clip(&s.meta.description, 300)
            )
        })
        .collect();
    let input = json!({ "skills": names, "cwd": pending.key });
    let approval = Approval {
        tool: "project_skills",
        title: crate::text::Title::new(None, &title).into_string(),
        content: vec![listed.join("\n")],
        input,
        locations: Vec::new(),
        approve: "Use these skills".to_string(),
        decline: "Do not use them".to_string(),
    };
    super::approve::ask(approval, io, cancel, |approved| match approved {
        true => format!("Approved the project's skills: {}.", names.join(", ")),
        false => "Not approved: the project's skills are not used in this session.".to_string(),
    })
}

/// `/skills`: every skill with where it came from, and the problems found.
pub(super) fn listing(services: &Services, session: &Session) -> String {
    let crate::skills::Found { skills, all, reports } = found(session);
    let approved = approved_now(services, session, &skills);
    let mut text = String::from("Skills (load with the skill tool, or run as `/name`):\n");
    // The usable ones, then the project's waiting for approval.
    let mut shown = usable(all, approved);
    shown.extend(skills.into_iter().filter(|s| s.origin == Origin::Project && !approved));
    for skill in &shown {
        let pending = skill.origin == Origin::Project && !approved;
        let note = if pending { " — not approved yet: asked before the next turn" } else { "" };
        text.push_str(&format!(
            "- `/{}` ({}){note}: {}\n",
            skill.meta.name,
            skill.source(),
            crate::text::clip(&skill.meta.description, 200)
        ));
    }
    if !reports.is_empty() {
        text.push_str("\nProblems:\n");
        for report in &reports {
            text.push_str(&format!("- {report}\n"));
        }
    }
    text
}

/// The commands of the session's usable skills: name, description.
pub fn commands(services: &Services, session: &Session) -> Vec<(String, String)> {
    let found = found(session);
    let approved = approved_now(services, session, &found.skills);
    usable(found.all, approved)
        .into_iter()
        .map(|s| (s.meta.name.clone(), crate::text::clip(&s.meta.description, 200)))
        .collect()
}
