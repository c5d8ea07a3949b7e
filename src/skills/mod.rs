//! Agent Skills: folders with a `SKILL.md` (YAML front matter, Markdown body, optional
//! `scripts/`, `references/`, `assets/`) that teach the agent a task. Found bundled, in
//! the user's `~/.agents/skills/` and `~/.iac-code/skills/`, and in the project's
//! `.agents/skills/`, `.iac-code/skills/` and `skills/` from the git root down to the cwd
//! (later wins on a name). The system prompt lists names and descriptions; the `skill`
//! tool (through `tools::SkillBook`, implemented by `Active`) loads a body on demand.
//!
//! `front.rs` parses (pure), `discover.rs` reads the directories (bounded, no links),
//! `catalog.rs` decides precedence and renders (pure), `bundled.rs` holds ours,
//! `approval.rs` keeps the user's approval of a project's skills, `active.rs` is one
//! turn's book, `calls.rs` what the loaded skills change for a tool call. Never imports
//! `agent`, `session` or `acp`; `tools` never imports this.

mod active;
pub mod approval;
pub mod bundled;
pub mod calls;
pub mod catalog;
pub mod discover;
pub mod front;

use std::path::{Path, PathBuf};

pub use active::Active;
pub use front::{Problem, SkillMeta};

/// Where a skill was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Compiled into the binary.
    Bundled,
    /// The user's own directories.
    User,
    /// The project's (used only once the user approved them).
    Project,
}

impl Origin {
    /// How `/skills` and `iac-code skills list` name it.
    pub fn label(&self) -> &'static str {
        match self {
            Origin::Bundled => "bundled",
            Origin::User => "user",
            Origin::Project => "project",
        }
    }
}

/// One usable skill.
#[derive(Debug, Clone)]
pub struct Skill {
    pub meta: SkillMeta,
    pub origin: Origin,
    /// Its folder (`None` for a bundled skill until it is unpacked).
    pub dir: Option<PathBuf>,
    /// Its files besides SKILL.md, relative to its folder, sorted (bounded).
    pub files: Vec<String>,
}

impl Skill {
    /// Where it came from, for people: `bundled`, or its folder.
    pub fn source(&self) -> String {
        match &self.dir {
            Some(dir) if self.origin != Origin::Bundled => {
                format!("{}: {}", self.origin.label(), dir.display())
            }
            _ => self.origin.label().to_string(),
        }
    }
}

/// Skills found (in precedence order: bundled, user, project from the root down, or
/// resolved), and the problems met.
#[derive(Debug, Default)]
pub struct Found {
    /// Resolved by precedence, the project's among them.
    pub skills: Vec<Skill>,
    /// Every skill found, in discovery order (bundled, the user's, the project's), for
    /// `approval::usable`: a project's unapproved skill must not hide another of its name.
    pub all: Vec<Skill>,
    pub reports: Vec<Report>,
}

/// A problem found in one place (a SKILL.md, a directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The file or directory it is about.
    pub path: String,
    pub problem: Problem,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.problem.fatal { "skipped" } else { "warning" };
        write!(f, "{}: {what}: {}", self.path, self.problem.message)
    }
}

/// The skills in force for a session in `cwd` (before any approval: the project's are
/// among them), resolved by precedence, and every problem found (`allowed-tools` entries
/// that are not rules among them), each logged once.
pub fn find(home: Option<&Path>, cwd: &Path) -> Found {
    let found = discover::discover(home, cwd);
    let all = found.skills.clone();
    let skills = catalog::resolve(found.skills);
    let mut reports = found.reports;
    for skill in &skills {
        let (_, problems) = front::allowed_rules(&skill.meta);
        let path = skill.source();
        reports.extend(problems.into_iter().map(|problem| Report { path: path.clone(), problem }));
    }
    discover::log_once(&reports);
    Found { skills, all, reports }
}
