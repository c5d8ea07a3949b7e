//! Infrastructure knowledge: judges every command of a shell script by what it does to
//! infrastructure (`Tier`), with the paths it names, the prefixes an "always" answer may
//! remember and the terraform call the gate may plan first. Pure: it never asks anyone and
//! does no I/O beyond `Path::exists`; it knows programs, `shell` knows syntax.

mod cloud;
mod dev;
mod files;
mod git;
mod judge;
mod kube;
mod path;
pub mod plan;
mod scan;
pub mod scope;
mod stream;
mod terraform;
#[cfg(test)]
mod tests;
mod unix;
mod word;

use std::path::{Path, PathBuf};

use crate::shell::{self, RedirectKind, Script, Simple};

use judge::{Cmd, Out};

/// How much a command can change, from nothing to losing infrastructure; a script takes the
/// highest tier of its commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    /// Changes nothing (`ls`, `terraform show`, `kubectl get`).
    Read,
    /// Computes a change without making it (`terraform plan`, `kubectl apply --dry-run`).
    Plan,
    /// Changes files, repositories or live infrastructure in a way that can be undone or
    /// repaired (`git commit`, `kubectl apply`, `npm install`); anything unknown.
    Mutate,
    /// May lose data or infrastructure (`terraform destroy`, `rm -rf`, `git push --force`).
    Destroy,
}

impl Tier {
    /// The tier's id, for settings and messages.
    pub fn id(self) -> &'static str {
        match self {
            Tier::Read => "read",
            Tier::Plan => "plan",
            Tier::Mutate => "mutate",
            Tier::Destroy => "destroy",
        }
    }
}

/// How a command uses a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathUse {
    Read,
    Write,
}

/// What `classify` found in a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    pub tier: Tier,
    /// Why the tier is what it is, one short phrase each, most serious first, e.g.
    /// "terraform destroy deletes every resource in its state", "rm -r outside build output",
    /// "the program is hidden: $t". Empty for plain reads.
    pub reasons: Vec<String>,
    /// What an "always" answer remembers: the prefix (program basename + subcommand, e.g.
    /// "terraform fmt", "git commit", "make test", "kubectl apply", "npm install") of each
    /// command at Mutate tier, deduplicated; `None` when some mutate-tier command has no safe
    /// prefix (opaque script, dynamic program, interpreter with inline code) — then "always" is
    /// not offered. Destroy tier never gets "always" (the gate enforces it; still filled).
    pub prefixes: Option<Vec<String>>,
    /// Each simple command as one normalised line: program basename, then the words, space
    /// separated (`/usr/bin/git  status` → "git status"); bare assignments left out. Rules
    /// such as `bash(git *)` are matched against these lines.
    pub lines: Vec<String>,
    /// Paths the commands name, absolute (resolved against the cwd in effect, `~/` expanded
    /// with HOME from `env`), with how they are used: every non-option argument of a read- or
    /// plan-tier command that looks like a path (contains `/`, starts with `~` or `.`, or has
    /// an extension) or that exists relative to the cwd; redirect targets (`>`: Write,
    /// `<`: Read; `/dev/null`, `/dev/stdout`, `/dev/stderr` left out); the written paths of
    /// file-only mutations (and of `rm`, `chmod` and the like). The caller judges them against
    /// the path rules (outside the project, sensitive files such as ~/.aws/credentials or
    /// *.tfstate ask every time).
    pub paths: Vec<(PathBuf, PathUse)>,
    /// The tier is Mutate and every mutation in it only changes files in known paths
    /// (redirections, `touch`, `mkdir`, `cp`, `mv`, `tee`, `sed -i`, `ln`, `terraform fmt`,
    /// non-recursive `rm`): accept_edits mode may run it when all written paths are inside the
    /// project. False for read and plan tiers (nothing to accept) and for Destroy.
    pub file_only: bool,
    /// Directories whose files the commands execute or feed to code of theirs (terraform/tofu/
    /// terragrunt subcommands other than version/fmt/help, `ansible-playbook` incl. --check,
    /// `kubectl diff`, `make`, test runners, `./script.sh`, `python x.py`, git's `.git`). The
    /// gate asks before such a read- or plan-tier command runs if a file below one of them was
    /// written in this session without a person's answer.
    pub runs_code_in: Vec<PathBuf>,
    /// A lone terraform/tofu apply or destroy (the only command of the script, maybe after
    /// `cd DIR &&`, with env assignments), whose plan the gate computes before asking.
    pub terraform: Option<TfCall>,
    /// Whether any part could not be understood (parser opaque, hidden program, interpreter code).
    pub opaque: bool,
}

/// A terraform or tofu apply/destroy the gate can plan before asking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TfCall {
    /// argv[0] as written (`terraform`, `/opt/bin/tofu`).
    pub program: String,
    /// The working directory terraform acts in: cwd + `cd` + `-chdir` (absolute).
    pub dir: PathBuf,
    /// The global options before the subcommand as written (`-chdir=infra`).
    pub global: Vec<String>,
    /// `terraform destroy`, or `apply -destroy` (then `-destroy` is not in `plan_args`: the
    /// gate adds it when planning).
    pub destroy: bool,
    /// `apply PLANFILE`: the saved plan file as written.
    pub plan_file: Option<String>,
    /// Options that shape the plan and are passed to `plan`, as written (a value written apart
    /// is its own word): -var, -var-file, -target, -replace, -exclude (tofu), -refresh,
    /// -refresh-only, -lock, -lock-timeout, -parallelism, -compact-warnings, -no-color, -state
    /// (legacy); not -auto-approve, -input, -json, -out.
    pub plan_args: Vec<String>,
    /// Options kept when applying the saved plan (-lock, -lock-timeout, -parallelism,
    /// -no-color, -compact-warnings, -state, -state-out, -backup); never -var/-var-file/
    /// -target/-replace (terraform refuses them with a saved plan).
    pub apply_args: Vec<String>,
    /// Environment assignments written with the command (`TF_WORKSPACE=prod terraform apply`).
    pub assigns: Vec<(String, String)>,
    /// Options it could not place (also words with a hidden value, and `TF_CLI_ARGS*`
    /// settings): the gate then does not rewrite the call (it asks as destroy).
    pub unknown: Vec<String>,
}

/// Parses and classifies `src`. `env` reads the environment the command will run in (HOME,
/// KUBECTL_EXTERNAL_DIFF …). Pure: no I/O except `Path::exists` checks on path-like arguments
/// relative to the cwd.
pub fn classify(src: &str, cwd: &Path, env: &dyn Fn(&str) -> Option<String>) -> Classified {
    classify_script(&shell::parse(src), src, cwd, env)
}

/// Classifies an already parsed script; `src` is its text, for the lenient scan.
pub fn classify_script(
    script: &Script,
    src: &str,
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Classified {
    let home = env("HOME");
    let mut out = Out::new(cwd, home.as_deref(), env);
    for reason in &script.opaque {
        out.opaque(reason.clone());
    }
    // Script holds no subshell boundaries: after a `cd` in a script with subshells or pipes,
    // the directory in effect is either the one tracked or the session's; judge both.
    let dual = subshells(src, script);
    let mut walk = Walk { dir: cwd.to_path_buf(), hidden: false, real: 0, lone: None };
    for simple in &script.commands {
        out.begin();
        walk.command(simple, cwd, dual, &mut out);
        out.end();
    }
    let lone = walk.lone == Some(true)
        && walk.real == 1
        && out.tf.len() == 1
        && !walk.hidden
        && script.opaque.is_empty()
        && !out.opaque;
    if out.opaque
        && let Some(phrase) = scan::danger(src)
    {
        out.raise(Tier::Destroy, format!("hidden: it mentions {phrase}"));
    }
    out.finish(lone)
}

/// The walk over a script's commands: the directory in effect and what the lone-call check
/// needs.
struct Walk {
    dir: PathBuf,
    /// A `cd` went somewhere that cannot be known here.
    hidden: bool,
    /// Commands other than `cd` and bare assignments.
    real: usize,
    /// Whether the terraform apply/destroy seen could be planned by the gate.
    lone: Option<bool>,
}

impl Walk {
    fn command(&mut self, simple: &Simple, cwd: &Path, dual: bool, out: &mut Out) {
        let other = dual && self.dir != cwd;
        for (name, _) in &simple.assigns {
            if word::risky_var(name) {
                out.opaque(format!("sets {name}: programs may not be what they seem"));
            }
        }
        redirects(simple, &self.dir, out);
        if other {
            redirects(simple, cwd, out);
        }
        let Some(name) = simple.program() else { return };
        out.lines.push(line(name, &simple.argv[1..]));
        let dynamic = simple.dynamic.get(1..).unwrap_or(&[]);
        let cmd = Cmd {
            name,
            program: &simple.argv[0],
            args: &simple.argv[1..],
            dynamic,
            simple,
            cwd: &self.dir,
        };
        if simple.dynamic.first().copied().unwrap_or_else(|| word::expands(&simple.argv[0])) {
            out.opaque(format!("the program is hidden: {}", simple.argv[0]));
            if let Some(verb) = scan::hidden_verb(&simple.argv[1..]) {
                out.raise(Tier::Destroy, format!("hidden: a hidden program asked to {verb}"));
            }
            return;
        }
        if matches!(name, "cd" | "pushd" | "popd") {
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
        judge_command(&cmd, out);
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
            judge_command(&Cmd { cwd, ..cmd }, out);
            out.tf.truncate(before);
        }
    }
}

/// Whether some commands may run in a subshell, where a `cd` does not last: parentheses,
/// substitutions, pipes, background jobs, `sh -c` strings.
fn subshells(src: &str, script: &Script) -> bool {
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

/// Judges one simple command by its program's family; an unknown program is a mutation.
fn judge_command(cmd: &Cmd, out: &mut Out) {
    let known = match cmd.name {
        "terraform" | "tofu" | "terragrunt" | "tflint" | "checkov" | "tfsec" | "pulumi" => {
            terraform::judge(cmd, out)
        }
        "kubectl" | "oc" | "helm" | "kustomize" | "k9s" => kube::judge(cmd, out),
        "aws" | "gcloud" | "az" => cloud::judge(cmd, out),
        name if name.starts_with("ansible") => cloud::judge(cmd, out),
        "git" => git::judge(cmd, out),
        _ => {
            unix::judge(cmd, out)
                || files::judge(cmd, out)
                || stream::judge(cmd, out)
                || dev::judge(cmd, out)
        }
    };
    if !known {
        out.raise(Tier::Mutate, format!("unknown program: {}", cmd.name));
        if cmd.program.contains('/') {
            out.runs(path::parent(&cmd.resolve(out, cmd.program)));
        }
        out.prefix_sub(cmd, 0);
    }
}

/// Judges the payload of `find -exec` or an unpeeled wrapper: the words from `args[from]` on,
/// as a command of its own in the same directory.
fn judge_payload(cmd: &Cmd, from: usize, out: &mut Out) {
    let Some(program) = cmd.args.get(from) else { return };
    if cmd.dynamic(from) {
        out.opaque(format!("the program is hidden: {program}"));
        return;
    }
    let name = program.rsplit('/').next().unwrap_or(program);
    let dynamic = cmd.dynamic.get(from + 1..).unwrap_or(&[]);
    let inner = Cmd { name, program, args: &cmd.args[from + 1..], dynamic, ..*cmd };
    judge_command(&inner, out);
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

/// The normalised line of a command: basename, then the words.
fn line(name: &str, args: &[String]) -> String {
    let mut line =
        String::with_capacity(name.len() + args.iter().map(|a| a.len() + 1).sum::<usize>());
    line.push_str(name);
    for arg in args {
        line.push(' ');
        line.push_str(arg);
    }
    line
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
