//! What the skills loaded in a turn change for a call (through `tools::SkillBook`): a
//! read of a loaded skill's own folder needs no question although it lies outside the cwd
//! (never a sensitive file, never a write), and while a skill with `allowed-tools` is
//! active a call those entries do not cover is refused before the gate. Nothing here
//! widens the gate: a covered call still goes through all of it.

use std::path::PathBuf;

use crate::rules::Subject;
use crate::tools::{Access, Invocation, SkillBook, Tool, paths};

/// The real folders of the skills loaded so far.
fn roots(book: &dyn SkillBook) -> Vec<PathBuf> {
    book.readable().iter().map(|dir| paths::real(dir).unwrap_or_else(|| dir.clone())).collect()
}

/// Whether the call only reads inside loaded skills' folders, touching nothing sensitive
/// there. What is sensitive is judged on the part of the path below the skill's folder
/// (and the file's first bytes): a skill kept under `.iac-code/skills/` or the
/// configuration directory is not a credential store, while a `.env` or a key inside it is.
fn reads_own_folder(tool: &dyn Tool, invocation: &Invocation, roots: &[PathBuf]) -> bool {
    tool.access() == Access::Read
        && !roots.is_empty()
        && !invocation.targets.is_empty()
        && invocation.targets.iter().all(|t| {
            t.real.as_deref().is_some_and(|real| {
                roots.iter().any(|root| {
                    real.strip_prefix(root).is_ok_and(|below| {
                        let top = std::path::Path::new("/");
                        paths::sensitive(&top.join(below), top, std::path::Path::new("")).is_none()
                            && paths::sensitive_content(real).is_none()
                    })
                })
            })
        })
}

/// A read of a loaded skill's folder is no reach outside the project, and nothing there
/// is sensitive for being below `.iac-code/` or the configuration directory.
pub fn reach(book: &dyn SkillBook, tool: &dyn Tool, invocation: &mut Invocation) {
    if reads_own_folder(tool, invocation, &roots(book)) {
        invocation.outside_cwd = false;
        invocation.sensitive = None;
        for target in &mut invocation.targets {
            target.sensitive = None;
        }
    }
}

/// Why the active skills refuse the call, if they do (`allowed-tools`); reading their
/// own folders is always theirs.
pub fn refused(
    book: &dyn SkillBook,
    cwd: &std::path::Path,
    tool: &dyn Tool,
    invocation: &Invocation,
) -> Option<String> {
    if reads_own_folder(tool, invocation, &roots(book)) {
        return None;
    }
    let paths: Vec<String> =
        invocation.targets.iter().map(|t| paths::display_relative(&t.path, cwd)).collect();
    let subject = Subject {
        tool: tool.name(),
        commands: &invocation.gate.lines,
        opaque: invocation.gate.opaque.as_deref(),
        patterns: &invocation.gate.patterns,
        paths: &paths,
        host: None,
    };
    book.refuses(&subject)
}
