//! The user's approval of a project's skills, kept like a project `.mcp.json`'s
//! (`config::approval`, in `<config dir>/skill-approvals.json`): per cwd, the list of the
//! project skills (name and folder) and the SHA-256 of each of their files (SKILL.md,
//! scripts, references, everything listed). A new, removed or changed file needs approving
//! again; until then the project's skills are not in the catalog, not loadable and not
//! commands.

use std::path::{Path, PathBuf};

use super::{Origin, Skill};
use crate::config::approval::{self, Approvals, Fingerprint, Runs, Standing};

/// Where approvals of project skills are kept.
pub const SKILLS: Approvals = Approvals::new("skill-approvals.json");

/// Files larger than this are known by size and time instead of their bytes.
const MAX_HASHED: u64 = 16 << 20;

/// What an approval of a cwd's project skills covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// The session's cwd (approvals are per cwd).
    pub key: PathBuf,
    /// One line per skill: its name and folder.
    pub text: String,
    /// Every file's fingerprint.
    pub runs: Runs,
}

impl Pending {
    /// What approving the project skills among `skills` in `cwd` covers; `None` when
    /// there are none.
    pub fn of(cwd: &Path, skills: &[Skill]) -> Option<Pending> {
        let project: Vec<&Skill> = skills.iter().filter(|s| s.origin == Origin::Project).collect();
        if project.is_empty() {
            return None;
        }
        let mut text = String::new();
        let mut runs = Runs::new();
        for skill in project {
            let Some(dir) = &skill.dir else { continue };
            text.push_str(&format!("{}\t{}\n", skill.meta.name, dir.display()));
            for rel in std::iter::once("SKILL.md").chain(skill.files.iter().map(String::as_str)) {
                let path = dir.join(rel);
                runs.insert(path.display().to_string(), fingerprint(&path));
            }
        }
        Some(Pending { key: cwd.to_path_buf(), text, runs })
    }

    /// How its approval stands.
    pub fn standing(&self, config_dir: &Path) -> Standing {
        SKILLS.standing(config_dir, &self.key, &self.text, &self.runs)
    }

    /// Remembers it as approved.
    pub fn approve(&self, config_dir: &Path) -> std::io::Result<()> {
        SKILLS.approve_running(config_dir, &self.key, &self.text, &self.runs)
    }
}

/// A file's fingerprint: its SHA-256, or for a very large one its size and times.
fn fingerprint(path: &Path) -> Fingerprint {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.len() > MAX_HASHED => approval::large(&meta),
        _ => approval::fingerprint(path),
    }
}

/// The skills usable now, resolved by precedence from `all` (every skill found, in
/// discovery order): all but the project's unless `approved`, so that an unapproved
/// project skill never hides a bundled or user skill of its name.
pub fn usable(all: Vec<Skill>, approved: bool) -> Vec<Skill> {
    let kept = all.into_iter().filter(|s| approved || s.origin != Origin::Project).collect();
    super::catalog::resolve(kept)
}
