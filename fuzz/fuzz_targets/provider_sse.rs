//! The providers' SSE reader: events must not depend on how the bytes were buffered, and
//! `event_ready` (which lets a burst of events go out in one batch) must never promise a
//! whole event that reading then has to wait for.
//!
//! Input: one byte for the buffer's capacity, one for the read size, then the stream.

#![no_main]

use iac_code::fuzzing::sse_events;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [capacity, step, stream @ ..] = data else { return };
    let run = sse_events(stream, usize::from(*capacity), usize::from(*step));
    assert_eq!(run.waited_when_ready, 0, "event_ready promised an event not yet read");
    let whole = sse_events(stream, 1 << 16, 1 << 16);
    assert_eq!((&run.events, &run.error), (&whole.events, &whole.error));
});
