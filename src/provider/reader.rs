//! The reader thread of one LLM request: it owns the blocking body read and hands the
//! caller what it read, as `Item`s: the head, events in batches, the end or the failure.

use std::io::BufReader;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};

use super::retry;
use super::sse::{SseBatch, SseReader};

/// Bytes of an error body kept for the user.
const ERROR_BODY_LIMIT: u64 = 64 << 10;
/// Largest non-streamed JSON reply accepted.
const JSON_BODY_LIMIT: u64 = 16 << 20;
/// Most events handed from the reader thread to the caller at once. The reader hands over
/// what it has read unless the next event is already whole in its buffer, so a trickling
/// reply goes event by event (never held back by half an event) and a burst goes in
/// batches: one wake-up each.
const BATCH_EVENTS: usize = 128;
/// Room for a batch's text: 128 events of a typical size.
const BATCH_BYTES: usize = 16 << 10;

/// What the reader thread reports.
pub(super) enum Item {
    /// The response head arrived with a 2xx status and an event stream.
    Head,
    /// Events in order (never empty). Give the batch back, cleared, through the `spare`
    /// channel: the reader fills it again instead of allocating.
    Events(SseBatch),
    /// A whole non-streamed JSON reply.
    Whole(String),
    Eof,
    Status {
        code: u16,
        body: String,
        retry_after: Option<Duration>,
    },
    /// Failure before the head (connect, DNS, TLS, timeout).
    Connect(String),
    /// Failure after the head (broken connection).
    Broken(String),
}

/// Runs on the reader thread: turns the HTTP response into `Item`s until the end, an
/// error, or nobody listening.
pub(super) fn read_response(
    response: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    url: &str,
    tx: &Sender<Item>,
    spare: &Receiver<SseBatch>,
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
    if tx.send(Item::Head).is_err() {
        return;
    }
    let mut events = SseReader::new(BufReader::new(response.into_body().into_reader()));
    // Batches are made whole at once and used again (`spare`): a burst allocates nothing,
    // and growing buffers never cost musl's allocator a fresh mapping.
    let fresh = || SseBatch::with_capacity(BATCH_EVENTS, BATCH_BYTES);
    let mut batch = fresh();
    loop {
        let end = match events.next_into(&mut batch) {
            Ok(true) if events.event_ready() && batch.len() < BATCH_EVENTS => continue,
            Ok(true) => None,
            Ok(false) => Some(Item::Eof),
            Err(err) => Some(Item::Broken(err.to_string())),
        };
        if !batch.is_empty() {
            let next = spare.try_recv().unwrap_or_else(|_| fresh());
            if tx.send(Item::Events(std::mem::replace(&mut batch, next))).is_err() {
                return;
            }
        }
        if let Some(end) = end {
            let _ = tx.send(end);
            return;
        }
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
