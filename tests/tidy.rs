//! Project rules over the source tree: headers that name one responsibility, size,
//! stdout hygiene, no unwrap outside tests, no leftovers, one place that builds processes,
//! the layers, and the architecture map's paths.

use std::path::Path;

use crate::cli::walk;

/// Past this many lines a file must be a catalogue or a table listed in `CATALOGUES`: the
/// backstop behind the responsibility rule (ARCHITECTURE.md, "One responsibility per file"),
/// not a target to split towards.
const BACKSTOP: usize = 700;

/// Files allowed past `BACKSTOP` lines (path below `src`), with the reason: catalogues and
/// tables, one entry after another, that a split would only scatter.
const CATALOGUES: &[(&str, &str)] = &[];

/// The most words the lead of a `//!` header may have: the words before its first colon,
/// semicolon or full stop, parentheses aside (a code span is one word). The lead names the
/// file's one responsibility; what follows describes it.
const LEAD_WORDS: usize = 20;

/// The lead of a `//!` header (see `LEAD_WORDS`): its words outside parentheses, a code
/// span as one, up to the first colon or semicolon, or the full stop that ends a sentence.
fn lead(header: &str) -> Vec<String> {
    let (mut depth, mut code) = (0usize, false);
    let mut top = String::new();
    let chars: Vec<char> = header.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '`' => {
                code = !code;
                if depth == 0 {
                    top.push('`');
                }
            }
            _ if code && depth == 0 && !c.is_whitespace() => top.push(c),
            _ if code => {}
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ':' | ';' if depth == 0 => break,
            '.' if depth == 0 && chars.get(i + 1).is_none_or(|n| n.is_whitespace()) => break,
            _ if depth == 0 => top.push(c),
            _ => {}
        }
    }
    top.split_whitespace()
        .filter(|w| w.chars().any(|c| c.is_alphanumeric() || c == '`'))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_header_lead_counts_the_words_before_the_first_stop() {
    assert_eq!(lead("Running a prompt: one thread per prompt."), ["Running", "a", "prompt"]);
    assert_eq!(lead("The `a: b` reader (see c.d; e). More."), ["The", "`a:b`", "reader"]);
    assert_eq!(lead("`iac-code mcp`: its servers"), ["`iac-codemcp`"]);
    assert_eq!(lead("Terms of v1.2 and more; then"), ["Terms", "of", "v1.2", "and", "more"]);
    assert!(lead(": a list").is_empty());
}

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
        let header: Vec<&str> =
            text.lines().map_while(|l| l.strip_prefix("//!")).map(str::trim).collect();
        let lead = lead(&header.join(" "));
        if lead.is_empty() || lead.len() > LEAD_WORDS {
            problems.push(format!(
                "{rel}: the //! header must open by naming the file's one responsibility in at \
                 most {LEAD_WORDS} words before its first colon, semicolon or full stop \
                 (it has {})",
                lead.len()
            ));
        }
        if header.join(" ").to_lowercase().contains("and also") {
            problems.push(format!("{rel}: the //! header joins responsibilities ('and also')"));
        }
        let lines = text.lines().count();
        if lines > BACKSTOP && !CATALOGUES.iter().any(|(f, _)| *f == rel) {
            problems.push(format!(
                "{rel}: {lines} lines, past the backstop of {BACKSTOP}: split it by \
                 responsibility, or list it in CATALOGUES with the reason"
            ));
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
    for (file, _) in CATALOGUES {
        let lines = std::fs::read_to_string(Path::new(root).join(file))
            .map_or(0, |text| text.lines().count());
        if lines <= BACKSTOP {
            problems.push(format!(
                "CATALOGUES lists {file}, which is gone or not past {BACKSTOP} lines: take it off"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// clippy's `too-many-lines-threshold` (clippy.toml), with `too_many_lines` on in Cargo.toml
/// so that `-D warnings` enforces it.
const FUNCTION_LINES: usize = 100;

/// The functions allowed past `FUNCTION_LINES`, as file and function name. Each carries
/// `#[expect(clippy::too_many_lines, reason = "…")]`: the reason lives there, beside the
/// code; one that shrinks below the threshold fails clippy (the expectation goes
/// unfulfilled) until its attribute and its entry go.
const LONG_FUNCTIONS: &[(&str, &str)] = &[
    ("benches/http.rs", "load"),
    ("src/acp/convert.rs", "update_of"),
    ("src/child/supervisor/process.rs", "run"),
    ("src/commands/config.rs", "run_inner"),
    ("src/commands/doctor.rs", "probe"),
    ("src/commands/mcp.rs", "run_inner"),
    ("src/infra/git.rs", "subcommand"),
    ("src/infra/kube.rs", "kubectl"),
    ("src/provider/anthropic/wire.rs", "request_body"),
    ("tests/redact.rs", "no_marker_reaches_the_model_the_journal_the_export_or_the_log"),
    ("tests/scripts.rs", "config_writes_a_settings_file_that_scripts_then_use"),
    ("tests/support/fake_llm/anthropic.rs", "write_events"),
];

#[test]
fn long_functions_are_the_named_exceptions_and_give_a_reason() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap();
    let lint = concat!("clippy::", "too_many_lines");
    assert!(
        read("Cargo.toml").lines().any(|l| l.replace(' ', "") == "too_many_lines=\"warn\""),
        "Cargo.toml's [lints.clippy] must turn too_many_lines on"
    );
    assert!(
        read("clippy.toml")
            .lines()
            .any(|l| l.replace(' ', "") == format!("too-many-lines-threshold={FUNCTION_LINES}")),
        "clippy.toml must set too-many-lines-threshold = {FUNCTION_LINES}"
    );
    let function =
        regex::Regex::new(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?fn\s+(\w+)").unwrap();
    let (mut found, mut problems) = (Vec::new(), Vec::new());
    for dir in ["src", "tests", "benches"] {
        for file in walk(&root.join(dir)) {
            let rel = file.strip_prefix(root).unwrap().display().to_string();
            if rel == "tests/tidy.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            let lines: Vec<&str> = text.lines().map(str::trim).collect();
            for (n, line) in lines.iter().enumerate() {
                if !line.contains(lint) || line.starts_with("//") {
                    continue;
                }
                // The whole attribute, which rustfmt may spread over lines.
                let start = (n.saturating_sub(2)..=n).rev().find(|&i| lines[i].starts_with("#"));
                let end = (n..lines.len().min(n + 4)).find(|&i| lines[i].ends_with(")]"));
                let (Some(start), Some(end)) = (start, end) else {
                    problems.push(format!("{rel}:{}: {lint} outside an attribute", n + 1));
                    continue;
                };
                let attribute = lines[start..=end].join(" ");
                if !attribute.starts_with("#[expect(") {
                    problems.push(format!(
                        "{rel}:{}: {lint} is waived only by #[expect(…, reason = \"…\")] on \
                         the function (not allow, not for a whole module)",
                        n + 1
                    ));
                } else if !attribute.contains("reason = \"") {
                    problems.push(format!("{rel}:{}: the expectation gives no reason", n + 1));
                }
                match lines[end + 1..].iter().take(4).find_map(|l| function.captures(l)) {
                    Some(name) => found.push((rel.clone(), name[1].to_string())),
                    None => problems.push(format!("{rel}:{}: {lint} on no function", n + 1)),
                }
            }
        }
    }
    for (file, name) in &found {
        if !LONG_FUNCTIONS.contains(&(file.as_str(), name.as_str())) {
            problems.push(format!(
                "{file}: {name} is past {FUNCTION_LINES} lines and not in LONG_FUNCTIONS"
            ));
        }
    }
    for (file, name) in LONG_FUNCTIONS {
        if !found.iter().any(|(f, n)| f == file && n == name) {
            problems.push(format!(
                "LONG_FUNCTIONS lists {file}: {name}, which no longer expects {lint}: take it off"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Unit tests out of their file, with the reason.
const TESTS_ELSEWHERE: &[(&str, &str)] = &[];

/// A file and its unit tests together up to this many lines keep the tests inside (past it
/// they read better beside it); the backstop for a file alone is `BACKSTOP`.
const INLINE_TESTS_UP_TO: usize = 400;

/// One layout for unit tests: `#[cfg(test)] mod tests { … }` at the bottom of the file; only
/// where that would pass `INLINE_TESTS_UP_TO` lines, the same module in a file of its own beside it:
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
            if together <= INLINE_TESTS_UP_TO {
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
    &["gate"],
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
    ("tui", &["acp", "session", "agent", "transport", "gate", "tools", "provider", "cli"]),
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
    // The gate reaches the session through its `Host` trait and a person through an
    // `Asker`: never the turn, the session or the wire.
    ("gate", &["agent", "acp", "session", "transport"]),
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

/// Where a path the architecture map names starts: the checkout's own top-level entries.
/// Every backticked span of ARCHITECTURE.md that starts with one is a path, and must exist.
const MAP_ROOTS: &[&str] = &[
    "src/",
    "tests/",
    "benches/",
    "fuzz/",
    "man/",
    "deploy/",
    "interop/",
    "link/",
    ".ci/",
    "Cargo.toml",
    "README.md",
    "ARCHITECTURE.md",
    "build.rs",
    "clippy.toml",
    "install.sh",
];

/// The longest the map may grow: past it, details belong in the `//!` headers.
const MAP_LINES: usize = 450;

#[test]
fn the_architecture_map_names_paths_that_exist_and_the_layers_tidy_enforces() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut problems = Vec::new();
    let mut named = 0;
    for (n, line) in map.lines().enumerate() {
        // The code spans of the line: every other piece between backticks.
        for path in line.split('`').skip(1).step_by(2) {
            if path.is_empty() || path.contains(char::is_whitespace) {
                continue;
            }
            let rooted =
                MAP_ROOTS.iter().any(|r| path.starts_with(r) || r.strip_suffix('/') == Some(path));
            if !rooted {
                if path.ends_with(".rs") {
                    problems.push(format!(
                        "ARCHITECTURE.md:{}: `{path}`: write a path from the checkout's root",
                        n + 1
                    ));
                }
                continue;
            }
            named += 1;
            if !root.join(path).exists() {
                problems.push(format!("ARCHITECTURE.md:{}: `{path}` does not exist", n + 1));
            }
        }
    }
    assert!(named > 40, "the map names {named} paths: is it still a map of the code?");
    let lines = map.lines().count();
    if lines > MAP_LINES {
        problems.push(format!("ARCHITECTURE.md: {lines} lines, past {MAP_LINES}"));
    }
    // The diagram of the layers (the fenced block of the "Layers" section, top layer
    // first, each line its number and its modules) is LAYERS.
    let section = map.split("\n## Layers").nth(1).and_then(|s| s.split("\n## ").next());
    let block = section.and_then(|s| s.split("```").nth(1)).unwrap_or("");
    let mut drawn: Vec<(usize, Vec<&str>)> = block
        .lines()
        .skip(1)
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let number = words.next()?.parse().ok()?;
            Some((number, words.collect()))
        })
        .collect();
    drawn.sort();
    let want: Vec<(usize, Vec<&str>)> =
        LAYERS.iter().enumerate().map(|(i, layer)| (i, layer.to_vec())).collect();
    if drawn != want {
        problems.push(format!(
            "ARCHITECTURE.md's layer diagram is not LAYERS:\n  drawn {drawn:?}\n  LAYERS {want:?}"
        ));
    }
    // Each room of the map ("### " headings naming `src/<module>/` or `src/<module>.rs`)
    // says what it must not import: the names on its "**Must not import:**" line are its
    // FORBIDDEN entry (none for a room without one), and every module has a room.
    let room = regex::Regex::new(r"`src/([a-z_]+)(?:/|\.rs)`").unwrap();
    let name = regex::Regex::new(r"`([a-z_]+)`").unwrap();
    let mut roomed = Vec::new();
    for section in map.split("\n### ").skip(1) {
        let heading = section.lines().next().unwrap_or("");
        let rule = section.lines().find(|l| l.starts_with("**Must not import:**")).unwrap_or("");
        let mut said: Vec<&str> =
            name.captures_iter(rule).map(|c| c.get(1).unwrap().as_str()).collect();
        said.sort_unstable();
        for module in room.captures_iter(heading).map(|c| c.get(1).unwrap().as_str()) {
            roomed.push(module);
            let mut want: Vec<&str> = FORBIDDEN
                .iter()
                .find(|(m, _)| *m == module)
                .map(|(_, banned)| banned.to_vec())
                .unwrap_or_default();
            want.sort_unstable();
            if rule.is_empty() {
                problems.push(format!(
                    "ARCHITECTURE.md: the room of {module} has no \"**Must not import:**\" line"
                ));
            } else if said != want {
                problems.push(format!(
                    "ARCHITECTURE.md: the room of {module} must not import {said:?}, FORBIDDEN says {want:?}"
                ));
            }
        }
    }
    for module in LAYERS.iter().flat_map(|layer| layer.iter()) {
        if !roomed.contains(module) {
            problems.push(format!("ARCHITECTURE.md: no room names src/{module}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
