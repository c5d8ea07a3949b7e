//! The walk over a script's commands: the directory in effect (`cd`), the program each
//! command runs (a path in the project is the project's own code), its normalised line,
//! its redirections, and the checks a lone terraform call needs.

use std::path::{Path, PathBuf};

use crate::shell::{RedirectKind, Script, Simple};

use super::judge::{Cmd, Out};
use super::program::{self, Program};
use super::{Tier, glob, judge_located, path, scan, unix, vars, word};

/// The walk over a script's commands: the directory in effect and what the lone-call check
/// needs.
pub(super) struct Walk {
    pub dir: PathBuf,
    /// A `cd` went somewhere that cannot be known here.
    pub hidden: bool,
    /// Commands other than `cd` and bare assignments.
    pub real: usize,
    /// Whether the terraform apply/destroy seen could be planned by the gate.
    pub lone: Option<bool>,
}

impl Walk {
    pub(super) fn command(&mut self, simple: &Simple, cwd: &Path, dual: bool, out: &mut Out) {
        let other = dual && self.dir != cwd;
        for (name, _) in &simple.assigns {
            if vars::reaches(name, simple.argv.is_empty(), out.env) {
                out.opaque(format!("sets {name}: programs may not be what they seem"));
            }
        }
        redirects(simple, &self.dir, out);
        if other {
            redirects(simple, cwd, out);
        }
        let (Some(base), Some(program)) = (simple.program(), simple.argv.first()) else { return };
        let hidden = simple.dynamic.first().copied().unwrap_or_else(|| word::expands(program));
        let located = match hidden {
            true => Program::Plain,
            false => program::locate(program, &self.dir, out.root, out.home),
        };
        let name = match &located {
            Program::Linked(target) => target.as_str(),
            _ => base,
        };
        let shown = if matches!(located, Program::Local(_)) { program.as_str() } else { name };
        out.lines.push(word::line(shown, simple.argv.get(1..).unwrap_or(&[])));
        let dynamic = simple.dynamic.get(1..).unwrap_or(&[]);
        let cmd = Cmd {
            name,
            program,
            args: simple.argv.get(1..).unwrap_or(&[]),
            dynamic,
            simple,
            cwd: &self.dir,
        };
        if hidden {
            out.opaque(format!("the program is hidden: {program}"));
            if let Some(verb) = scan::hidden_verb(simple.argv.get(1..).unwrap_or(&[])) {
                out.raise(Tier::Destroy, format!("hidden: a hidden program asked to {verb}"));
            }
            return;
        }
        if matches!(located, Program::Plain) && matches!(name, "cd" | "pushd" | "popd") {
            match change_dir(&cmd, out) {
                Some(next) => {
                    out.read(next.clone());
                    self.dir = next;
                }
                None => {
                    out.note("cd to a hidden directory");
                    self.hidden = true;
                }
            }
            return;
        }
        self.real += 1;
        if self.hidden {
            out.raise(Tier::Mutate, "runs in a hidden directory");
        }
        let before = out.tf.len();
        judge_located(&cmd, &located, out);
        if cmd.fed("xargs") && !unix::is_quiet(name) {
            out.raise(Tier::Mutate, format!("{name} works on paths from its input"));
        }
        if simple.wrappers.iter().any(|w| w == "sudo" || w == "doas") {
            out.raise(Tier::Mutate, "runs as root");
            out.no_prefix();
        }
        if out.tf.len() > before {
            self.lone = Some(lone_call(simple));
        }
        if other {
            let before = out.tf.len();
            let located = program::locate(program, cwd, out.root, out.home);
            judge_located(&Cmd { cwd, ..cmd }, &located, out);
            out.tf.truncate(before);
        }
    }
}

/// Whether some commands may run in a subshell, where a `cd` does not last: parentheses,
/// substitutions, pipes, background jobs, `sh -c` strings.
pub(super) fn subshells(src: &str, script: &Script) -> bool {
    let background = src.match_indices('&').any(|(i, _)| {
        let near = |j: Option<usize>| j.and_then(|j| src.as_bytes().get(j)).copied();
        !matches!(near(i.checked_sub(1)), Some(b'&' | b'>' | b'<'))
            && near(Some(i + 1)) != Some(b'&')
            && near(Some(i + 1)) != Some(b'>')
    });
    background
        || src.contains(['(', '`', '|'])
        || script.commands.iter().any(|c| c.wrappers.iter().any(|w| w == "sh -c"))
}

/// Whether a terraform apply/destroy can be planned by the gate: no pipe, no wrapper but
/// `env`, no redirection but descriptor copies and `/dev/null`.
fn lone_call(simple: &Simple) -> bool {
    !simple.piped
        && simple.wrappers.iter().all(|w| w == "env")
        && simple
            .redirects
            .iter()
            .all(|r| r.kind == RedirectKind::Dup || (!r.dynamic && r.target == "/dev/null"))
}

/// The directory after `cd`/`pushd`/`popd`; `None` when it cannot be known here.
fn change_dir(cmd: &Cmd, out: &Out) -> Option<PathBuf> {
    if cmd.name == "popd" {
        return None;
    }
    let at = cmd.args.iter().position(|a| !matches!(a.as_str(), "-L" | "-P" | "-e" | "--"));
    match at {
        None => out.home.map(PathBuf::from),
        Some(i) if cmd.dynamic(i) || cmd.args[i] == "-" || cmd.args[i].starts_with('+') => None,
        Some(i) => path::resolve(&cmd.args[i], cmd.cwd, out.home),
    }
}

/// Judges a command's redirections: writes are file-only mutations (Destroy for terraform
/// state and raw disks), reads are paths to judge, `/dev/tcp` is the network.
fn redirects(simple: &Simple, cwd: &Path, out: &mut Out) {
    for r in &simple.redirects {
        let write = match r.kind {
            RedirectKind::Write | RedirectKind::Append | RedirectKind::ReadWrite => true,
            RedirectKind::Read => false,
            _ => continue,
        };
        let target = r.target.as_str();
        if r.dynamic {
            if write && !target.contains(['$', '`']) && glob::may_name_state(target) {
                out.raise(
                    Tier::Destroy,
                    format!("redirects to a pattern that may be state: {target}"),
                );
            }
            out.raise(Tier::Mutate, format!("redirects to a hidden path: {target}"));
            continue;
        }
        if matches!(target, "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/stdin" | "/dev/tty")
        {
            continue;
        }
        if target.starts_with("/dev/tcp/") || target.starts_with("/dev/udp/") {
            out.raise(Tier::Mutate, format!("opens a network connection: {target}"));
            continue;
        }
        let Some(path) = path::resolve(target, cwd, out.home) else {
            out.raise(Tier::Mutate, format!("redirects to a path in an unknown home: {target}"));
            continue;
        };
        if !write {
            out.read(path);
        } else if path::raw_disk(target) {
            out.raise(Tier::Destroy, format!("writes a raw disk: {target}"));
        } else if path::state_file(target) {
            out.raise(Tier::Destroy, format!("overwrites terraform state: {target}"));
            out.write(path);
        } else {
            out.write_file(path, format!("writes {target}"));
        }
    }
}
