//! Terraform state on disk: the one notion of a state file (`path::holds_state`) and of what only
//! terraform writes (`terraform_owned`: state, `.terraform/`, its lock and saved plans), used
//! by the classifier and the file tools alike; and whether a read given a pattern (`cat *`)
//! or walking directories (`grep -r`, `rg`, a `find -exec` payload) reaches state. That look
//! at the disk is bounded: past `MAX_ENTRIES` entries a directory is taken to hold state.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use super::glob::may_name_state;
use super::judge::{Cmd, Out};
use super::path::{glob_dir, holds_state};
use super::word::{Words, is_option, words};

/// How many directory entries a recursive read's directories are searched through.
const MAX_ENTRIES: usize = 4_000;

/// Readers that show names or sums, never contents.
const NAMES_ONLY: Words = words!(
    "ls stat file du df realpath readlink tree lsof wc md5sum sha1sum \
    sha256sum sha512sum shasum cksum b2sum sum"
);

/// Why only terraform itself may write `path`, if so: state (`*.tfstate*`), what `init`
/// keeps (`.terraform/`, `.terraform.lock.hcl`) and saved plans (`*.tfplan`). The file
/// tools refuse them in every mode; a command writing state is destroy tier.
pub fn terraform_owned(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    if holds_state(&name) {
        return Some(
            "Terraform state is changed by terraform only (terraform state mv/rm, import)",
        );
    }
    if name == ".terraform.lock.hcl" || name.ends_with(".tfplan") {
        return Some("terraform writes its lock and plan files itself (terraform init, plan -out)");
    }
    if path.components().any(|c| c.as_os_str() == ".terraform") {
        return Some("the .terraform directory belongs to terraform init");
    }
    None
}

/// What a look below a directory found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Found {
    Nothing,
    State(PathBuf),
    /// Too many entries to look through: taken to hold state.
    TooMany,
}

/// Looks in `dir` (and below, when `deep`) for a state file; symbolic links are not
/// followed.
pub(super) fn state_in(dir: &Path, deep: bool) -> Found {
    let mut queue = VecDeque::from([dir.to_path_buf()]);
    let mut seen = 0usize;
    while let Some(next) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&next) else { continue };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return Found::TooMany;
            }
            if holds_state(&entry.file_name().to_string_lossy()) {
                return Found::State(entry.path());
            }
            if deep && entry.file_type().is_ok_and(|t| t.is_dir()) {
                queue.push_back(entry.path());
            }
        }
    }
    Found::Nothing
}

/// A read-tier command given a pattern (`cat *`, `sort *`) or walking directories (`grep
/// -r`, `rg`, `git grep`, any `-r`/`-R`/`--recursive` over a directory, a `find -exec`
/// payload): when terraform state lies where it reads, it reads state, which asks as reading
/// a state file by name does (the file is a path it reads, and its output holds secrets).
/// Programs that show names or sums only are left alone.
pub(super) fn reads(cmd: &Cmd, out: &mut Out) {
    let name = cmd.name;
    if NAMES_ONLY.has(name) || super::unix::is_quiet(name) {
        return;
    }
    let grep = words!("grep egrep fgrep zgrep").has(name);
    let searcher = grep || words!("rg ag").has(name);
    let git_grep = name == "git" && cmd.positionals().next().is_some_and(|(_, w)| w == "grep");
    let recursive = cmd.has_any(words!("--recursive --dereference-recursive")) || cmd.short("rR");
    // A searcher's first word is its pattern, unless given with -e or -f.
    let explicit = cmd.short("ef") || cmd.has_any(words!("--regexp --file --from-file"));
    let from = match cmd.positionals().next() {
        Some((i, _)) if searcher && !explicit => i + 1,
        _ => 0,
    };
    let walks = words!("rg ag").has(name) || grep && recursive;
    let mut places: Vec<(PathBuf, bool)> = Vec::new();
    if git_grep {
        places.push((cmd.cwd.to_path_buf(), true));
    }
    let mut operands = 0;
    for (i, word) in cmd.args.iter().enumerate().skip(from) {
        if is_option(word) || cmd.hidden(i) && word != "{}" {
            continue;
        }
        operands += 1;
        if word == "{}" && cmd.fed("find -exec") {
            let roots = match out.walked.is_empty() {
                true => vec![cmd.cwd.to_path_buf()],
                false => out.walked.clone(),
            };
            places.extend(roots.into_iter().map(|r| (r, true)));
        } else if cmd.dynamic(i) {
            let dir = glob_dir(word);
            // A wildcard before a `/` reaches into the directories it matches.
            let wild = word.find(['*', '?', '[', '{']).unwrap_or(word.len());
            let deep = word.get(wild..).unwrap_or_default().contains('/');
            if deep || recursive || may_name_state(word) {
                places.push((cmd.resolve(out, dir), deep || recursive));
            }
        } else if walks || recursive {
            places.push((cmd.resolve(out, word), true));
        }
    }
    if walks && operands == 0 {
        places.push((cmd.cwd.to_path_buf(), true));
    }
    for (dir, deep) in places {
        match state_in(&dir, deep) {
            Found::Nothing => {}
            Found::State(file) => {
                out.secret(format!("{name} reads terraform state: {}", file.display()));
                out.read(file);
                return;
            }
            Found::TooMany => {
                out.secret(format!(
                    "{name} reads below {}, too large to look through for terraform state",
                    dir.display()
                ));
                return;
            }
        }
    }
}
