//! Programs written as paths: a relative one, or one inside the project or a temporary
//! directory, is a file the model may have written (its code is the project's); an absolute
//! one elsewhere that is a symbolic link is named by what it points to (a link to `sh` is
//! `sh`). One `symlink_metadata` call, and a `canonicalize` for links.

use std::path::{Path, PathBuf};

use super::path::{basename, resolve};
use super::word::{Words, words};

/// Where a command's program comes from.
pub(super) enum Program {
    /// A bare name (found on PATH), or a path whose basename says what it is.
    Plain,
    /// A file of the project's (or written as a relative path): its absolute path.
    Local(PathBuf),
    /// A link elsewhere: the basename of its target.
    Linked(String),
}

/// Directories anyone may write to: a program there is as unknown as the project's own.
const SCRATCH: &[&str] = &["/tmp/", "/var/tmp/", "/dev/shm/"];

/// Programs that act as the name they are called by (`/bin/ls` → busybox on Alpine).
const MULTI_CALL: Words = words!("busybox toybox coreutils uutils");

/// Where `program` (argv[0] as written) comes from, run in `cwd` in the project `root`.
pub(super) fn locate(program: &str, cwd: &Path, root: &Path, home: Option<&str>) -> Program {
    if !program.contains('/') {
        return Program::Plain;
    }
    let Some(path) = resolve(program, cwd, home) else {
        return Program::Local(cwd.join(program));
    };
    let relative = !program.starts_with('/') && !program.starts_with('~');
    let scratch = SCRATCH.iter().any(|s| program.starts_with(s));
    if relative || scratch || path.starts_with(root) || path.starts_with(cwd) {
        return Program::Local(path);
    }
    linked(&path, basename(program), root)
}

/// A program outside the project at `path`, written with the basename `written`: when it is
/// a symbolic link, what it points to.
pub(super) fn linked(path: &Path, written: &str, root: &Path) -> Program {
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let Some(real) = link.then(|| std::fs::canonicalize(path).ok()).flatten() else {
        return Program::Plain;
    };
    let Some(target) = real.file_name().and_then(|n| n.to_str()) else {
        return Program::Plain;
    };
    if alias(written, target) || MULTI_CALL.iter().any(|m| m == target) {
        return Program::Plain;
    }
    if SCRATCH.iter().any(|s| real.starts_with(s)) || real.starts_with(root) {
        return Program::Local(real);
    }
    Program::Linked(target.to_string())
}

/// Whether a link's target is the same program, versioned (`python3` → `python3.12`,
/// `which` → `which.debianutils`, `gcc` → `gcc-12`).
fn alias(written: &str, target: &str) -> bool {
    let Some(rest) = target.strip_prefix(written) else { return false };
    let bytes = rest.as_bytes();
    match bytes.first() {
        None => true,
        Some(b'.') => true,
        Some(b) if b.is_ascii_digit() => true,
        Some(b'-') => bytes.get(1).is_some_and(u8::is_ascii_digit),
        _ => false,
    }
}

/// Wrappers and shells the parser peels by their name.
const PEELED: Words = words!(
    "sh bash zsh dash ksh ash mksh env command exec nohup time timeout nice \
    ionice stdbuf sudo doas xargs"
);

/// The first word of `src` that names a wrapper or a shell of the project's (`./bin/sh -c …`,
/// `tools/nohup ls`): the parser peels those by name, so what really runs would not be
/// judged. Only worth asking when something was peeled.
pub(super) fn local_wrapper<'a>(src: &'a str, root: &Path) -> Option<&'a str> {
    let separator = |c: char| c.is_whitespace() || "'\";|&()`{}<>$=".contains(c);
    src.split(separator).filter(|w| w.contains('/')).find(|w| {
        let local = !w.starts_with(['/', '~'])
            || Path::new(w).starts_with(root)
            || SCRATCH.iter().any(|s| w.starts_with(s));
        local && PEELED.has(basename(w))
    })
}
