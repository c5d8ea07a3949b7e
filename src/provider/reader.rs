//! Reading one LLM response. A request thread connects, sends, waits for the response
//! head (so that a cancel or a timeout never waits for DNS or a TCP connect), and hands the
//! caller one `Item`: the streaming body, or a whole reply, or the failure. The caller then
//! reads a streaming body on its own thread (`read_events`): no hand-off per event.

use std::io::BufReader;
use std::time::Duration;

use crossbeam_channel::Sender;

use super::idle::Watch;
use super::retry;
use super::sse::{SseBatch, SseReader};
use crate::cancel::CancelToken;

/// Bytes of an error body kept for the user.
const ERROR_BODY_LIMIT: u64 = 64 << 10;
/// Largest non-streamed JSON reply accepted.
const JSON_BODY_LIMIT: u64 = 16 << 20;
/// Most events passed on at once. Events already whole in the read buffer join the batch;
/// a trickling reply goes event by event (never held back by half an event), a burst in
/// batches.
const BATCH_EVENTS: usize = 128;
/// Room for a batch's text: 128 events of a typical size.
const BATCH_BYTES: usize = 16 << 10;

/// What the request thread reports.
pub(super) enum Item {
    /// The response head arrived with a 2xx status and an event stream: its body.
    Stream(ureq::BodyReader<'static>),
    /// A whole non-streamed JSON reply.
    Whole(String),
    Status {
        code: u16,
        body: String,
        retry_after: Option<Duration>,
    },
    /// Failure before the head (connect, DNS, TLS, timeout).
    Connect(String),
    /// A non-streamed reply broke off.
    Broken(String),
}

/// Runs on the request thread: turns the HTTP response into its `Item`.
pub(super) fn read_response(
    response: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    url: &str,
    tx: &Sender<Item>,
) {
    let mut response = match response {
        Ok(response) => response,
        Err(err) => {
            let _ = tx.send(Item::Connect(describe_ureq_error(&err, url)));
            return;
        }
    };
    let status = response.status().as_u16();
    if !(200..300).contains(&status) {
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(retry::parse_retry_after);
        let body = response
            .body_mut()
            .with_config()
            .limit(ERROR_BODY_LIMIT)
            .read_to_string()
            .unwrap_or_default();
        let _ = tx.send(Item::Status { code: status, body, retry_after });
        return;
    }
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if content_type.starts_with("application/json") {
        let item = match response.body_mut().with_config().limit(JSON_BODY_LIMIT).read_to_string() {
            Ok(text) => Item::Whole(text),
            Err(err) => Item::Broken(err.to_string()),
        };
        let _ = tx.send(item);
        return;
    }
    let _ = tx.send(Item::Stream(response.into_body().into_reader()));
}

/// A streaming response body and what stops it.
pub(super) struct Body<'a> {
    /// The attempt's agent: shutting it down ends a read blocked on its connection.
    pub agent: ureq::Agent,
    pub reader: ureq::BodyReader<'static>,
    pub idle: Duration,
    pub url: &'a str,
}

/// What the caller of `read_events` says after an event.
pub(super) enum Step {
    Go,
    Stop,
}

/// How reading a streamed body ended.
pub(super) enum Ending {
    /// The caller said `Stop`.
    Stopped,
    Cancelled,
    /// The idle watchdog could not be started.
    Unwatched,
    /// The end of the stream.
    Eof,
    /// A read failed.
    Broken(std::io::Error),
    /// The idle watchdog cut it.
    Idle,
}

/// Reads a streamed reply on this thread, handing `on_event` each event's data and `None`
/// after each batch. A cancel (through the token's hook) and the idle watchdog shut the
/// connection down, which ends a blocked read at once. Not generic: one copy of the read
/// path serves every protocol.
pub(super) fn read_events(
    body: Body<'_>,
    cancel: &CancelToken,
    on_event: &mut dyn FnMut(Option<&str>) -> Step,
) -> Ending {
    let Body { agent, reader, idle, .. } = body;
    let stopper = agent.clone();
    let Some(watch) = Watch::start(idle, move || stopper.shutdown()) else {
        agent.shutdown();
        return Ending::Unwatched;
    };
    let _on_cancel = cancel.on_cancel(move || agent.shutdown());
    let mut events = SseReader::new(BufReader::new(watch.reader(reader)));
    let mut batch = SseBatch::with_capacity(BATCH_EVENTS, BATCH_BYTES);
    let end = loop {
        if cancel.is_cancelled() {
            return Ending::Cancelled;
        }
        // One event, then those already whole in the buffer (reading them cannot wait).
        let end = loop {
            match events.next_into(&mut batch) {
                Ok(true) if events.event_ready() && batch.len() < BATCH_EVENTS => {}
                Ok(true) => break None,
                Ok(false) => break Some(Ending::Eof),
                Err(err) => break Some(Ending::Broken(err)),
            }
        };
        for data in batch.iter() {
            // Stopped (the reply is whole, or bad): dropping the body closes the connection,
            // which a server may hold open.
            if let Step::Stop = on_event(Some(data)) {
                return Ending::Stopped;
            }
        }
        if !batch.is_empty() {
            if let Step::Stop = on_event(None) {
                return Ending::Stopped;
            }
            batch.clear();
        }
        if let Some(end) = end {
            break end;
        }
    };
    // A cancel or the watchdog ends the read with an error or an early end of stream.
    if cancel.is_cancelled() {
        Ending::Cancelled
    } else if watch.fired() {
        Ending::Idle
    } else {
        end
    }
}

fn describe_ureq_error(err: &ureq::Error, url: &str) -> String {
    let hint = match err {
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            " (is the LLM server running? a proxy from HTTPS_PROXY/HTTP_PROXY may also refuse)"
        }
        ureq::Error::HostNotFound => " (check the host name in IAC_CODE_BASE_URL)",
        ureq::Error::Timeout(_) => " (timed out)",
        ureq::Error::Tls(_) | ureq::Error::Rustls(_) => {
            " (TLS: a site CA can be added with IAC_CODE_CA_FILE)"
        }
        _ => "",
    };
    format!("cannot reach the LLM at {url}: {err}{hint}")
}
