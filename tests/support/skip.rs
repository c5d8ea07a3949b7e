//! The one way a test says it cannot run here. It names the test (its thread's name), says why
//! on stderr past the harness's capture (`SKIPPED <test>: <why>`), and the test returns having
//! checked nothing. Under CI (`CI` set) `.ci/run` has installed what the suite needs, so a
//! lack it provides is a failure instead ([`Ci::Fails`]); only what no CI run promises (root,
//! this host's name, the store the suite runs on, a program the README calls optional) may
//! be skipped there too ([`Ci::Skips`]).

use std::io::Write;
use std::path::PathBuf;

/// What a lack means under CI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ci {
    /// `.ci/run` provides it: under `CI` the test fails.
    Fails,
    /// No CI run promises it: skipped under `CI` as well.
    Skips,
}

/// Says why the running test cannot run here; under `CI` with [`Ci::Fails`], fails it.
#[track_caller]
pub fn skip(why: &str, ci: Ci) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    assert!(
        ci == Ci::Skips || std::env::var_os("CI").is_none(),
        "{test}: {why}; under CI nothing may be skipped (.ci/run installs what the tests need)"
    );
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// The program `name` on PATH, or `None` after [`skip`].
#[track_caller]
pub fn program(name: &str, ci: Ci) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file());
    if found.is_none() {
        skip(&format!("{name} is not on PATH"), ci);
    }
    found
}
