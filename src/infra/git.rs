//! git: listing subcommands read, the network never does, history rewrites and discarded
//! work destroy. `-c` keys that name programs and unknown subcommands (aliases) are opaque.
//! Knows no other program.

use std::path::Path;

use super::judge::{Cmd, Out};
use super::path::exists;
use super::word::{Words, is_option, words};
use super::{PathUse, Tier};

/// Leading options that stand alone.
const FLAGS: Words = words!(
    "--no-pager -p --paginate -P --bare --no-replace-objects --literal-pathspecs \
    --glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-optional-locks --version --help -h \
    --html-path --man-path --info-path --no-lazy-fetch --no-advice"
);

/// Subcommands that only read (a few options aside).
const READS: Words = words!(
    "status diff log show rev-parse ls-files ls-tree blame annotate shortlog \
    describe cat-file grep diff-tree diff-files diff-index merge-base for-each-ref show-ref \
    rev-list name-rev count-objects check-ignore check-attr var whatchanged range-diff cherry \
    show-branch version help verify-commit verify-tag fsck check-ref-format"
);

/// Subcommands that change the repository or the work tree, and can be undone.
const CHANGES: Words = words!(
    "add commit checkout switch restore merge rebase cherry-pick revert mv rm am \
    apply init bisect gc prune update-ref update-index symbolic-ref sparse-checkout format-patch \
    repack maintenance replace mergetool lfs pack-refs read-tree write-tree commit-tree \
    hash-object citool stage"
);

/// `git branch` options that change branches.
const BRANCH_CHANGES: Words =
    words!("--move --copy --set-upstream-to --unset-upstream --edit-description --force --track");

/// Judges one git command; always known.
pub(super) fn judge(cmd: &Cmd, out: &mut Out) -> bool {
    let mut dir = cmd.cwd.to_path_buf();
    let mut i = 0;
    while let Some(arg) = cmd.args.get(i).filter(|a| is_option(a)) {
        let value = cmd.args.get(i + 1).map_or("", String::as_str);
        i += match arg.as_str() {
            "-C" | "--git-dir" | "--work-tree" if cmd.hidden(i + 1) => {
                out.raise(Tier::Mutate, format!("git works in a hidden directory: {value}"));
                2
            }
            "-C" => {
                dir = cmd.resolve(out, value);
                2
            }
            "--git-dir" | "--work-tree" => {
                let path = cmd.resolve(out, value);
                out.runs(path.clone());
                out.read(path);
                2
            }
            a if a.starts_with("--git-dir=") || a.starts_with("--work-tree=") => {
                let value = a.split_once('=').map_or("", |(_, v)| v);
                if cmd.hidden(i) {
                    out.raise(Tier::Mutate, format!("git works in a hidden directory: {value}"));
                } else {
                    let path = cmd.resolve(out, value);
                    out.runs(path.clone());
                    out.read(path);
                }
                1
            }
            "-c" | "--config-env" => {
                if !safe_key(value) {
                    out.opaque(format!("git -c {value} may run a program"));
                }
                2
            }
            "--namespace" | "--super-prefix" => 2,
            a if a.starts_with("--exec-path=") || a.starts_with("--config-env=") => {
                out.opaque(format!("git {a} may run a program"));
                1
            }
            a if a.contains('=') || FLAGS.has(a) => 1,
            a => {
                out.raise(Tier::Mutate, format!("unknown git option: {a}"));
                1
            }
        };
    }
    if dir.as_path() != cmd.cwd {
        out.read(dir.clone());
    }
    repository(&dir, out);
    let Some(sub) = cmd.args.get(i) else { return true };
    if cmd.dynamic(i) {
        out.hidden_sub(format!("the git subcommand is hidden: {sub}"));
        return true;
    }
    let rest = Cmd { cwd: &dir, ..cmd.after(i) };
    out.prefix(&["git", sub]);
    subcommand(sub, &rest, out);
    true
}

/// Judges the subcommand `sub` with its words `rest`, in the repository at `dir`.
#[expect(
    clippy::too_many_lines,
    reason = "one arm per git subcommand: the table of what each does"
)]
fn subcommand(sub: &str, rest: &Cmd, out: &mut Out) {
    let next = rest.positionals().next().map_or("", |(_, w)| w);
    let positionals = rest.positionals().count();
    let change = format!("git {sub} changes the repository");
    match sub {
        _ if READS.has(sub) => {
            if let Some(file) = rest.value("--output") {
                out.write_file(rest.resolve(out, file), format!("git {sub} writes {file}"));
            }
            if sub == "grep" && (rest.has("--open-files-in-pager") || rest.short("O")) {
                out.raise(Tier::Mutate, "git grep -O runs a pager program");
            }
            out.operands(rest, 0, false);
        }
        "branch" => {
            let delete = rest.short("d") || rest.has("--delete");
            if rest.short("D") || delete && (rest.short("f") || rest.has("--force")) {
                out.raise(Tier::Destroy, "git branch -D deletes an unmerged branch");
            } else if delete || rest.short("mMcCuf") || rest.has_any(BRANCH_CHANGES) {
                out.raise(Tier::Mutate, "git branch changes branches");
            } else if positionals > 0 && !listing(rest) {
                out.raise(Tier::Mutate, "git branch creates a branch");
            }
        }
        "tag" => {
            let changing = rest.short("dfasuFm")
                || rest.has_any(words!("--delete --force --annotate --sign --message --file"));
            if changing || positionals > 0 && !listing(rest) {
                out.raise(Tier::Mutate, "git tag changes tags");
            }
        }
        "stash" => match next {
            "list" | "show" => {}
            "drop" | "clear" => {
                out.raise(Tier::Destroy, format!("git stash {next} discards stashed changes"))
            }
            _ => out.raise(Tier::Mutate, change),
        },
        "remote" => {
            out.prefix(&["git", "remote", next]);
            if !matches!(next, "" | "show" | "get-url") {
                out.raise(Tier::Mutate, format!("git remote {next} changes the remotes"));
            }
        }
        "config" => {
            let reads = words!("--get --get-all --get-regexp --list -l --get-urlmatch --get-color");
            let writes = words!(
                "--unset --unset-all --add --replace-all --edit -e --remove-section \
                --rename-section"
            );
            let read = matches!(next, "get" | "list")
                || rest.has_any(reads)
                || positionals == 1 && !rest.has_any(writes);
            if !read {
                config(rest, out);
            }
        }
        "worktree" | "notes" | "submodule" | "reflog" => {
            let read = match sub {
                "worktree" => next == "list",
                "submodule" => matches!(next, "" | "status" | "summary"),
                _ => matches!(next, "" | "list" | "show" | "exists"),
            };
            let force = rest.has("--force") || rest.short("f");
            if read {
            } else if next == "foreach" {
                out.opaque("git submodule foreach runs a command");
            } else if matches!(next, "remove" | "deinit") && force {
                out.raise(Tier::Destroy, format!("git {sub} {next} --force discards a work tree"));
            } else if sub == "reflog" && matches!(next, "expire" | "delete") {
                out.raise(
                    Tier::Destroy,
                    format!("git reflog {next} drops what could be recovered"),
                );
            } else {
                out.raise(Tier::Mutate, change);
            }
        }
        "archive" | "init" if remote_program(sub, rest, out) => {}
        "archive" => match rest.value("--output").or_else(|| rest.value("-o")) {
            Some(file) => {
                out.raise(Tier::Mutate, format!("git archive writes {file}"));
                out.write(rest.resolve(out, file));
            }
            None if rest.has("--remote") => {
                out.raise(Tier::Mutate, "git archive --remote talks to a remote")
            }
            None => {}
        },
        "clean" if rest.short("n") || rest.has("--dry-run") => {}
        "clean" if rest.short("f") || rest.has("--force") => {
            out.raise(Tier::Destroy, "git clean -f deletes untracked files")
        }
        "reset" if rest.has("--hard") => {
            out.raise(Tier::Destroy, "git reset --hard discards uncommitted changes")
        }
        "push" => push(rest, out),
        _ if discards(sub, rest) => {
            out.raise(Tier::Destroy, format!("git {sub} discards uncommitted work or history"))
        }
        "rebase" if rest.short("x") || rest.has("--exec") => {
            out.opaque("git rebase --exec runs a command")
        }
        "bisect" if next == "run" => {
            if let Some((i, _)) = rest.positionals().nth(1) {
                super::wrappers::payload(rest, i, out);
            }
            out.raise(Tier::Mutate, "git bisect run runs a command");
            out.no_prefix();
        }
        "fetch" | "pull" | "clone" | "ls-remote" => {
            out.raise(Tier::Mutate, format!("git {sub} talks to a remote"));
            let _ = remote_program(sub, rest, out);
            if sub == "clone"
                && let Some((i, _)) = rest.positionals().nth(1)
            {
                out.word(rest, i, PathUse::Write);
            }
        }
        "filter-branch" | "filter-repo" => {
            out.raise(Tier::Destroy, format!("git {sub} rewrites history"))
        }
        "clean" | "reset" => out.raise(Tier::Mutate, change),
        _ if CHANGES.has(sub) => out.raise(Tier::Mutate, change),
        _ => out.opaque(format!("git {sub}: an unknown subcommand, maybe an alias")),
    }
}

/// Whether `git branch`/`git tag` only lists (its words are patterns).
fn listing(rest: &Cmd) -> bool {
    rest.has_any(words!(
        "--list -l -a --all -r --remotes --contains --no-contains --merged --no-merged --points-at \
            --show-current -v -vv -n"
    ))
}

/// `git push`: forced, deleting and mirroring pushes destroy remote history.
fn push(rest: &Cmd, out: &mut Out) {
    let _ = remote_program("push", rest, out);
    let refspecs: Vec<&str> = rest.positionals().skip(1).map(|(_, w)| w).collect();
    if rest.args.iter().any(|a| a.starts_with("--force"))
        || rest.short("f")
        || refspecs.iter().any(|w| w.starts_with('+'))
    {
        out.raise(Tier::Destroy, "git push --force rewrites remote history");
    } else if rest.has_any(words!("--delete --mirror --prune"))
        || rest.short("d")
        || refspecs.iter().any(|w| w.starts_with(':'))
    {
        out.raise(Tier::Destroy, "git push --delete deletes remote branches");
    } else {
        out.raise(Tier::Mutate, "git push talks to a remote");
    }
}

/// Whether a `-c key=value` setting cannot make git run a program.
fn safe_key(setting: &str) -> bool {
    let key = setting.split('=').next().unwrap_or("").to_ascii_lowercase();
    let prefixes = ["color.", "advice.", "log.", "i18n.", "user.", "format.pretty"];
    let exact = [
        "core.quotepath",
        "core.abbrev",
        "diff.renames",
        "diff.noprefix",
        "init.defaultbranch",
        "safe.directory",
        "pull.rebase",
        "merge.conflictstyle",
        "commit.gpgsign",
        "protocol.version",
        "core.autocrlf",
        "core.safecrlf",
        "column.ui",
        "status.short",
        "status.branch",
    ];
    prefixes.iter().any(|p| key.starts_with(p)) || exact.contains(&key.as_str())
}

/// The `.git` git reads its configuration (and hooks) from: the one of the directory it runs
/// in, and the nearest one above it (a repository's subdirectory uses the repository's).
fn repository(dir: &Path, out: &mut Out) {
    out.runs(dir.join(".git"));
    if let Some(git) = dir.ancestors().map(|d| d.join(".git")).find(|g| g.exists()) {
        out.runs(git);
    }
}

/// Subcommands that throw away work: checkout or restore of paths (or forced), `switch -f`,
/// `rm -f`, `update-ref -d`, `gc --prune=now`, `prune`.
fn discards(sub: &str, rest: &Cmd) -> bool {
    let force = rest.short("f") || rest.has("--force");
    match sub {
        "checkout" => {
            let paths = rest.args.iter().any(|a| a == "--")
                || rest.positionals().any(|(_, w)| w == "." || exists(rest.cwd, w));
            force || paths && !rest.short("bB") && !rest.has("--orphan")
        }
        "restore" => {
            let staged = rest.short("S") || rest.has("--staged");
            !staged || rest.short("W") || rest.has("--worktree")
        }
        "switch" => force || rest.has("--discard-changes"),
        "rm" => force && !rest.has("--cached"),
        "update-ref" => rest.short("d") || rest.has("--stdin"),
        "gc" => rest.value("--prune").is_some_and(|v| v != "2.weeks.ago"),
        "prune" => !rest.short("n") && !rest.has("--dry-run"),
        _ => false,
    }
}

/// Options of the network subcommands that run a program (`--upload-pack`, `--receive-pack`,
/// `--exec`, `clone -u`), copy hooks (`--template`) or set configuration that may.
fn remote_program(sub: &str, rest: &Cmd, out: &mut Out) -> bool {
    let options = words!("--upload-pack --receive-pack --exec --template");
    let runs = rest.args.iter().any(|a| options.has(a.split('=').next().unwrap_or("")))
        || sub == "clone" && (rest.short("u") || risky_config(rest));
    if runs {
        out.opaque(format!("git {sub} runs a program its options name"));
    }
    runs
}

/// Whether `clone -c key=value` sets a key that may run a program.
fn risky_config(rest: &Cmd) -> bool {
    rest.args.windows(2).any(|w| matches!(w[0].as_str(), "-c" | "--config") && !safe_key(&w[1]))
        || rest.args.iter().any(|a| a.strip_prefix("--config=").is_some_and(|v| !safe_key(v)))
}

/// `git config` that sets a value: the file it writes is recorded, and "always" is not offered
/// (a key such as core.fsmonitor or alias.* makes later git commands run a program).
fn config(rest: &Cmd, out: &mut Out) {
    out.raise(Tier::Mutate, "git config changes the configuration");
    out.no_prefix();
    let file = match rest.value("--file").or_else(|| rest.value("-f")) {
        Some(file) => rest.resolve(out, file),
        None if rest.has("--global") => match out.home {
            Some(home) => Path::new(home).join(".gitconfig"),
            None => return out.raise(Tier::Mutate, "git config writes an unknown home"),
        },
        None if rest.has("--system") => Path::new("/etc/gitconfig").to_path_buf(),
        None => rest.cwd.join(".git").join("config"),
    };
    out.write(file);
}
