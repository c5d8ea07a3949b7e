//! What every streaming chat API shares: one ureq agent per attempt, a request thread
//! that connects and waits for the response head (`reader.rs`), then the streamed body
//! read on the caller's own thread, SSE events passed on in batches with a `Delta::Flush`
//! after each (one wake-up per burst, none between threads), the cancel token and the idle
//! watchdog (both close the connection under a blocked read), and retries of failures that
//! happen before anything streamed (bounded in count and time, `Retry-After` honoured,
//! each logged at warn). A `Protocol` says where to send what, and its accumulator reads
//! the events.

use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::select;
use serde_json::Value;

use super::reader::{Body, Ending, Item, Step, read_events, read_response};
use super::retry;
use super::{ChatRequest, Completion, Delta, Failure, FailureKind, Provider, ProviderError};
use crate::cancel::CancelToken;
use crate::config::ProviderConfig;

/// Bytes ureq buffers from the server (response heads must fit).
const INPUT_BUFFER: usize = 32 << 10;
/// Bytes ureq buffers toward the server.
const OUTPUT_BUFFER: usize = 16 << 10;

/// What went wrong in one attempt, and whether another attempt may help.
pub(super) enum AttemptError {
    Cancelled,
    Retryable { kind: FailureKind, message: String, retry_after: Option<Duration> },
    Fatal(FailureKind, String),
}

/// Whether a stream goes on after an event.
pub(super) enum Flow {
    More,
    Done,
}

/// One chat API.
pub(super) trait Protocol: Send + Sync {
    /// Reads one reply.
    type Acc: Accumulate + Default;
    /// The settings and the URL it sends to.
    fn endpoint(&self) -> &Endpoint;
    /// The endpoint's URL.
    fn url(&self) -> &str {
        &self.endpoint().url
    }
    /// The settings it was made with.
    fn config(&self) -> &ProviderConfig {
        &self.endpoint().config
    }
    /// Adds the API's headers (key, version) to a request.
    fn headers(
        &self,
        request: ureq::RequestBuilder<ureq::typestate::WithBody>,
    ) -> ureq::RequestBuilder<ureq::typestate::WithBody>;
    /// A fresh accumulator.
    fn accumulator(&self) -> Self::Acc {
        Self::Acc::default()
    }
    /// The request's bytes, as sent.
    fn encode(&self, request: &ChatRequest) -> Result<Vec<u8>, ProviderError>;
}

/// A protocol's settings and the URL it sends to (`path` below the configured base).
pub(super) struct Endpoint {
    pub(super) config: ProviderConfig,
    url: String,
}

impl Endpoint {
    pub(super) fn new(config: ProviderConfig, path: &str) -> Endpoint {
        let url = format!("{}{path}", config.base_url);
        Endpoint { config, url }
    }
}

/// Every protocol is a provider: encode the request, then stream it.
impl<P: Protocol> Provider for P {
    fn stream(
        &self,
        request: &ChatRequest,
        cancel: &CancelToken,
        on_delta: &mut dyn FnMut(Delta<'_>),
    ) -> Result<Completion, ProviderError> {
        let body = self.encode(request)?;
        stream(self, self.config(), &body, cancel, on_delta)
    }
}

/// One SSE event's data as `T`, or a fatal bad-reply error quoting it.
pub(super) fn read_event<'a, T: serde::Deserialize<'a>>(raw: &'a str) -> Result<T, AttemptError> {
    serde_json::from_str(raw).map_err(|err| {
        AttemptError::Fatal(
            FailureKind::BadReply,
            format!("the LLM stream is not usable: malformed event ({err}): {}", clip(raw)),
        )
    })
}

/// A whole (non-streamed) reply as `T`, or a fatal bad-reply error.
pub(super) fn read_whole<'a, T: serde::Deserialize<'a>>(body: &'a str) -> Result<T, AttemptError> {
    serde_json::from_str(body).map_err(|err| {
        AttemptError::Fatal(
            FailureKind::BadReply,
            format!("the LLM stream is not usable: unreadable JSON reply: {err}"),
        )
    })
}

/// `body` as JSON bytes, or an internal failure saying why it cannot be.
pub(super) fn encode_json(body: &impl serde::Serialize) -> Result<Vec<u8>, ProviderError> {
    serde_json::to_vec(body).map_err(|err| {
        let message = format!("cannot encode the request: {err}");
        ProviderError::Failed(Failure::new(FailureKind::Internal, message))
    })
}

/// Assembles one reply from its events.
pub(super) trait Accumulate {
    /// Nothing received yet.
    fn is_empty(&self) -> bool;
    /// The reply said why it stopped (so an end of stream is a normal end).
    fn has_finish(&self) -> bool;
    /// Takes one SSE event's data.
    fn event(
        &mut self,
        data: &str,
        on_delta: &mut dyn FnMut(Delta<'_>),
        streamed: &mut bool,
    ) -> Result<Flow, AttemptError>;
    /// Takes a whole (non-streamed) JSON reply.
    fn whole(
        self,
        body: &str,
        on_delta: &mut dyn FnMut(Delta<'_>),
    ) -> Result<Completion, AttemptError>;
    /// The reply.
    fn finish(self) -> Completion;
}

fn agent(config: &ProviderConfig) -> ureq::Agent {
    let mut builder = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(config.timeouts.connect))
        .timeout_recv_response(Some(config.timeouts.response))
        .user_agent(concat!("iac-code/", env!("CARGO_PKG_VERSION")))
        // ureq's 128 KiB buffers each way cost 256 KiB per streaming request; an LLM
        // answer's head fits in far less, and bodies stream through.
        .input_buffer_size(INPUT_BUFFER)
        .output_buffer_size(OUTPUT_BUFFER)
        .max_response_header_size(INPUT_BUFFER);
    if let Some(tls) = &config.tls {
        builder = builder.tls_config(tls.clone());
    }
    builder.build().new_agent()
}

/// Sends `body`, streams the reply, retries what may be retried.
pub(super) fn stream<P: Protocol>(
    protocol: &P,
    config: &ProviderConfig,
    body: &[u8],
    cancel: &CancelToken,
    on_delta: &mut dyn FnMut(Delta<'_>),
) -> Result<Completion, ProviderError> {
    let policy = config.retry;
    let started = Instant::now();
    let mut attempt = 0;
    loop {
        let mut streamed = false;
        let (kind, message, retry_after) =
            match one_attempt(protocol, config, body, cancel, on_delta, &mut streamed) {
                Ok(completion) => return Ok(completion),
                Err(AttemptError::Cancelled) => return Err(ProviderError::Cancelled),
                Err(AttemptError::Fatal(kind, message)) => {
                    return Err(ProviderError::Failed(Failure { kind, message }));
                }
                Err(AttemptError::Retryable { kind, message, retry_after }) => {
                    (kind, message, retry_after)
                }
            };
        let wait = retry::delay(&policy, attempt, retry_after);
        let out_of_time = started.elapsed() + wait >= policy.max_elapsed;
        if streamed || attempt >= policy.max_retries || out_of_time {
            let tries = attempt + 1;
            let note = if !streamed && tries > 1 { " (gave up after retries)" } else { "" };
            let message =
                format!("{message}{note} [{tries} attempt{}]", if tries == 1 { "" } else { "s" });
            return Err(ProviderError::Failed(Failure { kind, message }));
        }
        attempt += 1;
        log::warn!(
            "LLM request failed: {message}; retry {attempt}/{} in {} ms",
            policy.max_retries,
            wait.as_millis()
        );
        select! {
            recv(cancel.channel()) -> _ => return Err(ProviderError::Cancelled),
            default(wait) => {}
        }
    }
}

fn one_attempt<P: Protocol>(
    protocol: &P,
    config: &ProviderConfig,
    body: &[u8],
    cancel: &CancelToken,
    on_delta: &mut dyn FnMut(Delta<'_>),
    streamed: &mut bool,
) -> Result<Completion, AttemptError> {
    let agent = agent(config);
    let (tx, rx) = crossbeam_channel::bounded(1);
    let request = agent
        .post(protocol.url())
        .header("Content-Type", "application/json")
        .header("Accept", "text/event-stream");
    let request = protocol.headers(request);
    let body = body.to_vec();
    let url = protocol.url().to_string();
    let spawned = thread::Builder::new()
        .name("llm".into())
        .spawn(move || read_response(request.send(&body[..]), &url, &tx));
    if let Err(err) = spawned {
        let message = format!("cannot start the LLM request: {err}");
        return Err(AttemptError::Fatal(FailureKind::Internal, message));
    }
    let timeouts = config.timeouts;
    let wait = timeouts.response + timeouts.connect;
    let item = select! {
        recv(rx) -> item => item,
        recv(cancel.channel()) -> _ => {
            agent.shutdown();
            return Err(AttemptError::Cancelled);
        }
        default(wait) => {
            agent.shutdown();
            let message = format!(
                "the LLM sent no response for {} s (set IAC_CODE_RESPONSE_TIMEOUT to wait longer)",
                wait.as_secs_f64()
            );
            let kind = FailureKind::Timeout;
            return Err(AttemptError::Retryable { kind, message, retry_after: None });
        }
    };
    let Ok(item) = item else {
        let message = "the LLM request thread stopped unexpectedly".to_string();
        return Err(AttemptError::Fatal(FailureKind::Internal, message));
    };
    let acc = protocol.accumulator();
    match item {
        Item::Stream(reader) => {
            let body = Body { agent, reader, idle: timeouts.idle, url: protocol.url() };
            read_body(body, acc, cancel, on_delta, streamed)
        }
        Item::Whole(body) => acc.whole(&body, on_delta),
        Item::Status { code, body, retry_after } => {
            let message = format!("the LLM answered HTTP {code}: {}", error_text(&body));
            let kind = FailureKind::of_status(code);
            Err(if retry::retryable_status(code) {
                AttemptError::Retryable { kind, message, retry_after }
            } else {
                AttemptError::Fatal(kind, message)
            })
        }
        Item::Connect(message) => {
            let kind = if message.contains("timed out") || message.contains("timeout") {
                FailureKind::Timeout
            } else {
                FailureKind::Connect
            };
            Err(AttemptError::Retryable { kind, message, retry_after: None })
        }
        Item::Broken(message) => {
            let message = format!("the LLM reply broke off: {message}");
            Err(AttemptError::Retryable {
                kind: FailureKind::CutStream,
                message,
                retry_after: None,
            })
        }
    }
}

/// Reads a streamed reply into `acc`.
fn read_body<A: Accumulate>(
    body: Body<'_>,
    mut acc: A,
    cancel: &CancelToken,
    on_delta: &mut dyn FnMut(Delta<'_>),
    streamed: &mut bool,
) -> Result<Completion, AttemptError> {
    let (url, idle) = (body.url, body.idle);
    let mut stopped = None;
    let ending = read_events(body, cancel, &mut |data| {
        let Some(data) = data else {
            on_delta(Delta::Flush);
            return Step::Go;
        };
        match acc.event(data, on_delta, streamed) {
            Ok(Flow::More) => Step::Go,
            Ok(Flow::Done) => Step::Stop,
            Err(err) => {
                stopped = Some(err);
                Step::Stop
            }
        }
    });
    let early = acc.is_empty() && !*streamed;
    match ending {
        Ending::Stopped => match stopped {
            Some(err) => Err(err),
            None => Ok(acc.finish()),
        },
        Ending::Cancelled => Err(AttemptError::Cancelled),
        // Before anything was read: another attempt may find a thread to spare.
        Ending::Unwatched => Err(AttemptError::Retryable {
            kind: FailureKind::Internal,
            message: "cannot watch the LLM stream for idleness (no thread)".into(),
            retry_after: None,
        }),
        Ending::Idle => {
            let kind = FailureKind::Timeout;
            let message = format!(
                "the LLM sent nothing for {} s (idle timeout; set IAC_CODE_STREAM_IDLE_TIMEOUT \
                 to wait longer)",
                idle.as_secs_f64()
            );
            Err(if early {
                AttemptError::Retryable { kind, message, retry_after: None }
            } else {
                AttemptError::Fatal(kind, format!("{message}; the reply was cut off"))
            })
        }
        Ending::Eof if acc.has_finish() => Ok(acc.finish()),
        Ending::Eof if acc.is_empty() => Err(AttemptError::Fatal(
            FailureKind::BadReply,
            format!(
                "the LLM at {url} returned an empty stream; check IAC_CODE_BASE_URL (many \
                 servers need a /v1 suffix)"
            ),
        )),
        Ending::Eof => Err(AttemptError::Fatal(
            FailureKind::CutStream,
            "the LLM stream ended before the reply was complete".into(),
        )),
        Ending::Broken(err) => {
            let message = format!("the LLM stream broke: {err}");
            let kind = FailureKind::CutStream;
            Err(if early {
                AttemptError::Retryable { kind, message, retry_after: None }
            } else {
                AttemptError::Fatal(kind, message)
            })
        }
    }
}

/// The provider's own error message if the body is one of the usual shapes.
pub(super) fn error_text(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error").filter(|e| e.is_string()))
            .or_else(|| v.get("message"))
            .or_else(|| v.get("detail"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    match message {
        Some(message) => message,
        None if body.trim().is_empty() => "(empty body)".to_string(),
        None => clip(body.trim()),
    }
}

/// At most 1,000 characters of `text`, for messages.
pub(super) fn clip(text: &str) -> String {
    crate::text::clip(text, 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_are_made_readable() {
        assert_eq!(error_text(r#"{"error":{"message":"bad key","type":"auth"}}"#), "bad key");
        assert_eq!(
            error_text(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
        );
        assert_eq!(error_text(r#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(error_text("  "), "(empty body)");
        assert_eq!(error_text("<html>oops</html>"), "<html>oops</html>");
    }
}
