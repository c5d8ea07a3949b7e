//! The shell parser and the infrastructure classifier behind the permission gate: never a
//! panic, and a script the parser could not understand whole is never judged below
//! mutate (`shell::parse(s).opaque` non-empty ⇒ `classify(s).tier >= Tier::Mutate`), and
//! never given the network and the credentials in the sandbox (`classify(s).cloud` is
//! `None` whenever anything in it was opaque).
//!
//! Input: the command line.

#![no_main]

use std::path::Path;

use iac_code::infra::{self, Tier};
use iac_code::shell;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    let script = shell::parse(&src);
    let env = |name: &str| (name == "HOME").then(|| "/home/fuzz".to_string());
    let classified = infra::classify(&src, Path::new("/nonexistent/fuzz/project"), &env);
    if !script.opaque.is_empty() {
        assert!(
            classified.tier >= Tier::Mutate,
            "opaque ({:?}) but judged {:?}",
            script.opaque,
            classified.tier
        );
    }
    if classified.opaque || !script.opaque.is_empty() {
        assert!(classified.cloud.is_none(), "opaque but given the network: {src:?}");
    }
});
