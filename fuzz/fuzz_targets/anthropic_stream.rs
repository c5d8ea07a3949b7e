//! Anthropic event accumulation: a reply read as streamed (deltas read into borrowed
//! fields) must give exactly the pieces, completion and error the general reading (every
//! event as a `Value`) gives; a whole reply must read without panicking.
//!
//! Input: an event stream (also tried as one whole JSON reply).

#![no_main]

use iac_code::fuzzing::{anthropic, anthropic_whole};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    assert_eq!(anthropic(data, false), anthropic(data, true));
    if let Ok(body) = std::str::from_utf8(data) {
        let _ = anthropic_whole(body);
    }
});
