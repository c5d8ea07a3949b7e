//! git: listing subcommands read, the network never does, history rewrites and discarded
//! work destroy. `-c` keys that name programs and unknown subcommands (aliases) are opaque.
//! Knows no other program.

use super::judge::{Cmd, Out};
use super::word::{is_option, listed};
use super::{PathUse, Tier};

/// Leading options that stand alone.
const FLAGS: &str = "--no-pager -p --paginate -P --bare --no-replace-objects --literal-pathspecs \
    --glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-optional-locks --version --help -h \
    --html-path --man-path --info-path --no-lazy-fetch --no-advice";

/// Subcommands that only read (a few options aside).
const READS: &str = "status diff log show rev-parse ls-files ls-tree blame annotate shortlog \
    describe cat-file grep diff-tree diff-files diff-index merge-base for-each-ref show-ref \
    rev-list name-rev count-objects check-ignore check-attr var whatchanged range-diff cherry \
    show-branch version help verify-commit verify-tag fsck check-ref-format";

/// Subcommands that change the repository or the work tree, and can be undone.
const CHANGES: &str = "add commit checkout switch restore merge rebase cherry-pick revert mv rm am \
    apply init bisect gc prune update-ref update-index symbolic-ref sparse-checkout format-patch \
    repack maintenance replace mergetool lfs pack-refs read-tree write-tree commit-tree \
    hash-object citool stage";

/// `git branch` options that change branches.
const BRANCH_CHANGES: &str =
    "--move --copy --set-upstream-to --unset-upstream --edit-description --force --track";

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
                out.read(cmd.resolve(out, value));
                2
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
            a if a.contains('=') || listed(FLAGS, a) => 1,
            a => {
                out.raise(Tier::Mutate, format!("unknown git option: {a}"));
                1
            }
        };
    }
    if dir.as_path() != cmd.cwd {
        out.read(dir.clone());
    }
    out.runs(dir.join(".git"));
    let Some(sub) = cmd.args.get(i) else { return true };
    if cmd.dynamic(i) {
        out.opaque(format!("the git subcommand is hidden: {sub}"));
        return true;
    }
    let rest = Cmd { cwd: &dir, ..cmd.after(i) };
    out.prefix(&["git", sub]);
    subcommand(sub, &rest, out);
    true
}

/// Judges the subcommand `sub` with its words `rest`, in the repository at `dir`.
fn subcommand(sub: &str, rest: &Cmd, out: &mut Out) {
    let next = rest.positionals().next().map_or("", |(_, w)| w);
    let positionals = rest.positionals().count();
    let change = format!("git {sub} changes the repository");
    match sub {
        _ if listed(READS, sub) => {
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
                || rest.has_any("--delete --force --annotate --sign --message --file");
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
            let reads = "--get --get-all --get-regexp --list -l --get-urlmatch --get-color";
            let writes = "--unset --unset-all --add --replace-all --edit -e --remove-section \
                --rename-section";
            let read = matches!(next, "get" | "list")
                || rest.has_any(reads)
                || positionals == 1 && !rest.has_any(writes);
            if !read {
                out.raise(Tier::Mutate, "git config changes the configuration");
            }
        }
        "worktree" | "notes" | "submodule" | "reflog" => {
            let read = match sub {
                "worktree" => next == "list",
                "submodule" => matches!(next, "" | "status" | "summary"),
                _ => matches!(next, "" | "list" | "show" | "exists"),
            };
            if read {
            } else if next == "foreach" {
                out.opaque("git submodule foreach runs a command");
            } else if next == "remove" && (rest.has("--force") || rest.short("f")) {
                out.raise(Tier::Destroy, "git worktree remove --force discards a work tree");
            } else {
                out.raise(Tier::Mutate, change);
            }
        }
        "archive" => match rest.value("--output").or_else(|| rest.value("-o")) {
            Some(file) => {
                out.write_file(rest.resolve(out, file), format!("git archive writes {file}"))
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
        "fetch" | "pull" | "clone" | "ls-remote" => {
            out.raise(Tier::Mutate, format!("git {sub} talks to a remote"));
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
        _ if listed(CHANGES, sub) => out.raise(Tier::Mutate, change),
        _ => out.opaque(format!("git {sub}: an unknown subcommand, maybe an alias")),
    }
}

/// Whether `git branch`/`git tag` only lists (its words are patterns).
fn listing(rest: &Cmd) -> bool {
    rest.has_any(
        "--list -l -a --all -r --remotes --contains --no-contains --merged --no-merged --points-at \
            --show-current -v -vv -n",
    )
}

/// `git push`: forced, deleting and mirroring pushes destroy remote history.
fn push(rest: &Cmd, out: &mut Out) {
    let refspecs: Vec<&str> = rest.positionals().skip(1).map(|(_, w)| w).collect();
    if rest.args.iter().any(|a| a.starts_with("--force"))
        || rest.short("f")
        || refspecs.iter().any(|w| w.starts_with('+'))
    {
        out.raise(Tier::Destroy, "git push --force rewrites remote history");
    } else if rest.has_any("--delete --mirror --prune")
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
