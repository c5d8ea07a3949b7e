//! The builds a bench measures: the bench build, and the static musl release binary users
//! get (`cargo build --release --target x86_64-unknown-linux-musl`, or
//! `./install.sh --static`) when it has been built. `BENCH_BUILD=static` (or `bench`)
//! measures only one of them, e.g. for profiling.

use std::path::{Path, PathBuf};

/// Each build's label and binary.
pub fn builds() -> Vec<(&'static str, PathBuf)> {
    let only = std::env::var("BENCH_BUILD").unwrap_or_default();
    let mut out = Vec::new();
    if only != "static" {
        out.push(("bench build", PathBuf::from(env!("CARGO_BIN_EXE_iac-code"))));
    }
    let musl = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/target/x86_64-unknown-linux-musl/release/iac-code"
    ));
    if only != "bench" {
        if musl.exists() {
            out.push(("static musl", musl.to_path_buf()));
        } else {
            println!("no musl binary: cargo build --release --target x86_64-unknown-linux-musl");
        }
    }
    out
}
