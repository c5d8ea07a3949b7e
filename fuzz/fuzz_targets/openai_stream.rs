//! OpenAI-compatible event accumulation: a reply read as streamed (chunks of a learned
//! shape read by their text alone) must give exactly the pieces, completion and error the
//! general reading (every chunk parsed whole) gives; a whole reply must read without
//! panicking.
//!
//! Input: an event stream (also tried as one whole JSON reply).

#![no_main]

use iac_code::fuzzing::{openai, openai_whole};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    assert_eq!(openai(data, false), openai(data, true));
    if let Ok(body) = std::str::from_utf8(data) {
        let _ = openai_whole(body);
    }
});
