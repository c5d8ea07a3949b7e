//! Project rules over the source tree: headers, size, stdout hygiene, no unwrap outside
//! tests, no leftovers, one place that builds processes.

use std::path::Path;

use crate::cli::walk;

/// Files allowed past 400 lines, with the reason.
const LONG_FILES: &[(&str, &str)] = &[(
    "infra/judge.rs",
    "Cmd and Out: the one vocabulary every program family shares (fields and their methods)",
)];

#[test]
fn source_files_follow_the_house_rules() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut problems = Vec::new();
    for file in walk(Path::new(root)) {
        let rel = file.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        if !text.starts_with("//!") {
            problems.push(format!("{rel}: no //! header"));
        }
        let lines = text.lines().count();
        if lines > 400 && !LONG_FILES.iter().any(|(f, _)| *f == rel) {
            problems.push(format!("{rel}: {lines} lines (limit 400)"));
        }
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in code.lines().enumerate() {
            let line = line.trim_start();
            if line.starts_with("//") {
                continue;
            }
            let at = format!("{rel}:{}", n + 1);
            if (line.contains("println!(") || line.contains("print!(")) && rel != "main.rs" {
                problems.push(format!("{at}: printing to stdout"));
            }
            if line.contains("io::stdout()") && !rel.starts_with("sys/") {
                problems.push(format!("{at}: stdout outside sys/"));
            }
            if line.contains(".unwrap()") {
                problems.push(format!("{at}: unwrap() outside tests"));
            }
            if line.contains("todo!(") || line.contains("dbg!(") || line.contains("unimplemented!(")
            {
                problems.push(format!("{at}: leftover macro"));
            }
            if line.contains("unsafe") && !rel.starts_with("sys/") {
                problems.push(format!("{at}: unsafe outside sys/"));
            }
            // Every process we start must get the secret-free environment.
            if line.contains("Command::new(") && rel != "child/mod.rs" {
                problems.push(format!("{at}: a process built outside child::command"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Unit tests out of their file, with the reason (files the lead is restructuring).
const TESTS_ELSEWHERE: &[(&str, &str)] =
    &[("tools/mod.rs", "catalog_tests.rs: tools/mod.rs is being restructured (issue 36)")];

/// One layout for unit tests: `#[cfg(test)] mod tests { … }` at the bottom of the file; only
/// where that would pass 400 lines, the same module in a file of its own beside it:
/// `#[cfg(test)] #[path = "<stem>_tests.rs"] mod tests;` (for a `mod.rs`, `mod tests;` in
/// the folder's `tests.rs`).
#[test]
fn unit_tests_have_one_layout() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut problems = Vec::new();
    for file in walk(Path::new(root)) {
        let rel = file.strip_prefix(root).unwrap().display().to_string();
        if TESTS_ELSEWHERE.iter().any(|(f, _)| *f == rel) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for (n, line) in lines.iter().enumerate() {
            if *line != "#[cfg(test)]" {
                continue;
            }
            let path = lines.get(n + 1).and_then(|l| l.strip_prefix("#[path = \""));
            let decl = lines.get(n + 1 + usize::from(path.is_some())).copied().unwrap_or("");
            let Some(name) = decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(';')) else {
                continue;
            };
            let at = format!("{rel}:{}", n + 1);
            let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
            let (want_path, want_file) = match stem.as_str() {
                "mod" => (None, "tests.rs".to_string()),
                _ => (Some(format!("{stem}_tests.rs\"]")), format!("{stem}_tests.rs")),
            };
            if name != "tests" || path.map(str::to_string) != want_path {
                problems.push(format!(
                    "{at}: unit tests out of the file are `mod tests;` in {want_file}"
                ));
                continue;
            }
            let tests = file.with_file_name(&want_file);
            let together =
                text.lines().count() + std::fs::read_to_string(&tests).unwrap().lines().count();
            if together <= 400 {
                problems.push(format!(
                    "{at}: {want_file} fits in the file ({together} lines together): `mod tests {{ … }}`"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The layers, from the ground up: a module may import its own layer and the ones below,
/// never one above.
const LAYERS: &[&[&str]] = &[
    &["sys", "sync", "error", "time", "cancel", "text", "shell", "secret", "web"],
    &[
        "config", "jsonrpc", "history", "child", "logging", "infra", "rules", "memory", "sandbox",
        "policy",
    ],
    &["tools", "provider", "mcp", "hooks", "skills"],
    &["permission"],
    &["agent"],
    &["session"],
    &["acp", "transport", "tui"],
    &["cli", "serve", "commands"],
    &["lib", "main", "fuzzing"],
];

/// Imports forbidden whatever the layers say.
const FORBIDDEN: &[(&str, &[&str])] = &[
    ("transport", &["acp", "session", "agent", "cli"]),
    // The terminal client reaches the agent through ACP frames only.
    ("tui", &["acp", "session", "agent", "transport", "permission", "tools", "provider", "cli"]),
    ("agent", &["acp"]),
    ("provider", &["acp"]),
    ("tools", &["acp", "agent", "skills"]),
    ("skills", &["acp", "agent", "session"]),
    ("mcp", &["acp", "agent"]),
    ("hooks", &["agent", "session", "acp"]),
    ("infra", &["config"]),
    ("rules", &["config"]),
    ("sandbox", &["config", "child"]),
    ("policy", &["tools", "agent", "acp", "session", "config"]),
];

/// A file's module path below `src` (`tools/grep.rs` → [tools, grep], `tools/mod.rs` →
/// [tools], `lib.rs` → [lib]).
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> =
        rel.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The file a module path names, or the file of its longest prefix that is one.
fn file_of(src: &Path, path: &[String]) -> Option<std::path::PathBuf> {
    for len in (1..=path.len()).rev() {
        let base = src.join(path[..len].join("/"));
        for candidate in [base.with_extension("rs"), base.join("mod.rs")] {
            if candidate.is_file() {
                return Some(candidate.strip_prefix(src).unwrap().to_path_buf());
            }
        }
    }
    None
}

/// Every path a file imports: `use crate::…` and `use super::…` statements (groups
/// expanded), and `crate::…` paths written inline. Comments and tests are left out.
fn imports(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let statement = regex::Regex::new(r"(?s)\buse\s+(crate|super)::([^;]*);").unwrap();
    let inline = regex::Regex::new(r"\bcrate::([a-z_][a-z0-9_]*(?:::[a-z_][a-z0-9_]*)*)").unwrap();
    let mut out = Vec::new();
    for found in statement.captures_iter(code) {
        let base: Vec<String> = match &found[1] {
            "crate" => Vec::new(),
            _ => module[..module.len().saturating_sub(1)].to_vec(),
        };
        expand(&base, &found[2], &mut out);
    }
    let rest = statement.replace_all(code, "");
    for found in inline.captures_iter(&rest) {
        out.push(found[1].split("::").map(str::to_string).collect());
    }
    out
}

/// Adds the paths of a use tree (`a::b::{c, d::e}`) under `base` to `out`.
fn expand(base: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let mut prefix = base.to_vec();
        prefix.extend(
            tree[..open].split("::").map(str::trim).filter(|s| !s.is_empty()).map(String::from),
        );
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&prefix, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(&prefix, &inner[start..], out);
        return;
    }
    let mut path = base.to_vec();
    let item = tree.split(" as ").next().unwrap_or(tree);
    path.extend(
        item.split("::").map(str::trim).filter(|s| !s.is_empty() && *s != "self").map(String::from),
    );
    if !path.is_empty() {
        out.push(path);
    }
}

#[test]
fn imports_follow_the_layers_and_never_loop() {
    let src = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
    let layer = |module: &str| LAYERS.iter().position(|l| l.contains(&module));
    let mut problems = Vec::new();
    let mut edges = std::collections::BTreeSet::new();
    for file in walk(src) {
        let rel = file.strip_prefix(src).unwrap().to_path_buf();
        let text = std::fs::read_to_string(&file).unwrap();
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap_or("")
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let module = module_of(&rel);
        let own = module[0].as_str();
        let Some(own_layer) = layer(own) else {
            problems.push(format!("{}: module '{own}' has no layer in LAYERS", rel.display()));
            continue;
        };
        for path in imports(&code, &module) {
            let Some(target) = path.first().map(String::as_str) else { continue };
            if target != own {
                match layer(target) {
                    Some(l) if l > own_layer => problems.push(format!(
                        "{}: imports {} from a layer above ({own} is below {target})",
                        rel.display(),
                        path.join("::")
                    )),
                    Some(_) => {}
                    None => continue, // a crate item at the root, or an external name
                }
                if let Some((_, banned)) = FORBIDDEN.iter().find(|(m, _)| *m == own)
                    && banned.contains(&target)
                {
                    problems.push(format!("{}: {own} must not import {target}", rel.display()));
                }
            }
            if let Some(to) = file_of(src, &path) {
                // A module and the files of its own directory (its facade and its parts) are one room.
                let parent = |p: &Path| p.parent().map(Path::to_path_buf);
                let family = parent(&to) == parent(&rel)
                    && (to.ends_with("mod.rs") || rel.ends_with("mod.rs"));
                if to != rel && !family {
                    edges.insert((rel.clone(), to));
                }
            }
        }
    }
    for (from, to) in &edges {
        if from < to && edges.contains(&(to.clone(), from.clone())) {
            problems.push(format!("{} and {} import each other", from.display(), to.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
