//! The tools every program family shares: `Cmd`, one simple command as a family sees it,
//! `Out`, what the families learn about a script, and the path rules (what looks like a
//! path, how a word resolves). Knows no program.

use std::path::{Path, PathBuf};

use crate::shell::Simple;

use super::path::{exists, glob_dir, looks_like_path, resolve, state_file};
use super::word::{Words, expands, is_option, plain};
use super::{PathUse, TfCall, Tier};

/// One simple command as a family sees it.
#[derive(Clone, Copy)]
pub(super) struct Cmd<'a> {
    /// The program's basename (`terraform`).
    pub name: &'a str,
    /// `argv[0]` as written (`/opt/bin/terraform`).
    pub program: &'a str,
    /// The words after the program.
    pub args: &'a [String],
    /// Per word of `args`: whether its value is unknown here.
    pub dynamic: &'a [bool],
    /// The whole command, for its assignments, wrappers and pipe.
    pub simple: &'a Simple,
    /// The directory it runs in.
    pub cwd: &'a Path,
}

impl<'a> Cmd<'a> {
    /// Whether `args[i]` holds an expansion (a variable or a glob).
    pub fn dynamic(&self, i: usize) -> bool {
        self.dynamic.get(i).copied().unwrap_or_else(|| self.args.get(i).is_some_and(|a| expands(a)))
    }

    /// Whether `args[i]` holds a variable or a substitution, not only a glob.
    pub fn hidden(&self, i: usize) -> bool {
        let Some(word) = self.args.get(i) else { return false };
        self.dynamic(i) && word.contains(['$', '`']) || word == "{}" && self.fed("find -exec")
    }

    /// Whether the wrapper `by` (`xargs`, `find -exec`) feeds it words at run time.
    pub fn fed(&self, by: &str) -> bool {
        self.simple.wrappers.iter().any(|w| w == by)
    }

    /// Whether some word is `opt` or `opt=…`.
    pub fn has(&self, opt: &str) -> bool {
        self.args
            .iter()
            .any(|a| a == opt || a.strip_prefix(opt).is_some_and(|r| r.starts_with('=')))
    }

    /// Whether some word is one of `opts` (or `opt=…`).
    pub fn has_any(&self, opts: Words) -> bool {
        opts.iter().any(|o| self.has(o))
    }

    /// Whether some single-dash cluster (`-rf`) holds one of the letters in `flags`.
    pub fn short(&self, flags: &str) -> bool {
        self.args.iter().any(|a| {
            a.len() > 1
                && a.starts_with('-')
                && !a.starts_with("--")
                && a[1..].contains(|c| flags.contains(c))
        })
    }

    /// The value of `opt` written as `opt=v` or `opt v`.
    pub fn value(&self, opt: &str) -> Option<&str> {
        let mut words = self.args.iter();
        while let Some(a) = words.next() {
            if a == opt {
                return words.next().map(String::as_str);
            }
            if let Some(v) = a.strip_prefix(opt).and_then(|r| r.strip_prefix('=')) {
                return Some(v);
            }
        }
        None
    }

    /// Where an output option (`-o FILE`, `-oFILE`, `-no FILE`, `LONG=FILE`, `LONG FILE`)
    /// puts its file: `Ok(index)` of a separate word, or `Err(text)` glued to the option.
    pub fn output(&self, long: &str) -> Option<Result<usize, &'a str>> {
        let apart = |i: usize| (i + 1 < self.args.len()).then_some(Ok(i + 1));
        for (i, arg) in self.args.iter().enumerate() {
            if arg == long {
                return apart(i);
            }
            if let Some(file) = arg.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
                return Some(Err(file));
            }
            if is_option(arg)
                && !arg.starts_with("--")
                && let Some(at) = arg.find('o')
            {
                return if at + 1 == arg.len() { apart(i) } else { Some(Err(&arg[at + 1..])) };
            }
        }
        None
    }

    /// The words that are not options, with their index.
    pub fn positionals(&self) -> impl Iterator<Item = (usize, &str)> {
        self.args.iter().map(String::as_str).enumerate().filter(|(_, a)| !is_option(a))
    }

    /// The operands with their index: the words that are not options nor the values of the
    /// options in `values`; every word after `--`.
    pub fn words(&self, values: Words) -> Vec<(usize, &'a str)> {
        let mut words = Vec::new();
        let (mut i, mut end) = (0, false);
        while let Some(arg) = self.args.get(i) {
            if end || !is_option(arg) {
                words.push((i, arg.as_str()));
            } else if arg == "--" {
                end = true;
            } else if values.has(arg) {
                i += 1;
            }
            i += 1;
        }
        words
    }

    /// The index of the first word that is not a leading option, skipping `values` (options
    /// that take the next word) and `flags`; `Err` names an unknown leading option.
    pub fn lead(&self, values: Words, flags: Words) -> Result<Option<usize>, &str> {
        let mut i = 0;
        while let Some(arg) = self.args.get(i) {
            if !is_option(arg) {
                return Ok(Some(i));
            }
            if values.has(arg) {
                i += 1;
            } else if !arg.contains('=') && !flags.has(arg) {
                return Err(arg);
            }
            i += 1;
        }
        Ok(None)
    }

    /// The words after `args[at]`, as a command of their own.
    pub fn after(&self, at: usize) -> Cmd<'a> {
        Cmd {
            args: self.args.get(at + 1..).unwrap_or(&[]),
            dynamic: self.dynamic.get(at + 1..).unwrap_or(&[]),
            ..*self
        }
    }

    /// `word` resolved against this command's directory (`None`: in an unknown home).
    pub fn resolve(&self, out: &Out, word: &str) -> PathBuf {
        resolve(word, self.cwd, out.home).unwrap_or_else(|| self.cwd.join(word))
    }
}

/// What the families learn about a script, command by command.
pub(super) struct Out<'a> {
    /// The session's working directory: the project.
    pub root: &'a Path,
    pub home: Option<&'a str>,
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub lines: Vec<String>,
    /// The commands with hidden parts, as patterns (`Classified::patterns`).
    pub patterns: Vec<String>,
    /// Every terraform/tofu apply or destroy seen, for the lone-call check.
    pub tf: Vec<TfCall>,
    pub opaque: bool,
    pub(super) tier: Tier,
    pub(super) reasons: Vec<(Tier, String)>,
    pub(super) prefixes: Vec<String>,
    pub(super) no_prefix: bool,
    pub(super) paths: Vec<(PathBuf, PathUse)>,
    pub(super) runs_code_in: Vec<PathBuf>,
    /// A mutation that changes more than files in known paths.
    pub(super) non_file: bool,
    /// The roots of the last `find`, whose files its `-exec` payloads are fed.
    pub walked: Vec<PathBuf>,
    /// Why the output holds secrets (the first command that prints them).
    pub(super) secret: Option<String>,
    /// The current command's tier and "always" prefix.
    cmd_tier: Tier,
    cmd_prefix: Option<String>,
    /// Where the current command's lines start in `lines`.
    cmd_lines: usize,
    /// The current command is a known infrastructure client (`client`), not the project's
    /// own program of that name; and it changes more than files in known paths.
    cmd_client: bool,
    cmd_non_file: bool,
    /// The highest tier of the infrastructure clients' commands so far.
    pub(super) cloud: Option<Tier>,
    /// A command that is not an infrastructure client did more than read.
    pub(super) local_change: bool,
}

impl<'a> Out<'a> {
    pub fn new(
        root: &'a Path,
        home: Option<&'a str>,
        env: &'a dyn Fn(&str) -> Option<String>,
    ) -> Self {
        Out {
            root,
            home,
            env,
            lines: Vec::new(),
            patterns: Vec::new(),
            tf: Vec::new(),
            opaque: false,
            tier: Tier::Read,
            reasons: Vec::new(),
            prefixes: Vec::new(),
            no_prefix: false,
            paths: Vec::new(),
            runs_code_in: Vec::new(),
            non_file: false,
            secret: None,
            walked: Vec::new(),
            cmd_tier: Tier::Read,
            cmd_prefix: None,
            cmd_lines: 0,
            cmd_client: false,
            cmd_non_file: false,
            cloud: None,
            local_change: false,
        }
    }

    /// Starts a command.
    pub fn begin(&mut self) {
        self.cmd_tier = Tier::Read;
        self.cmd_prefix = None;
        self.cmd_lines = self.lines.len();
        self.cmd_client = false;
        self.cmd_non_file = false;
    }

    /// The current command is a known infrastructure client (it reaches the network with
    /// the user's credentials to do its work); `false`: it is not, whatever its name.
    pub fn client(&mut self, is: bool) {
        self.cmd_client = is;
    }

    /// Another line for the current command (its payload, its canonical form), after its own;
    /// once.
    pub fn extra_line(&mut self, line: String) {
        if !self.lines[self.cmd_lines.min(self.lines.len())..].contains(&line) {
            self.lines.push(line);
        }
    }

    /// The command prints secrets, for a reason; the first reason is kept.
    pub fn secret(&mut self, reason: impl Into<String>) {
        if self.secret.is_none() {
            self.secret = Some(reason.into());
        }
    }

    /// Ends a command: a mutation remembers its prefix, or spoils "always".
    pub fn end(&mut self) {
        // Beside a client, a command may read, or write files in known paths (`| tee
        // plan.log`); anything more keeps the network and the credentials away.
        if self.cmd_client {
            self.cloud = self.cloud.max(Some(self.cmd_tier));
        } else if self.cmd_tier > Tier::Read && self.cmd_non_file {
            self.local_change = true;
        }
        if self.cmd_tier < Tier::Mutate {
            return;
        }
        match self.cmd_prefix.take() {
            Some(p) if !self.prefixes.contains(&p) => self.prefixes.push(p),
            Some(_) => {}
            None => self.no_prefix = true,
        }
    }

    /// Raises the tier, for a reason (none when empty).
    pub fn raise(&mut self, tier: Tier, reason: impl Into<String>) {
        if tier >= Tier::Mutate {
            self.non_file = true;
            self.cmd_non_file = true;
        }
        self.bump(tier, reason.into());
    }

    fn bump(&mut self, tier: Tier, reason: String) {
        self.tier = self.tier.max(tier);
        self.cmd_tier = self.cmd_tier.max(tier);
        if !reason.is_empty() && !self.reasons.iter().any(|(_, r)| *r == reason) {
            self.reasons.push((tier, reason));
        }
    }

    /// The current command's tier so far.
    pub fn cmd_tier(&self) -> Tier {
        self.cmd_tier
    }

    /// A reason that raises nothing.
    pub fn note(&mut self, reason: &str) {
        self.bump(Tier::Read, reason.to_string());
    }

    /// Marks a part not understood: at least Mutate, no "always".
    pub fn opaque(&mut self, reason: impl Into<String>) {
        self.opaque = true;
        self.no_prefix = true;
        self.raise(Tier::Mutate, reason);
    }

    /// The subcommand (or operation) of a program we know is not a literal word
    /// (`terraform $T`): it may be the program's most dangerous one, so the command takes
    /// the highest tier, Destroy, and is not understood.
    pub fn hidden_sub(&mut self, reason: String) {
        self.opaque(reason.clone());
        self.raise(Tier::Destroy, reason);
    }

    /// A file-only mutation: writes `path`, for a reason.
    pub fn write_file(&mut self, path: PathBuf, reason: String) {
        self.bump(Tier::Mutate, reason);
        self.write(path);
    }

    pub fn read(&mut self, path: PathBuf) {
        self.path(path, PathUse::Read);
    }

    pub fn write(&mut self, path: PathBuf) {
        self.path(path, PathUse::Write);
    }

    /// Records a path; writing terraform state destroys, whoever writes it.
    fn path(&mut self, path: PathBuf, how: PathUse) {
        if how == PathUse::Write && self.cmd_tier < Tier::Destroy {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if state_file(name) {
                self.raise(Tier::Destroy, format!("writes terraform state: {name}"));
            }
        }
        if !self.paths.iter().any(|(p, u)| *p == path && *u == how) {
            self.paths.push((path, how));
        }
    }

    /// A word of `cmd` named as a path: resolved, or Mutate when it is in an unknown home.
    pub fn word(&mut self, cmd: &Cmd, i: usize, how: PathUse) {
        let word = &cmd.args[i];
        if cmd.hidden(i) {
            self.raise(Tier::Mutate, format!("names a hidden path: {word}"));
            return;
        }
        let word = if cmd.dynamic(i) { glob_dir(word) } else { word };
        match resolve(word, cmd.cwd, self.home) {
            Some(path) => self.path(path, how),
            None => self.raise(Tier::Mutate, format!("names a path in an unknown home: {word}")),
        }
    }

    /// The path arguments of a read or plan command, from `args[from]` on: non-option words
    /// and option values that look like paths or exist. With `strict`, a hidden operand (the
    /// program opens it) makes the command a mutation, since no rule can judge it.
    pub fn operands(&mut self, cmd: &Cmd, from: usize, strict: bool) {
        for i in from..cmd.args.len() {
            let arg = cmd.args[i].as_str();
            if is_option(arg) {
                let value = arg.split_once('=').map(|(_, v)| v);
                if let Some(v) = value.filter(|v| !cmd.dynamic(i) && looks_like_path(v)) {
                    let path = resolve(v, cmd.cwd, self.home).unwrap_or_else(|| cmd.cwd.join(v));
                    self.read(path);
                }
                continue;
            }
            // The files `find -exec` passes are below its roots, judged already.
            if cmd.hidden(i) && (!strict || arg == "{}") {
                continue;
            }
            if cmd.dynamic(i) || looks_like_path(arg) || strict && exists(cmd.cwd, arg) {
                self.word(cmd, i, PathUse::Read);
            }
        }
    }

    /// A directory whose files the command runs.
    pub fn runs(&mut self, dir: PathBuf) {
        if !self.runs_code_in.contains(&dir) {
            self.runs_code_in.push(dir);
        }
    }

    /// A command that runs code from anywhere in the project (terraform's local modules,
    /// ansible's inventories): the project, and `dir`.
    pub fn runs_project(&mut self, dir: &Path) {
        self.runs(self.root.to_path_buf());
        self.runs(dir.to_path_buf());
    }

    /// The "always" prefix of this command.
    pub fn prefix(&mut self, words: &[&str]) {
        self.cmd_prefix = Some(words.join(" "));
    }

    /// The prefix `name SUB`, SUB being the first positional from `args[from]` when it is a
    /// plain word (a subcommand), else `name` alone.
    pub fn prefix_sub(&mut self, cmd: &Cmd, from: usize) {
        let sub = cmd
            .args
            .get(from..)
            .unwrap_or(&[])
            .iter()
            .position(|a| !is_option(a))
            .map(|i| i + from);
        match sub.filter(|&i| !cmd.dynamic(i) && plain(&cmd.args[i])) {
            Some(i) => self.prefix(&[cmd.name, &cmd.args[i]]),
            None => self.prefix(&[cmd.name]),
        }
    }

    /// No safe prefix: "always" is not offered if this command mutates.
    pub fn no_prefix(&mut self) {
        self.cmd_prefix = None;
    }
}
