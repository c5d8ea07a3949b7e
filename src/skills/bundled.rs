//! Our own skills, compiled in (`src/skills/bundled/<name>/`, every file, listed by
//! `build.rs`), for offline infrastructure work. A bundled skill has no folder until it is
//! loaded; then its files are unpacked into the user's cache
//! (`$XDG_CACHE_HOME/iac-code/bundled-skills/<version>/<name>/`, else `~/.cache/…`) so that
//! the model can read its references and run its scripts like any skill's.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::{Found, Origin, Report, Skill, front};
use crate::sys::own_file;

/// One bundled skill: its name, its SKILL.md, and its other files (relative path, text).
type Bundle = (&'static str, &'static str, &'static [(&'static str, &'static str)]);

const BUNDLED: &[Bundle] = include!(concat!(env!("OUT_DIR"), "/bundled_skills.rs"));

/// The names of the bundled skills.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUNDLED.iter().map(|(name, _, _)| *name)
}

/// The bundled skills, parsed (a flaw in one is reported like any skill's).
pub fn skills() -> Found {
    let mut found = Found::default();
    for (name, text, files) in BUNDLED {
        let (meta, problems) = front::parse(text, name);
        let path = format!("bundled {name}/SKILL.md");
        found
            .reports
            .extend(problems.into_iter().map(|problem| Report { path: path.clone(), problem }));
        if let Some(meta) = meta {
            let files = files.iter().map(|(rel, _)| rel.to_string()).collect();
            found.skills.push(Skill { meta, origin: Origin::Bundled, dir: None, files });
        }
    }
    found
}

/// The cache directory bundled skills are unpacked into.
pub fn cache_root(home: Option<&Path>) -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from).filter(|p| p.is_absolute());
    let base = xdg.or_else(|| home.map(|h| h.join(".cache")))?;
    Some(base.join("iac-code").join("bundled-skills").join(env!("CARGO_PKG_VERSION")))
}

/// Unpacks the bundled skill `name` below `root`; its folder, or why not.
pub fn unpack(name: &str, root: &Path) -> Result<PathBuf, String> {
    let (_, text, files) = BUNDLED
        .iter()
        .find(|(n, _, _)| *n == name)
        .ok_or_else(|| format!("no bundled skill {name}"))?;
    let dir = root.join(name);
    let fail = |err: std::io::Error| {
        format!("cannot unpack the skill {name} into {}: {err}", dir.display())
    };
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).map_err(fail)?;
    // Every directory on the way must be a real one of ours: never write through a link.
    for at in dir.ancestors().take(4) {
        let meta = std::fs::symlink_metadata(at).map_err(fail)?;
        if meta.file_type().is_symlink() {
            return Err(format!(
                "{} is a symbolic link: the skill {name} is not unpacked there",
                at.display()
            ));
        }
    }
    for (rel, content) in std::iter::once(&("SKILL.md", *text)).chain(files.iter()) {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent).map_err(fail)?;
        }
        let executable = rel.starts_with("scripts/");
        write_if_changed(&path, content, if executable { 0o700 } else { 0o600 }).map_err(fail)?;
    }
    Ok(dir)
}

/// Writes `content` to `path` (a new file, renamed into place) unless it holds it already.
fn write_if_changed(path: &Path, content: &str, mode: u32) -> std::io::Result<()> {
    // Never read through a link: one there is replaced by the rename below.
    let held = |mut file: std::fs::File| {
        let mut now = Vec::new();
        file.metadata().is_ok_and(|m| m.is_file())
            && file.read_to_end(&mut now).is_ok()
            && now == content.as_bytes()
    };
    if own_file::options().read(true).open(path).is_ok_and(held) {
        return Ok(());
    }
    // Unique per process and call: two sessions unpacking at once never share a file.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp.{}.{n}", std::process::id()));
    let written = own_file::options()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&tmp)
        .and_then(|mut file| file.write_all(content.as_bytes()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_folder_is_compiled_in_and_unpacks() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/skills/bundled");
        let mut on_disk: Vec<String> = std::fs::read_dir(&src)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        assert_eq!(names().collect::<Vec<_>>(), on_disk);
        let root = std::env::temp_dir().join(format!("iac-bundled-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for name in names() {
            let dir = unpack(name, &root).unwrap();
            let (listed, _) = crate::skills::discover::list_files(&dir);
            let skill = skills().skills.into_iter().find(|s| s.meta.name == name).unwrap();
            assert_eq!(listed, skill.files, "{name}: every file unpacked");
            unpack(name, &root).unwrap(); // again: nothing changed, nothing fails
        }
        std::fs::remove_dir_all(&root).unwrap();
    }
}
