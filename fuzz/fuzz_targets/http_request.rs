//! The HTTP/1.1 request reader (head, `Content-Length` and chunked bodies, pipelining) as a
//! connection runs it: it must never panic, never hand over a body over its cap, and read
//! the same requests, and fail after the same ones, however the bytes arrive (one at a
//! time, a few, or all at once). Which status a failure gets may depend on how much of a
//! bad head had arrived when it was seen (431 for too many headers, or 400 for a head
//! the connection closed inside).
//!
//! Input: one byte for the read size, then the bytes of the connection.

#![no_main]

use iac_code::fuzzing::{HTTP_MAX_BODY, Seen, http_requests};
use libfuzzer_sys::fuzz_target;

/// The requests read, and whether reading ended in an error.
fn outcome(read: Vec<Result<Seen, u16>>) -> (Vec<Seen>, bool) {
    let failed = read.last().is_some_and(Result::is_err);
    (read.into_iter().flatten().collect(), failed)
}

fuzz_target!(|data: &[u8]| {
    let [step, stream @ ..] = data else { return };
    let step = usize::from(*step).max(1);
    let (requests, failed) = outcome(http_requests(stream, step));
    for seen in &requests {
        assert!(seen.body as u64 <= HTTP_MAX_BODY, "a body over the cap: {seen:?}");
    }
    for other in [1 << 16, 1] {
        let (again, again_failed) = outcome(http_requests(stream, other));
        assert_eq!(requests, again, "read {step} bytes at a time, then {other}");
        assert_eq!(failed, again_failed, "read {step} bytes at a time, then {other}");
    }
});
