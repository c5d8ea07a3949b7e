//! A SKILL.md (Agent Skills front matter and body): any text parses to a skill or to
//! problems, never a panic; a skill that parses has a valid name and a description within
//! the format's bounds, and its `allowed-tools` read as rules or as problems.
//!
//! Input: the folder's name, a newline, the SKILL.md text.

#![no_main]

use iac_code::skills::front::{MAX_DESCRIPTION, allowed_rules, parse, valid_name};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (folder, skill_md) = text.split_once('\n').unwrap_or(("skill", &text));
    let (meta, problems) = parse(skill_md, folder);
    match meta {
        Some(meta) => {
            assert!(valid_name(&meta.name), "{:?}", meta.name);
            let chars = meta.description.chars().count();
            assert!((1..=MAX_DESCRIPTION).contains(&chars));
            assert!(problems.iter().all(|p| !p.fatal), "{problems:?}");
            let _ = allowed_rules(&meta);
        }
        None => assert!(problems.iter().any(|p| p.fatal), "skipped without a reason"),
    }
});
