//! What a project's hooks run from the project itself: the files their commands name
//! (`./scripts/guard.sh`, `python hooks/fmt.py`, `$CLAUDE_PROJECT_DIR/x.sh`, a `make`
//! target's Makefile), each with its fingerprint. Approving the project's settings keeps
//! them (`approval::HOOKS`); when one changes (a `git pull`, or the model's own write),
//! the project's hooks stop running until they are approved again, and a write to one
//! asks like a write to what an approved `.mcp.json` runs.

use std::path::{Component, Path, PathBuf};

use super::approval::{Runs, fingerprint};

/// How many files one project's hooks may name; past it the rest are not kept (and so
/// cannot be run unseen either: a changed count changes the approval).
const MAX_FILES: usize = 64;

/// The project files that `commands` name, relative to the project's `root` (a real path),
/// with their fingerprints.
pub fn runs_of<'a>(commands: impl IntoIterator<Item = &'a str>, root: &Path) -> Runs {
    let mut runs = Runs::new();
    for command in commands {
        let script = crate::shell::parse(command);
        for simple in &script.commands {
            let make = simple.argv.first().is_some_and(|p| p == "make" || p.ends_with("/make"));
            let implicit = ["GNUmakefile", "makefile", "Makefile"].into_iter().filter(|_| make);
            let words = simple.argv.iter().map(String::as_str).chain(implicit);
            for word in words {
                let word = word.rsplit_once('=').map_or(word, |(_, value)| value);
                let Some(file) = project_file(word, root) else { continue };
                if runs.len() >= MAX_FILES {
                    return runs;
                }
                let digest = fingerprint(&file);
                runs.insert(file.display().to_string(), digest);
            }
        }
    }
    runs
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
        let want = ["Makefile", "fmt.py", "scripts/guard.sh"].map(|f| root.join(f));
        let want: Vec<String> = want.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(names, want, "only files of the project, once each");
        let before = runs_of(commands, &root);
        std::fs::write(dir.join("scripts/guard.sh"), "exit 2\n").unwrap();
        let after = runs_of(commands, &root);
        assert_ne!(before, after, "a changed script changes what was kept");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
