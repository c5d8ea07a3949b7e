//! The static release link gathers start-up code: `link/startup.ld` places the functions
//! that start-up and `initialize` run in one section ahead of `.text`, so that they share a
//! few 64 KiB windows of the file (the kernel maps code around each page touched) and idle
//! memory and start-up time stay low. The linker also writes its map beside the binary
//! (`iac-code.map`), which `benches/layout.rs` reads to check and regenerate the script.
//! Other targets and profiles link as usual.
#![allow(clippy::print_stdout)]

fn main() {
    println!("cargo:rerun-if-changed=link/startup.ld");
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
