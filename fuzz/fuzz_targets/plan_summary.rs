//! The summary of `terraform show -json <planfile>` shown in a permission question: any
//! bytes give an error or a summary that renders, never a panic.
//!
//! Input: the JSON.

#![no_main]

use iac_code::infra::plan::summarise;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(summary) = summarise(data) {
        let _ = (summary.tier(), summary.headline());
        let _ = summary.render(&["cd infra && terraform apply".to_string()]);
    }
});
