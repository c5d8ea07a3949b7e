//! OpenAI-compatible chat completions (`POST {base}/chat/completions`, `stream: true`) over
//! ureq. A reader thread owns the blocking body read; this side selects on its events, the
//! cancel token and the idle watchdog, and retries failures that happen before anything
//! streamed.

use std::io::BufReader;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Sender, select};
use serde_json::Value;

mod accumulate;
mod wire;

use accumulate::Accumulator;
use wire::{Chunk, WholeReply, wire_request};

use super::retry;
use super::sse::SseReader;
use super::{ChatRequest, Completion, Delta, Provider, ProviderError};
use crate::cancel::CancelToken;
use crate::config::ProviderConfig;

/// Bytes of an error body kept for the user.
const ERROR_BODY_LIMIT: u64 = 64 << 10;
/// Largest non-streamed JSON reply accepted.
const JSON_BODY_LIMIT: u64 = 16 << 20;

/// The OpenAI-compatible provider.
pub struct OpenAiChat {
    config: ProviderConfig,
    url: String,
}

/// Bytes ureq buffers from the server (response heads must fit).
const INPUT_BUFFER: usize = 32 << 10;
/// Bytes ureq buffers toward the server.
const OUTPUT_BUFFER: usize = 16 << 10;

impl OpenAiChat {
    /// A provider for `config`.
    pub fn new(config: ProviderConfig) -> OpenAiChat {
        let url = format!("{}/chat/completions", config.base_url);
        OpenAiChat { config, url }
    }

    fn agent(&self) -> ureq::Agent {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(self.config.timeouts.connect))
            .timeout_recv_response(Some(self.config.timeouts.response))
            .user_agent(concat!("iac-code/", env!("CARGO_PKG_VERSION")))
            // ureq's 128 KiB buffers each way cost 256 KiB per streaming request; an LLM
            // answer's head fits in far less, and bodies stream through.
            .input_buffer_size(INPUT_BUFFER)
            .output_buffer_size(OUTPUT_BUFFER)
            .max_response_header_size(INPUT_BUFFER)
            .build()
            .new_agent()
    }
}

/// What went wrong in one attempt, and whether another attempt may help.
enum AttemptError {
    Cancelled,
    Retryable { message: String, retry_after: Option<Duration> },
    Fatal(String),
}

/// What the reader thread reports.
enum Item {
    /// The response head arrived with a 2xx status and an event stream.
    Head,
    Chunk(Box<Chunk>),
    /// A whole non-streamed JSON reply.
    Whole(Box<WholeReply>),
    Done,
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
    /// The server sent something that is not a chat-completions event.
    Malformed(String),
}

impl Provider for OpenAiChat {
    fn stream(
        &self,
        request: &ChatRequest,
        cancel: &CancelToken,
        on_delta: &mut dyn FnMut(Delta),
    ) -> Result<Completion, ProviderError> {
        let body = serde_json::to_vec(&wire_request(request, self.config.preset))
            .map_err(|err| ProviderError::Failed(format!("cannot encode the request: {err}")))?;
        let policy = self.config.retry;
        let started = Instant::now();
        let mut attempt = 0;
        loop {
            let mut streamed = false;
            let err = match self.attempt(&body, cancel, on_delta, &mut streamed) {
                Ok(completion) => return Ok(completion),
                Err(AttemptError::Cancelled) => return Err(ProviderError::Cancelled),
                Err(AttemptError::Fatal(message)) => return Err(ProviderError::Failed(message)),
                Err(AttemptError::Retryable { message, retry_after }) => (message, retry_after),
            };
            let (message, retry_after) = err;
            let wait = retry::delay(&policy, attempt, retry_after);
            let out_of_time = started.elapsed() + wait >= policy.max_elapsed;
            if streamed || attempt >= policy.max_retries || out_of_time {
                let tries = attempt + 1;
                let note = if streamed {
                    ""
                } else if tries > 1 {
                    " (gave up after retries)"
                } else {
                    ""
                };
                return Err(ProviderError::Failed(format!(
                    "{message}{note} [{tries} attempt{}]",
                    if tries == 1 { "" } else { "s" }
                )));
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
}

impl OpenAiChat {
    fn attempt(
        &self,
        body: &[u8],
        cancel: &CancelToken,
        on_delta: &mut dyn FnMut(Delta),
        streamed: &mut bool,
    ) -> Result<Completion, AttemptError> {
        let agent = self.agent();
        let (tx, rx) = crossbeam_channel::bounded(256);
        let request = agent
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "text/event-stream");
        let request = match &self.config.api_key {
            Some(key) => request.header("Authorization", &format!("Bearer {key}")),
            None => request,
        };
        let body = body.to_vec();
        let url = self.url.clone();
        let spawned = thread::Builder::new()
            .name("llm".into())
            .spawn(move || read_response(request.send(&body[..]), &url, &tx));
        if let Err(err) = spawned {
            return Err(AttemptError::Fatal(format!("cannot start the LLM reader: {err}")));
        }
        let mut acc = Accumulator::default();
        let mut got_head = false;
        let timeouts = self.config.timeouts;
        loop {
            let wait = if got_head { timeouts.idle } else { timeouts.response + timeouts.connect };
            let item = select! {
                recv(rx) -> item => item,
                recv(cancel.channel()) -> _ => {
                    agent.shutdown();
                    return Err(AttemptError::Cancelled);
                }
                default(wait) => {
                    agent.shutdown();
                    let message = format!(
                        "the LLM sent nothing for {} s (idle timeout; set \
                         IAC_CODE_STREAM_IDLE_TIMEOUT to wait longer)",
                        wait.as_secs_f64()
                    );
                    return Err(if acc.is_empty() && !*streamed {
                        AttemptError::Retryable { message, retry_after: None }
                    } else {
                        AttemptError::Fatal(format!("{message}; the reply was cut off"))
                    });
                }
            };
            let Ok(item) = item else {
                return Err(AttemptError::Fatal("the LLM reader stopped unexpectedly".into()));
            };
            match item {
                Item::Head => got_head = true,
                Item::Chunk(chunk) => acc.apply(*chunk, on_delta, streamed)?,
                Item::Whole(reply) => return Ok(acc.whole(*reply, on_delta)),
                Item::Done => return Ok(acc.finish()),
                Item::Eof if acc.finish.is_some() => return Ok(acc.finish()),
                Item::Eof if acc.is_empty() => {
                    return Err(AttemptError::Fatal(format!(
                        "the LLM at {} returned an empty stream; check IAC_CODE_BASE_URL (many \
                         servers need a /v1 suffix)",
                        self.url
                    )));
                }
                Item::Eof => {
                    return Err(AttemptError::Fatal(
                        "the LLM stream ended before the reply was complete".into(),
                    ));
                }
                Item::Status { code, body, retry_after } => {
                    let message = format!("the LLM answered HTTP {code}: {}", error_text(&body));
                    return Err(if retry::retryable_status(code) {
                        AttemptError::Retryable { message, retry_after }
                    } else {
                        AttemptError::Fatal(message)
                    });
                }
                Item::Connect(message) => {
                    return Err(AttemptError::Retryable { message, retry_after: None });
                }
                Item::Malformed(message) => {
                    agent.shutdown();
                    return Err(AttemptError::Fatal(format!(
                        "the LLM stream is not usable: {message}"
                    )));
                }
                Item::Broken(message) => {
                    let message = format!("the LLM stream broke: {message}");
                    return Err(if acc.is_empty() && !*streamed {
                        AttemptError::Retryable { message, retry_after: None }
                    } else {
                        AttemptError::Fatal(message)
                    });
                }
            }
        }
    }
}

/// Runs on the reader thread: turns the HTTP response into `Item`s until the end, an
/// error, or nobody listening.
fn read_response(
    response: Result<http_response::Response, ureq::Error>,
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
            Ok(text) => match serde_json::from_str::<WholeReply>(&text) {
                Ok(reply) => Item::Whole(Box::new(reply)),
                Err(err) => Item::Malformed(format!("unreadable JSON reply: {err}")),
            },
            Err(err) => Item::Broken(err.to_string()),
        };
        let _ = tx.send(item);
        return;
    }
    if tx.send(Item::Head).is_err() {
        return;
    }
    let mut events = SseReader::new(BufReader::new(response.into_body().into_reader()));
    loop {
        let item = match events.next_event() {
            Ok(None) => Item::Eof,
            Ok(Some(event)) if event.data.trim() == "[DONE]" => Item::Done,
            Ok(Some(event)) => match serde_json::from_str::<Chunk>(&event.data) {
                Ok(chunk) => Item::Chunk(Box::new(chunk)),
                Err(err) => {
                    Item::Malformed(format!("malformed event ({err}): {}", clip(&event.data)))
                }
            },
            Err(err) => Item::Broken(err.to_string()),
        };
        let last = matches!(item, Item::Eof | Item::Done | Item::Broken(_) | Item::Malformed(_));
        if tx.send(item).is_err() || last {
            return;
        }
    }
}

/// ureq's response type, named once.
mod http_response {
    pub type Response = ureq::http::Response<ureq::Body>;
}

fn describe_ureq_error(err: &ureq::Error, url: &str) -> String {
    let hint = match err {
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            " (is the LLM server running? a proxy from HTTPS_PROXY/HTTP_PROXY may also refuse)"
        }
        ureq::Error::HostNotFound => " (check the host name in IAC_CODE_BASE_URL)",
        ureq::Error::Timeout(_) => " (timed out)",
        _ => "",
    };
    format!("cannot reach the LLM at {url}: {err}{hint}")
}

/// The provider's own error message if the body is the usual `{"error":{"message":…}}`.
fn error_text(body: &str) -> String {
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

fn clip(text: &str) -> String {
    if text.chars().count() <= 1000 {
        return text.to_string();
    }
    format!("{}…", text.chars().take(1000).collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_are_made_readable() {
        assert_eq!(error_text(r#"{"error":{"message":"bad key","type":"auth"}}"#), "bad key");
        assert_eq!(error_text(r#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(error_text("  "), "(empty body)");
        assert_eq!(error_text("<html>oops</html>"), "<html>oops</html>");
    }
}
