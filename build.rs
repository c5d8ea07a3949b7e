//! The static release link gathers start-up code: `link/startup.ld` places the functions
//! that start-up and `initialize` run in one section ahead of `.text`, so that they share a
//! few 64 KiB windows of the file (the kernel maps code around each page touched) and idle
//! memory and start-up time stay low. The linker also writes its map beside the binary
//! (`iac-code.map`), which `benches/layout.rs` reads to check and regenerate the script.
//! Other targets and profiles link as usual.
//!
//! It also lists the bundled skills (`src/skills/bundled/<name>/`, every file) for
//! `skills/bundled.rs` to `include_str!`, so a file added there is compiled in without
//! anyone keeping a list.
#![allow(clippy::print_stdout)]

use std::fmt::Write;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=link/startup.ld");
    bundled_skills();
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.ends_with("-linux-musl") && std::env::var("PROFILE").as_deref() == Ok("release") {
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        println!("cargo:rustc-link-arg-bins=-Wl,-T,{dir}/link/startup.ld");
        // OUT_DIR is <target>/<triple>/release/build/<package>-<hash>/out.
        if let Ok(out) = std::env::var("OUT_DIR") {
            println!("cargo:rustc-link-arg-bins=-Wl,-Map={out}/../../../iac-code.map");
        }
    }
}

/// Writes `$OUT_DIR/bundled_skills.rs`: `&[(name, SKILL.md, &[(relative path, text)])]`.
fn bundled_skills() {
    println!("cargo:rerun-if-changed=src/skills/bundled");
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let root = Path::new(&manifest).join("src/skills/bundled");
    let mut code = String::from("&[\n");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&root)
        .map(|entries| {
            entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_dir()).collect()
        })
        .unwrap_or_default();
    names.sort();
    for dir in names {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let skill_md = dir.join("SKILL.md");
        let _ =
            write!(code, "    ({name:?}, include_str!({:?}), &[", skill_md.display().to_string());
        let mut files = Vec::new();
        walk(&dir, &mut files);
        files.sort();
        for file in files {
            let Ok(rel) = file.strip_prefix(&dir) else { continue };
            if rel == Path::new("SKILL.md") {
                continue;
            }
            let rel = rel.display().to_string();
            let _ = write!(code, "({rel:?}, include_str!({:?})), ", file.display().to_string());
        }
        code.push_str("]),\n");
    }
    code.push(']');
    let out = std::env::var("OUT_DIR").unwrap_or_default();
    let _ = std::fs::write(Path::new(&out).join("bundled_skills.rs"), code);
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => walk(&path, out),
            Ok(kind) if kind.is_file() => out.push(path),
            _ => {}
        }
    }
}
