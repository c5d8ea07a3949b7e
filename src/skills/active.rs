//! One turn's skills (`tools::SkillBook`): the skills usable in it, the ones loaded so far
//! (by the `skill` tool or a `/name` command), their folders (readable without asking),
//! and what their `allowed-tools` allow. A skill is active from its load to the end of the
//! turn.

use std::path::PathBuf;
use std::sync::Mutex;

use super::{Skill, bundled, catalog, front};
use crate::rules::{RuleSet, Subject, Verdict};
use crate::sync::lock;
use crate::tools::SkillBook;

/// The skills of one turn.
pub struct Active {
    skills: Vec<Skill>,
    /// Where bundled skills are unpacked when loaded.
    cache: Option<PathBuf>,
    loaded: Mutex<Vec<Loaded>>,
}

struct Loaded {
    name: String,
    dir: Option<PathBuf>,
    /// What its `allowed-tools` allow (`None`: it narrows nothing).
    allowed: Option<RuleSet>,
    /// Its `allowed-tools` as written, for the refusal.
    written: String,
}

impl Active {
    /// A turn that may load `skills` (already resolved and approved).
    pub fn new(skills: Vec<Skill>, cache: Option<PathBuf>) -> Active {
        Active { skills, cache, loaded: Mutex::new(Vec::new()) }
    }

    /// The skills usable in this turn.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The prompt of `/name arguments` (the skill loaded and active), or `None` when no
    /// usable skill has that name.
    pub fn command(&self, name: &str, arguments: &str) -> Option<String> {
        self.skills
            .iter()
            .any(|s| s.meta.name == name)
            .then(|| self.load(name, Some(arguments)).ok())?
    }

    fn unpacked(&self, skill: &Skill) -> Option<PathBuf> {
        if let Some(dir) = &skill.dir {
            return Some(dir.clone());
        }
        let root = self.cache.as_ref()?;
        bundled::unpack(&skill.meta.name, root)
            .map_err(|why| log::warn!("{why}; its files are listed but not readable"))
            .ok()
    }
}

impl SkillBook for Active {
    fn load(&self, name: &str, arguments: Option<&str>) -> Result<String, String> {
        let Some(skill) = self.skills.iter().find(|s| s.meta.name == name) else {
            let names: Vec<&str> = self.skills.iter().map(|s| s.meta.name.as_str()).collect();
            let there = if names.is_empty() { "none".to_string() } else { names.join(", ") };
            return Err(format!("No skill named '{name}'. Skills: {there}."));
        };
        if lock(&self.loaded).iter().any(|l| l.name == name) {
            return Ok(format!(
                "The skill '{name}' is already loaded in this turn: follow its instructions above."
            ));
        }
        let dir = self.unpacked(skill);
        let shown = dir.as_ref().map(|d| d.display().to_string());
        let text = catalog::wrap(skill, shown.as_deref(), arguments);
        let (allowed, _) = front::allowed_rules(&skill.meta);
        let written = skill.meta.allowed_tools.join(" ");
        lock(&self.loaded).push(Loaded { name: name.to_string(), dir, allowed, written });
        Ok(text)
    }

    fn readable(&self) -> Vec<PathBuf> {
        lock(&self.loaded).iter().filter_map(|l| l.dir.clone()).collect()
    }

    fn refuses(&self, subject: &Subject) -> Option<String> {
        // Loading another skill, the plan tools and a question touch nothing.
        if ["skill", "update_plan", "exit_plan_mode", "ask_user"].contains(&subject.tool) {
            return None;
        }
        let loaded = lock(&self.loaded);
        let narrowing = loaded.iter().filter_map(|l| l.allowed.as_ref().map(|rules| (l, rules)));
        for (skill, rules) in narrowing {
            if !matches!(rules.verdict(subject), Some((Verdict::Allow, _))) {
                return Some(format!(
                    "Refused: the skill '{}' is active and its allowed-tools ({}) do not cover \
                     this call. Use only those tools while following it.",
                    skill.name, skill.written
                ));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::{Origin, SkillMeta};

    fn skill(name: &str, allowed: &[&str]) -> Skill {
        let meta = SkillMeta {
            name: name.to_string(),
            description: "d".to_string(),
            license: None,
            compatibility: None,
            metadata: Default::default(),
            allowed_tools: allowed.iter().map(|s| s.to_string()).collect(),
            body: format!("Steps of {name}."),
        };
        Skill {
            meta,
            origin: Origin::User,
            dir: Some(PathBuf::from(format!("/s/{name}"))),
            files: Vec::new(),
        }
    }

    #[test]
    fn loads_once_and_narrows_while_active() {
        let book = Active::new(
            vec![skill("git-only", &["Bash(git:*)", "Read"]), skill("free", &[])],
            None,
        );
        let bash = |line: &str| vec![line.to_string()];
        let subject = |tool: &'static str, commands: &'static [String]| Subject {
            tool,
            commands,
            ..Subject::default()
        };
        let ls = Box::leak(bash("ls -la").into_boxed_slice());
        let git = Box::leak(bash("git status").into_boxed_slice());
        assert_eq!(book.refuses(&subject("bash", ls)), None, "nothing loaded: nothing narrowed");
        book.load("free", None).unwrap();
        assert_eq!(
            book.refuses(&subject("bash", ls)),
            None,
            "a skill without allowed-tools narrows nothing"
        );
        let text = book.load("git-only", Some("now")).unwrap();
        assert!(
            text.contains("Steps of git-only.") && text.contains("dir=\"/s/git-only\""),
            "{text}"
        );
        assert!(book.load("git-only", None).unwrap().contains("already loaded"));
        let why = book.refuses(&subject("bash", ls)).unwrap();
        assert!(why.contains("'git-only'") && why.contains("Bash(git:*) Read"), "{why}");
        assert_eq!(book.refuses(&subject("bash", git)), None);
        assert_eq!(book.refuses(&subject("read_file", &[])), None);
        assert!(book.refuses(&subject("write_file", &[])).is_some());
        assert_eq!(book.refuses(&subject("skill", &[])), None);
        assert_eq!(book.refuses(&subject("update_plan", &[])), None);
        assert!(book.refuses(&subject("web_fetch", &[])).is_some());
        assert_eq!(book.readable(), [PathBuf::from("/s/free"), PathBuf::from("/s/git-only")]);
        assert!(book.load("nope", None).unwrap_err().contains("Skills: git-only, free"));
        assert!(book.command("nope", "x").is_none());
    }
}
