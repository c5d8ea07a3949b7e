//! A recorded reply read offline, as a streamed one is read, for the fuzz targets (`fuzz/`,
//! through `crate::fuzzing`): its bytes through the SSE reader, each event through the
//! API's accumulator, either as streamed (learned OpenAI chunk shapes, Anthropic's borrowed
//! deltas) or the general way only, so that a target can check the two agree.

use std::cell::Cell;
use std::io::{self, BufReader, Read};
use std::rc::Rc;

use super::anthropic::Acc;
use super::openai::Accumulator;
use super::sse::{SseBatch, SseReader};
use super::stream::{Accumulate, AttemptError, Flow};
use super::{Completion, Delta};

/// What the SSE reader made of a stream.
#[derive(Debug, Default)]
pub struct SseRun {
    /// Each event's data, in order.
    pub events: Vec<String>,
    /// Why the stream broke, if it did.
    pub error: Option<String>,
    /// Events read with a read from the source although `event_ready` had said the
    /// whole event was buffered (a broken promise: it should stay 0).
    pub waited_when_ready: usize,
}

/// Bytes handed out at most `step` at a time, counting the reads.
struct Counted<'a> {
    rest: &'a [u8],
    step: usize,
    reads: Rc<Cell<usize>>,
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reads.set(self.reads.get() + 1);
        let n = buf.len().min(self.step).min(self.rest.len());
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}

/// Reads `bytes` as an event stream through a buffer of `capacity` bytes filled at most
/// `step` bytes per read, checking `event_ready` before every event.
pub fn sse_events(bytes: &[u8], capacity: usize, step: usize) -> SseRun {
    let reads = Rc::new(Cell::new(0));
    let source = Counted { rest: bytes, step: step.max(1), reads: Rc::clone(&reads) };
    let mut reader = SseReader::new(BufReader::with_capacity(capacity.max(1), source));
    let mut batch = SseBatch::default();
    let mut run = SseRun::default();
    loop {
        let ready = reader.event_ready();
        let before = reads.get();
        match reader.next_into(&mut batch) {
            Ok(true) => {}
            Ok(false) => break,
            Err(err) => {
                run.error = Some(err.to_string());
                break;
            }
        }
        if ready && reads.get() != before {
            run.waited_when_ready += 1;
        }
    }
    run.events = batch.iter().map(str::to_string).collect();
    run
}

/// A reply as the agent would have seen it.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// The pieces streamed, in order.
    pub deltas: Vec<Delta<'static>>,
    /// How it ended: the completion (`Debug`), or why the attempt failed.
    pub end: Result<String, String>,
}

/// `bytes` as an OpenAI-compatible event stream, read as streamed, or with `general` every
/// event as a whole chunk.
pub fn openai(bytes: &[u8], general: bool) -> Replay {
    replay(
        Accumulator::default(),
        bytes,
        |acc: &mut Accumulator,
         raw: &str,
         on_delta: &mut dyn FnMut(Delta<'_>),
         streamed: &mut bool| {
            if general {
                acc.general(raw, false, on_delta, streamed)
            } else {
                acc.event(raw, on_delta, streamed)
            }
        },
    )
}

/// `bytes` as an Anthropic event stream, read as streamed, or with `general` every event
/// as a `Value`.
pub fn anthropic(bytes: &[u8], general: bool) -> Replay {
    replay(
        Acc::default(),
        bytes,
        |acc: &mut Acc, raw: &str, on_delta: &mut dyn FnMut(Delta<'_>), streamed: &mut bool| {
            if general {
                acc.general(raw, on_delta, streamed)
            } else {
                acc.event(raw, on_delta, streamed)
            }
        },
    )
}

/// `body` as a whole (not streamed) OpenAI-compatible reply.
pub fn openai_whole(body: &str) -> Replay {
    whole(Accumulator::default(), body)
}

/// `body` as a whole (not streamed) Anthropic reply.
pub fn anthropic_whole(body: &str) -> Replay {
    whole(Acc::default(), body)
}

fn replay<A, E>(mut acc: A, bytes: &[u8], mut event: E) -> Replay
where
    A: Accumulate,
    E: FnMut(&mut A, &str, &mut dyn FnMut(Delta<'_>), &mut bool) -> Result<Flow, AttemptError>,
{
    let mut deltas = Vec::new();
    let mut streamed = false;
    let mut reader = SseReader::new(bytes);
    let mut batch = SseBatch::default();
    loop {
        batch.clear();
        match reader.next_into(&mut batch) {
            Ok(true) => {}
            Ok(false) => break,
            Err(err) => return Replay { deltas, end: Err(err.to_string()) },
        }
        for raw in batch.iter() {
            let flow = event(&mut acc, raw, &mut |d| deltas.push(d.into_owned()), &mut streamed);
            match flow {
                Ok(Flow::More) => {}
                Ok(Flow::Done) => return Replay { deltas, end: Ok(shown(acc.finish())) },
                Err(err) => return Replay { deltas, end: Err(failed(err)) },
            }
        }
    }
    Replay { deltas, end: Ok(shown(acc.finish())) }
}

fn whole<A: Accumulate>(acc: A, body: &str) -> Replay {
    let mut deltas = Vec::new();
    let end = acc.whole(body, &mut |d| deltas.push(d.into_owned()));
    Replay { deltas, end: end.map(shown).map_err(failed) }
}

fn shown(completion: Completion) -> String {
    format!("{completion:?}")
}

fn failed(err: AttemptError) -> String {
    match err {
        AttemptError::Cancelled => "cancelled".to_string(),
        AttemptError::Retryable { kind, message, .. } => format!("retry {kind:?}: {message}"),
        AttemptError::Fatal(kind, message) => format!("fatal {kind:?}: {message}"),
    }
}
