//! What the skills loaded in a turn change for a call (through `tools::SkillBook`): a
//! read of a loaded skill's own folder needs no question although it lies outside the cwd
//! (never a sensitive file, never a write), and while a skill with `allowed-tools` is
//! active a call those entries do not cover is refused before the gate. Nothing here
//! widens the gate: a covered call still goes through all of it.

use std::path::PathBuf;

use super::Turn;
use crate::rules::Subject;
use crate::tools::{Access, Invocation, Tool, paths};

/// The real folders of the skills loaded so far.
fn roots(turn: &Turn) -> Vec<PathBuf> {
    turn.skills
        .readable()
        .iter()
        .map(|dir| paths::real(dir).unwrap_or_else(|| dir.clone()))
        .collect()
}

/// Whether the call only reads inside loaded skills' folders, touching nothing sensitive.
fn reads_own_folder(tool: &dyn Tool, invocation: &Invocation, roots: &[PathBuf]) -> bool {
    tool.access() == Access::Read
        && !roots.is_empty()
        && !invocation.targets.is_empty()
        && invocation.sensitive.is_none()
        && invocation.targets.iter().all(|t| {
            t.sensitive.is_none()
                && t.real
                    .as_deref()
                    .is_some_and(|r| roots.iter().any(|root| paths::is_inside(r, root)))
        })
}

/// A read of a loaded skill's folder is no reach outside the project.
pub(super) fn reach(turn: &Turn, tool: &dyn Tool, invocation: &mut Invocation) {
    if reads_own_folder(tool, invocation, &roots(turn)) {
        invocation.outside_cwd = false;
    }
}

/// Why the active skills refuse the call, if they do (`allowed-tools`); reading their
/// own folders is always theirs.
pub(super) fn refused(turn: &Turn, tool: &dyn Tool, invocation: &Invocation) -> Option<String> {
    if reads_own_folder(tool, invocation, &roots(turn)) {
        return None;
    }
    let paths: Vec<String> =
        invocation.targets.iter().map(|t| paths::display_relative(&t.path, turn.cwd)).collect();
    let subject = Subject {
        tool: tool.name(),
        commands: &invocation.gate.lines,
        opaque: invocation.gate.opaque.as_deref(),
        paths: &paths,
        host: None,
    };
    turn.skills.refuses(&subject)
}
