//! `iac-code skills`: `list` (the skills of the current directory, where each came from,
//! whether the project's are approved, and the problems found), `show NAME` (a skill's
//! content as the model gets it), `check DIR` (a folder against the Agent Skills format:
//! exit 0 without a problem, 1 with one). Also the skills part of `doctor`.

use std::io::Write;
use std::path::Path;

use crate::cli::SkillsCommand;
use crate::config::approval::Standing;
use crate::config::{Config, ProcessEnv};
use crate::error::{Error, Result};
use crate::skills::approval::Pending;
use crate::skills::{Origin, Report, catalog, discover, front};
use crate::sys;

/// Runs the command; returns the exit code.
pub fn run(command: &SkillsCommand) -> Result<u8> {
    let mut out = sys::stdout().lock();
    let cwd = std::env::current_dir().map_err(Error::Stream)?;
    let home = discover::home();
    let result = match command {
        SkillsCommand::Check { dir } => {
            let reports = check(Path::new(dir));
            for report in &reports {
                writeln!(out, "{report}").map_err(Error::Stream)?;
            }
            if reports.is_empty() {
                writeln!(out, "{dir}: a valid skill").map_err(Error::Stream)?;
            }
            Ok(u8::from(!reports.is_empty()))
        }
        SkillsCommand::List => {
            let found = crate::skills::find(home.as_deref(), &cwd);
            let approved = approved(&cwd, &found.skills);
            for skill in &found.skills {
                let note = match (&skill.origin, approved) {
                    (Origin::Project, false) => " (not approved yet: asked at the next turn)",
                    _ => "",
                };
                let description = crate::text::one_line(&skill.meta.description, " ", 200);
                writeln!(out, "{}\t{}{note}\t{description}", skill.meta.name, skill.source())
                    .map_err(Error::Stream)?;
            }
            for report in &found.reports {
                writeln!(out, "problem: {report}").map_err(Error::Stream)?;
            }
            Ok(0)
        }
        SkillsCommand::Show { name } => {
            let found = crate::skills::find(home.as_deref(), &cwd);
            let Some(skill) = found.skills.iter().find(|s| s.meta.name == *name) else {
                let names: Vec<&str> = found.skills.iter().map(|s| s.meta.name.as_str()).collect();
                writeln!(out, "no skill named '{name}'; skills: {}", names.join(", "))
                    .map_err(Error::Stream)?;
                return Ok(1);
            };
            let dir = skill.dir.as_ref().map(|d| d.display().to_string());
            writeln!(out, "{}", catalog::wrap(skill, dir.as_deref(), None))
                .map_err(Error::Stream)?;
            Ok(0)
        }
    };
    match result {
        Err(Error::Stream(err)) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        other => other,
    }
}

/// The skills in force in `cwd` for `config show`: name, where it came from, and whether
/// it is used (a project's only once approved).
pub fn in_force(cwd: &Path, config_dir: &Path) -> Vec<(String, String, bool)> {
    let found = crate::skills::find(discover::home().as_deref(), cwd);
    let standing = Pending::of(cwd, &found.skills).map(|p| p.standing(config_dir));
    let approved = standing.is_none_or(|s| s == Standing::Approved);
    let used = |s: &crate::skills::Skill| s.origin != Origin::Project || approved;
    found.skills.iter().map(|s| (s.meta.name.clone(), s.source(), used(s))).collect()
}

/// Every problem of the skill folder `dir`.
pub fn check(dir: &Path) -> Vec<Report> {
    // `.` or `skills/x/..` name their folder only once made real.
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let dir = real.as_path();
    let (skill, mut reports) = discover::read_folder(dir, Origin::User);
    if let Some(skill) = skill {
        let (_, problems) = front::allowed_rules(&skill.meta);
        let path = dir.join("SKILL.md").display().to_string();
        reports.extend(problems.into_iter().map(|problem| Report { path: path.clone(), problem }));
    }
    reports
}

/// Whether the project skills among `skills` are approved for `cwd` (true without any).
fn approved(cwd: &Path, skills: &[crate::skills::Skill]) -> bool {
    let Some(pending) = Pending::of(cwd, skills) else { return true };
    match Config::from_env(&ProcessEnv) {
        Ok(config) => pending.standing(&config.config_dir) == Standing::Approved,
        Err(_) => false,
    }
}

/// `doctor`'s lines about skills: a summary, then each problem (warnings: a broken skill
/// is skipped, never fatal).
pub fn doctor_lines(config_dir: &Path) -> Vec<(bool, String)> {
    let Ok(cwd) = std::env::current_dir() else { return Vec::new() };
    let found = crate::skills::find(discover::home().as_deref(), &cwd);
    let count = |o: Origin| found.skills.iter().filter(|s| s.origin == o).count();
    let project = count(Origin::Project);
    let standing = Pending::of(&cwd, &found.skills).map(|p| p.standing(config_dir));
    let approval = match standing {
        None => String::new(),
        Some(Standing::Approved) => " (approved)".to_string(),
        Some(_) => " (not approved: asked at the next turn)".to_string(),
    };
    let mut lines = vec![(
        false,
        format!(
            "skills: {} bundled, {} of the user, {project} of the project{approval}",
            count(Origin::Bundled),
            count(Origin::User)
        ),
    )];
    lines.extend(found.reports.iter().map(|r| (true, format!("skill {r}"))));
    lines
}
