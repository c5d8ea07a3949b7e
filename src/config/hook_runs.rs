//! What a project's hooks run from the project itself: the files their commands name
//! (`./scripts/guard.sh`, `python hooks/fmt.py`, `$CLAUDE_PROJECT_DIR/x.sh`, a `make`
//! target's Makefile), each with its fingerprint, and every file under the directories of
//! those files below the project's root (what `guard.sh` sources, the modules `fmt.py`
//! imports: `hooks/lib.sh`, `hooks/util.py`), each directory kept as an entry of its own
//! (`<dir>/`) so that a file added there is a write to what the hooks run. Approving the
//! project's settings keeps them (`approval::HOOKS`); when one changes or a file is added
//! or removed (a `git pull`, or the model's own write), the project's hooks stop running
//! until they are approved again, and a write there asks like a write to what an approved
//! `.mcp.json` runs. What is under those directories is bounded (`MAX_DIR_ENTRIES`,
//! `MAX_DIR_BYTES`): past it the directory's entry says so (`Fingerprint::OverBounds`),
//! and such hooks are never approved nor run. The project's `.iac-code/policies/` is covered the same
//! way, so an approval holds for exactly the policies it saw (`policy::sources`).
//! `ProjectCheck` keeps what was approved and looks again before each run of the hooks.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use super::approval::{Fingerprint, Runs, fingerprint};

/// How many files one project's hooks may name; past it the rest are not kept (and so
/// cannot be run unseen either: a changed count changes the approval).
const MAX_FILES: usize = 64;

/// Files and directories kept at most under the directories of a project's hook scripts,
/// all together.
pub const MAX_DIR_ENTRIES: usize = 256;

/// Bytes of the files under those directories at most, all together.
pub const MAX_DIR_BYTES: u64 = 8 << 20;

/// The project files that `commands` name, relative to the project's `root` (a real path),
/// with their fingerprints; and every file under their directories below `root`.
pub fn runs_of<'a>(commands: impl IntoIterator<Item = &'a str>, root: &Path) -> Runs {
    let mut runs = Runs::new();
    let mut dirs = BTreeSet::new();
    'commands: for command in commands {
        let script = crate::shell::parse(command);
        for simple in &script.commands {
            let make = simple.argv.first().is_some_and(|p| p == "make" || p.ends_with("/make"));
            let implicit = ["GNUmakefile", "makefile", "Makefile"].into_iter().filter(|_| make);
            let words = simple.argv.iter().map(String::as_str).chain(implicit);
            for word in words {
                let word = word.rsplit_once('=').map_or(word, |(_, value)| value);
                let Some(file) = project_file(word, root) else { continue };
                if runs.len() >= MAX_FILES {
                    break 'commands;
                }
                if let Some(dir) = file.parent().filter(|d| *d != root && d.starts_with(root)) {
                    dirs.insert(dir.to_path_buf());
                }
                let digest = fingerprint(&file);
                runs.insert(file.display().to_string(), digest);
            }
        }
    }
    // The project's policies are part of what its approval covers (`policy::sources`).
    if let Ok(policies) = std::fs::canonicalize(root.join(POLICIES))
        && policies.is_dir()
        && policies.starts_with(root)
    {
        dirs.insert(policies);
    }
    cover(dirs, &mut runs);
    runs
}

/// The project's policy directory below its root, covered whole by the approval.
pub const POLICIES: &str = ".iac-code/policies";

/// What a project's approved hooks run, as it was approved: before each run of them the
/// files are looked at again, and a change (the model's write in this very turn) stops
/// them until approved again.
#[derive(Debug, Clone)]
pub struct ProjectCheck {
    /// The project settings file.
    pub path: PathBuf,
    root: PathBuf,
    commands: Vec<String>,
    approved: Runs,
}

impl ProjectCheck {
    /// The check of the hooks of the project settings file at `path`, in the project
    /// `root`, whose `commands` ran `approved` when they were approved.
    pub(super) fn new(path: &Path, root: &Path, commands: Vec<String>, approved: Runs) -> Self {
        ProjectCheck { path: path.to_path_buf(), root: root.to_path_buf(), commands, approved }
    }

    /// What was approved: the files the hooks run and the project's policies.
    pub fn approved(&self) -> &Runs {
        &self.approved
    }

    /// The files the hooks run that changed, appeared or went since the approval, or why
    /// they cannot be kept; empty: they may run.
    pub fn changed(&self) -> Vec<String> {
        let now = runs_of(self.commands.iter().map(String::as_str), &self.root);
        if let Some(why) = over_bounds(&now) {
            return vec![why];
        }
        let mut changed: Vec<String> = now
            .iter()
            .filter(|(path, digest)| self.approved.get(*path) != Some(*digest))
            .map(|(path, _)| path.clone())
            .collect();
        changed.extend(self.approved.keys().filter(|path| !now.contains_key(*path)).cloned());
        changed
    }
    /// What the approval covers: the files the hooks name and the directories of their
    /// scripts (read-only in the sandbox, so that no unasked command changes them).
    pub fn covered(&self) -> Vec<PathBuf> {
        self.approved.keys().map(|key| PathBuf::from(key.trim_end_matches('/'))).collect()
    }

    /// Why the project's hooks may not run now, if they may not: for the client.
    pub fn withheld(&self) -> Option<String> {
        let changed = self.changed();
        (!changed.is_empty()).then(|| {
            format!(
                "the hooks of {} did not run: {} changed since they were approved; they run \
                 again once approved (iac-code config approve)",
                self.path.display(),
                changed.join(", ")
            )
        })
    }
}

/// Why the hooks that keep `runs` can be neither approved nor run, if they cannot: a
/// covered directory past the bounds.
pub fn over_bounds(runs: &Runs) -> Option<String> {
    runs.iter().find_map(|(path, value)| {
        let Fingerprint::OverBounds(why) = value else { return None };
        Some(format!(
            "{path} holds {why}: too much to keep as what the project's hooks run (at most \
             {MAX_DIR_ENTRIES} files and directories, {} MiB); move what the hooks do not \
             run elsewhere",
            MAX_DIR_BYTES >> 20
        ))
    })
}

/// Keeps every file under `dirs` (a directory inside another is kept with it), with the
/// directories themselves as `<dir>/`.
fn cover(dirs: BTreeSet<PathBuf>, runs: &mut Runs) {
    let mut budget = (MAX_DIR_ENTRIES, MAX_DIR_BYTES);
    let mut covered: Vec<PathBuf> = Vec::new();
    // Sorted: a directory comes before those inside it.
    for dir in dirs {
        if covered.iter().any(|c| dir.starts_with(c)) {
            continue;
        }
        let value = match walk(&dir, runs, &mut budget) {
            Ok(()) => Fingerprint::Directory,
            Err(why) => Fingerprint::OverBounds(why),
        };
        runs.insert(format!("{}/", dir.display()), value);
        covered.push(dir);
    }
}

/// Keeps the files under `dir` in `runs` (links not followed into directories), taking
/// each entry and each file's bytes from `budget`; `Err`: past it, or unreadable.
fn walk(dir: &Path, runs: &mut Runs, budget: &mut (usize, u64)) -> Result<(), String> {
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        let entries = std::fs::read_dir(&at).map_err(|err| format!("{}: {err}", at.display()))?;
        for entry in entries {
            let entry = entry.map_err(|err| format!("{}: {err}", at.display()))?;
            budget.0 = budget
                .0
                .checked_sub(1)
                .ok_or_else(|| format!("more than {MAX_DIR_ENTRIES} files and directories"))?;
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(path);
                continue;
            }
            // A link to a file is read as that file.
            let bytes =
                std::fs::metadata(&path).map_or(0, |m| if m.is_file() { m.len() } else { 0 });
            budget.1 = budget
                .1
                .checked_sub(bytes)
                .ok_or_else(|| format!("more than {} MiB of files", MAX_DIR_BYTES >> 20))?;
            runs.insert(path.display().to_string(), fingerprint(&path));
        }
    }
    Ok(())
}

/// The regular file of the project that `word` names, made real, if it names one.
fn project_file(word: &str, root: &Path) -> Option<PathBuf> {
    let word = ["$CLAUDE_PROJECT_DIR/", "${CLAUDE_PROJECT_DIR}/"]
        .iter()
        .find_map(|prefix| word.strip_prefix(prefix))
        .unwrap_or(word);
    if word.is_empty() || word.starts_with('-') || word.contains('$') {
        return None;
    }
    let named = Path::new(word);
    let joined = if named.is_absolute() { named.to_path_buf() } else { root.join(named) };
    let path: PathBuf = joined.components().filter(|c| *c != Component::CurDir).collect();
    let real = std::fs::canonicalize(&path).ok()?;
    let meta = std::fs::metadata(&real).ok()?;
    (meta.is_file() && real.starts_with(root)).then_some(real)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_files_a_hook_names_are_kept_with_their_fingerprints() {
        let dir = std::env::temp_dir().join(format!("iac-hook-runs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::write(dir.join("scripts/guard.sh"), "exit 0\n").unwrap();
        std::fs::write(dir.join("fmt.py"), "print()\n").unwrap();
        std::fs::write(dir.join("Makefile"), "lint:\n\ttrue\n").unwrap();
        let root = std::fs::canonicalize(&dir).unwrap();
        let commands = [
            "./scripts/guard.sh --strict",
            "python3 fmt.py --config=fmt.py && terraform fmt",
            "make lint",
            "\"$CLAUDE_PROJECT_DIR\"/scripts/guard.sh",
            "cat /etc/hostname missing.sh $HOME/x.sh",
        ];
        let runs = runs_of(commands, &root);
        let names: Vec<&str> = runs.keys().map(String::as_str).collect();
        let want = ["Makefile", "fmt.py", "scripts/", "scripts/guard.sh"];
        let want: Vec<String> = want.iter().map(|f| format!("{}/{f}", root.display())).collect();
        assert_eq!(
            names, want,
            "only files of the project (and the scripts' directory), once each"
        );
        let before = runs_of(commands, &root);
        std::fs::write(dir.join("scripts/guard.sh"), "exit 2\n").unwrap();
        let after = runs_of(commands, &root);
        assert_ne!(before, after, "a changed script changes what was kept");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_file_under_a_scripts_directory_is_kept_within_bounds() {
        let dir = std::env::temp_dir().join(format!("iac-hook-dirs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("hooks/lib")).unwrap();
        std::fs::write(dir.join("hooks/guard.sh"), ". hooks/lib.sh\n").unwrap();
        std::fs::write(dir.join("hooks/lib.sh"), "ok() { :; }\n").unwrap();
        std::fs::write(dir.join("hooks/lib/deep.py"), "x = 1\n").unwrap();
        std::fs::write(dir.join("top.sh"), "exit 0\n").unwrap();
        std::fs::write(dir.join("other.txt"), "not run\n").unwrap();
        let root = std::fs::canonicalize(&dir).unwrap();
        let commands = ["sh hooks/guard.sh", "./top.sh"];
        let runs = runs_of(commands, &root);
        let names: Vec<String> =
            runs.keys().map(|k| k.replace(&*root.to_string_lossy(), "")).collect();
        assert_eq!(
            names,
            ["/hooks/", "/hooks/guard.sh", "/hooks/lib.sh", "/hooks/lib/deep.py", "/top.sh"],
            "the project's root is never a covered directory"
        );
        assert_eq!(runs[&format!("{}/hooks/", root.display())], Fingerprint::Directory);
        assert_eq!(over_bounds(&runs), None);
        std::fs::write(dir.join("hooks/lib/new.sh"), "evil\n").unwrap();
        assert_ne!(runs_of(commands, &root), runs, "a new file changes what was kept");
        // Past the bounds: the directory says so, and that is never approved.
        for n in 0..MAX_DIR_ENTRIES {
            std::fs::write(dir.join(format!("hooks/lib/f{n}")), "").unwrap();
        }
        let over = runs_of(commands, &root);
        let why = over_bounds(&over).expect("over the bounds");
        assert!(why.contains("hooks/ holds more than 256 files and directories"), "{why}");
        std::fs::remove_dir_all(dir.join("hooks/lib")).unwrap();
        std::fs::write(dir.join("hooks/big"), vec![b'x'; MAX_DIR_BYTES as usize + 1]).unwrap();
        let why = over_bounds(&runs_of(commands, &root)).expect("over the bounds");
        assert!(why.contains("more than 8 MiB of files"), "{why}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
