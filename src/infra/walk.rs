//! The walk over a script's commands: the directory in effect (`cd`), the program each
//! command runs (a path in the project is the project's own code), its normalised line,
//! its redirections, and the checks a lone terraform call needs.

use std::path::{Path, PathBuf};

use crate::shell::{RedirectKind, Script, Simple};

use super::judge::{Cmd, Out};
use super::program::{self, Program};
use super::word::{Words, words};
use super::{Tier, glob, judge_located, path, scan, state, unix, vars, word};

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
    /// Literal values the script gave its variables so far (`t=terraform`, `export T=x`),
    /// every one of them: what a hidden program (`$t`) may be.
    pub values: Vec<(String, String)>,
}

/// Programs whose subcommands reach from reading to destroying: hidden behind a variable,
/// any of them is taken at its highest tier.
const LAYERED: Words =
    words!("terraform tofu terragrunt pulumi kubectl oc helm git aws gcloud az ansible-playbook");

/// How many programs a hidden program word may resolve to before the rest are left out.
const MAX_CANDIDATES: usize = 16;

impl Walk {
    pub(super) fn command(&mut self, simple: &Simple, cwd: &Path, dual: bool, out: &mut Out) {
        let other = dual && self.dir != cwd;
        for (name, value) in &simple.assigns {
            if vars::reaches(name, simple.argv.is_empty(), out.env) {
                out.opaque(format!("sets {name}: programs may not be what they seem"));
            }
            vars::written(name, value, &self.dir, out);
        }
        self.remember(simple);
        patterns(simple, out);
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
            for candidate in self.candidates(program) {
                let located = program::locate(&candidate, &self.dir, out.root, out.home);
                let name = match &located {
                    Program::Linked(target) => target.clone(),
                    _ => path::basename(&candidate).to_string(),
                };
                out.extra_line(word::line(&name, cmd.args));
                if LAYERED.has(&name) {
                    out.raise(
                        Tier::Destroy,
                        format!(
                            "the program is hidden: {program} may be {name}, at its highest tier"
                        ),
                    );
                }
                judge_located(&Cmd { name: &name, program: &candidate, ..cmd }, &located, out);
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
        if out.cmd_tier() == Tier::Read {
            state::reads(&cmd, out);
        }
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

impl Walk {
    /// Keeps the literal values a command gives variables of the script: a bare assignment,
    /// `export`/`declare`/`local`/`readonly`/`typeset NAME=VALUE`.
    fn remember(&mut self, simple: &Simple) {
        let literal = |v: &str| !v.contains(['$', '`']);
        if simple.argv.is_empty() {
            let found = simple.assigns.iter().filter(|(_, v)| literal(v)).cloned();
            self.values.extend(found);
            return;
        }
        let declaring = matches!(
            simple.program(),
            Some("export" | "declare" | "local" | "readonly" | "typeset")
        );
        for (i, arg) in simple.argv.iter().enumerate().skip(1).filter(|_| declaring) {
            if let Some((name, value)) = arg.split_once('=')
                && !simple.dynamic.get(i).copied().unwrap_or(true)
            {
                self.values.push((name.to_string(), value.to_string()));
            }
        }
    }

    /// What a hidden program word (`$t`, `${t}x`) may be, from the literal values the script
    /// gave its variables; empty when some part of it is not such a variable.
    fn candidates(&self, program: &str) -> Vec<String> {
        let b = program.as_bytes();
        let mut found = vec![String::new()];
        let mut i = 0;
        while let Some(&c) = b.get(i) {
            let (name, next) = match (c, b.get(i + 1)) {
                (b'$', Some(b'{')) => {
                    let Some(end) = program.get(i + 2..).and_then(|r| r.find('}')) else {
                        return Vec::new();
                    };
                    (program.get(i + 2..i + 2 + end).unwrap_or_default(), i + 3 + end)
                }
                (b'$', _) => {
                    let rest = b.iter().skip(i + 1);
                    let n = rest.take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
                    (program.get(i + 1..i + 1 + n).unwrap_or_default(), i + 1 + n)
                }
                (b'`' | b'*' | b'?' | b'[', _) => return Vec::new(),
                _ => {
                    let ch = program.get(i..).and_then(|r| r.chars().next()).unwrap_or('?');
                    found.iter_mut().for_each(|f| f.push(ch));
                    i += ch.len_utf8();
                    continue;
                }
            };
            let values: Vec<&str> =
                self.values.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str()).collect();
            if name.is_empty() || values.is_empty() {
                return Vec::new();
            }
            let mut next_found = Vec::new();
            for f in &found {
                for v in &values {
                    if next_found.len() < MAX_CANDIDATES && !next_found.contains(&format!("{f}{v}"))
                    {
                        next_found.push(format!("{f}{v}"));
                    }
                }
            }
            found = next_found;
            i = next;
        }
        found.retain(|f| !f.is_empty());
        found
    }
}

/// A command with hidden parts as a pattern for the rules (`Classified::patterns`): the
/// program basename (a glob in it hidden too), then the words; and "*", any command, for
/// the code `eval` and `trap` run, a shell's `-c` string the parser could not read, a
/// hidden script a shell runs and a wrapper's hidden command (`nohup $t`).
fn patterns(simple: &Simple, out: &mut Out) {
    let hidden = |i: usize| {
        let word = simple.argv.get(i).map_or("", String::as_str);
        simple.dynamic.get(i).copied().unwrap_or(true) && (i == 0 || word.contains(['$', '`']))
    };
    let Some(program) = simple.argv.first() else { return };
    let name = simple.program().unwrap_or_default();
    // A string run as code later or again (`eval`, `trap`, a shell's `-c` the parser could
    // not read) may be any command once bash reads it.
    let shell = matches!(name, "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" | "mksh");
    let string = shell && simple.argv.iter().skip(1).any(|w| w.starts_with('-') && w.contains('c'));
    if !hidden(0) && (matches!(name, "eval" | "trap") || string) {
        out.patterns.push("*".to_string());
    }
    if !(0..simple.argv.len()).any(hidden) {
        return;
    }
    let args = simple.argv.iter().enumerate().skip(1);
    let words: Vec<String> =
        args.map(|(i, w)| if hidden(i) { word::pattern(w, false) } else { w.clone() }).collect();
    if hidden(0) {
        let base = word::pattern_basename(&word::pattern(program, true));
        out.patterns.push(word::line(&base, &words));
    } else {
        out.patterns.push(word::line(name, &words));
    }
    match name {
        // A wrapper the parser could not see past runs a command nobody can name.
        _ if !hidden(0) && unix::is_wrapper(name) => out.patterns.push("*".to_string()),
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" | "mksh" | "source" | "."
            if !hidden(0) && !string =>
        {
            out.patterns.push("*".to_string());
        }
        _ => {}
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
