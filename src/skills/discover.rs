//! Finding skills on disk: the user's directories, then the project's from the git root
//! down to the cwd, each folder with a SKILL.md one skill. Bounded (folders per directory,
//! files listed per skill, the size of a SKILL.md), never through a symbolic link, and never
//! a failure: what cannot be read is a problem reported, and the rest goes on.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{Found, Origin, Problem, Report, Skill, bundled, front};
use crate::config::approval::read_project_file;
use crate::config::project::Project;
use crate::sync::lock;

/// Skill folders read per directory.
pub const MAX_FOLDERS: usize = 100;
/// Files listed per skill (SKILL.md aside); a project skill with more is not used, as its
/// approval could not cover them all.
pub const MAX_FILES: usize = 200;
/// Depth of the listing below a skill's folder.
const MAX_DEPTH: usize = 8;
/// Largest SKILL.md read.
pub const MAX_SKILL_MD: u64 = 256 << 10;

/// The directories searched, lowest precedence first.
pub fn roots(home: Option<&Path>, cwd: &Path) -> Vec<(Origin, PathBuf)> {
    let mut out = Vec::new();
    if let Some(home) = home {
        out.push((Origin::User, home.join(".agents/skills")));
        out.push((Origin::User, home.join(".iac-code/skills")));
    }
    for dir in Project::of(cwd).dirs {
        for sub in [".agents/skills", ".iac-code/skills", "skills"] {
            out.push((Origin::Project, dir.join(sub)));
        }
    }
    out
}

/// The user's home (`HOME`), where the user's skill directories are.
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// Every skill for a session in `cwd`: bundled, the user's, the project's.
pub fn discover(home: Option<&Path>, cwd: &Path) -> Found {
    let mut found = bundled::skills();
    for (origin, root) in roots(home, cwd) {
        read_root(&root, &origin, &mut found);
    }
    found
}

/// The skill folders of one directory.
fn read_root(root: &Path, origin: &Origin, found: &mut Found) {
    let shown = root.display().to_string();
    match std::fs::symlink_metadata(root) {
        Err(_) => return,
        Ok(meta) if meta.file_type().is_symlink() => {
            found.reports.push(warn(
                &shown,
                "a symbolic link: skill directories are never read through one",
            ));
            return;
        }
        Ok(meta) if !meta.is_dir() => return,
        Ok(_) => {}
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        found.reports.push(warn(&shown, "cannot be read"));
        return;
    };
    let entries: Vec<std::fs::DirEntry> = entries.filter_map(Result::ok).collect();
    // A linked skill folder is never followed, but said: it is a common way to install one.
    for link in entries.iter().filter(|e| e.file_type().is_ok_and(|t| t.is_symlink())) {
        if link.path().join("SKILL.md").exists() {
            let shown = link.path().display().to_string();
            found.reports.push(warn(&shown, "a symbolic link: skills are never read through one"));
        }
    }
    let mut dirs: Vec<PathBuf> = entries
        .iter()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| p.join("SKILL.md").exists() || p.join("SKILL.md").is_symlink())
        .collect();
    dirs.sort();
    if dirs.len() > MAX_FOLDERS {
        let rest = dirs.len() - MAX_FOLDERS;
        found.reports.push(warn(
            &shown,
            &format!("{rest} skill folders past the first {MAX_FOLDERS} not read"),
        ));
        dirs.truncate(MAX_FOLDERS);
    }
    for dir in dirs {
        let (skill, reports) = read_folder(&dir, origin.clone());
        found.skills.extend(skill);
        found.reports.extend(reports);
    }
}

/// One skill folder: its SKILL.md read and parsed, its files listed.
pub fn read_folder(dir: &Path, origin: Origin) -> (Option<Skill>, Vec<Report>) {
    let path = dir.join("SKILL.md");
    let shown = path.display().to_string();
    let folder = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let text = match read_project_file(&path) {
        Ok(Some(text)) if text.len() as u64 <= MAX_SKILL_MD => text,
        Ok(Some(_)) => return (None, vec![fatal(&shown, "over 256 KiB: not read")]),
        Ok(None) => return (None, vec![fatal(&shown, "no SKILL.md in the folder")]),
        Err(why) => return (None, vec![fatal(&shown, &why)]),
    };
    let (meta, problems) = front::parse(&text, &folder);
    let mut reports: Vec<Report> =
        problems.into_iter().map(|problem| Report { path: shown.clone(), problem }).collect();
    let Some(meta) = meta else { return (None, reports) };
    let (files, complete) = list_files(dir);
    if !complete {
        let why = format!(
            "more than {MAX_FILES} files (or folders deeper than {MAX_DEPTH}): not all listed"
        );
        reports.push(if origin == Origin::Project {
            fatal(
                &dir.display().to_string(),
                &format!("{why}, so its approval could not cover them"),
            )
        } else {
            warn(&dir.display().to_string(), &why)
        });
        if origin == Origin::Project {
            return (None, reports);
        }
    }
    (Some(Skill { meta, origin, dir: Some(dir.to_path_buf()), files }), reports)
}

/// The files below `dir` (SKILL.md aside), relative and sorted; symbolic links are listed
/// but never followed. `false` when the bounds cut the listing short.
pub fn list_files(dir: &Path) -> (Vec<String>, bool) {
    let mut out = Vec::new();
    let mut complete = true;
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((at, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let Ok(kind) = entry.file_type() else { continue };
            let path = entry.path();
            let Ok(rel) = path.strip_prefix(dir) else { continue };
            if kind.is_dir() {
                if depth + 1 >= MAX_DEPTH {
                    complete = false;
                } else {
                    stack.push((path.clone(), depth + 1));
                }
                continue;
            }
            if rel == Path::new("SKILL.md") {
                continue;
            }
            if out.len() >= MAX_FILES {
                complete = false;
                continue;
            }
            out.push(rel.to_string_lossy().into_owned());
        }
    }
    out.sort();
    (out, complete)
}

fn warn(path: &str, message: &str) -> Report {
    Report {
        path: path.to_string(),
        problem: Problem { fatal: false, message: message.to_string() },
    }
}

fn fatal(path: &str, message: &str) -> Report {
    Report {
        path: path.to_string(),
        problem: Problem { fatal: true, message: message.to_string() },
    }
}

/// Logs each report the first time this process meets it.
pub fn log_once(reports: &[Report]) {
    static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut seen = lock(&SEEN);
    let seen = seen.get_or_insert_default();
    for report in reports {
        let line = report.to_string();
        if seen.len() < 10_000 && seen.insert(line.clone()) {
            log::warn!("skill {line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_directories_come_later_and_links_are_not_followed() {
        let dir = std::env::temp_dir().join(format!("iac-skills-discover-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let home = dir.join("home");
        let repo = dir.join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        let write = |path: &Path, name: &str| {
            std::fs::create_dir_all(path).unwrap();
            let text =
                format!("---\nname: {name}\ndescription: from {}\n---\nbody", path.display());
            std::fs::write(path.join("SKILL.md"), text).unwrap();
        };
        write(&home.join(".agents/skills/tf"), "tf");
        write(&repo.join(".agents/skills/tf"), "tf");
        write(&repo.join("skills/nodesc"), "nodesc");
        std::fs::write(repo.join("skills/nodesc/SKILL.md"), "---\nname: nodesc\n---\n").unwrap();
        std::fs::create_dir_all(repo.join("skills/notes")).unwrap(); // no SKILL.md: not a skill
        std::fs::create_dir_all(repo.join(".iac-code")).unwrap();
        std::os::unix::fs::symlink(home.join(".agents/skills"), repo.join(".iac-code/skills"))
            .unwrap();
        write(&repo.join("skills/tf/scripts"), "inner");
        write(&dir.join("elsewhere/linked"), "linked");
        std::os::unix::fs::symlink(dir.join("elsewhere/linked"), repo.join("skills/linked"))
            .unwrap();
        let found = discover(Some(&home), &repo);
        let mine: Vec<(&str, &str)> = found
            .skills
            .iter()
            .filter(|s| s.origin != Origin::Bundled)
            .map(|s| (s.meta.name.as_str(), s.origin.label()))
            .collect();
        assert_eq!(mine, [("tf", "user"), ("tf", "project")]);
        let reports: Vec<String> = found.reports.iter().map(ToString::to_string).collect();
        assert!(
            reports.iter().any(|r| r.contains("nodesc") && r.contains("no description")),
            "{reports:?}"
        );
        assert!(reports.iter().any(|r| r.contains("symbolic link")), "{reports:?}");
        let linked = |r: &&String| r.contains("skills/linked") && r.contains("symbolic link");
        assert!(reports.iter().any(|r| linked(&r)), "a linked skill folder is said: {reports:?}");
        let (files, complete) = list_files(&repo.join("skills/tf"));
        assert!(complete);
        assert_eq!(files, ["scripts/SKILL.md"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
