//! Project rules over the source tree: headers, size, stdout hygiene, no unwrap outside
//! tests, no leftovers, one place that builds processes.

use std::path::Path;

use crate::cli::walk;

/// Files allowed past 400 lines, with the reason.
const LONG_FILES: &[(&str, &str)] = &[];

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
