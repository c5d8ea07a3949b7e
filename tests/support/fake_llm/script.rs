//! The script a [`FakeLlm`](super::FakeLlm) plays: the [`Event`]s of a streamed reply, the
//! kinds of [`Reply`], and the builders tests use (`text_reply`, `tool_reply`,
//! `tool_replies`). Provider-neutral: the encoders in `openai` and `anthropic` turn the
//! same events into each API's wire format.

use serde_json::Value;

/// Tool-call arguments are streamed in pieces of at most this many characters.
pub(super) const ARGUMENT_PIECE_CHARS: usize = 7;
/// `text_reply` splits its text into pieces of this many characters.
const TEXT_PIECE_CHARS: usize = 5;

/// One element of a streamed reply. Every non-empty stream is preceded automatically by the
/// OpenAI role chunk (`"delta":{"role":"assistant","content":""}`).
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `delta.content`.
    Text(String),
    /// `delta.reasoning_content`.
    Reasoning(String),
    /// A tool call: the header delta, then the arguments in pieces of at most 7 chars.
    /// If `args` is a JSON string, its contents are sent verbatim as the arguments text
    /// (handy for malformed arguments); any other value is serialized.
    ToolCall { index: usize, id: String, name: String, args: Value },
    /// The finishing chunk: `"delta":{}` and this `finish_reason`.
    Finish(&'static str),
    /// A usage chunk (`"choices":[]`), its cached and reasoning counts zero.
    Usage { prompt: u64, completion: u64 },
    /// Usage as a provider with a prompt cache reports it: of `prompt` (all of it),
    /// `cached_read` read from the cache and `cached_write` written to it; of `completion`,
    /// `reasoning`. OpenAI spells it `prompt_tokens_details.cached_tokens` (writes are not
    /// reported) and `completion_tokens_details.reasoning_tokens`; Anthropic's
    /// `message_start` carries `input_tokens` (what neither read nor wrote the cache),
    /// `cache_read_input_tokens` and `cache_creation_input_tokens`.
    CachedUsage {
        prompt: u64,
        completion: u64,
        cached_read: u64,
        cached_write: u64,
        reasoning: u64,
    },
    /// Written verbatim as one HTTP chunk, e.g. `"data: {bad json\n\n"` or `": comment\n\n"`.
    Raw(String),
    /// `data: [DONE]`.
    Done,
    /// A text delta whose content is `t=<microseconds since the Unix epoch>` at the moment
    /// it is written (for latency benchmarks).
    Stamp,
    /// Waits this many milliseconds before the next event (paces benchmark streams).
    Pause(u64),
    /// Flushes, then waits until the test opens the gate of this name ([`open_gate`]), at
    /// most a minute: a stream stopped mid-reply until the test has done what it must.
    Gate(&'static str),
}

static GATES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
static GATE_OPENED: std::sync::Condvar = std::sync::Condvar::new();

/// Opens the gate `name`: every stream waiting at `Event::Gate(name)` goes on, and later
/// ones pass it at once.
pub fn open_gate(name: &'static str) {
    GATES.lock().unwrap().push(name);
    GATE_OPENED.notify_all();
}

/// Blocks until gate `name` is open (or a minute passed).
pub fn wait_gate(name: &'static str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut open = GATES.lock().unwrap();
    while !open.contains(&name) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return;
        }
        open = GATE_OPENED.wait_timeout(open, left).unwrap().0;
    }
}

/// What the fake answers to one chat-completions request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A complete `text/event-stream` answer with these events.
    Stream(Vec<Event>),
    /// Non-2xx answer with a JSON body; `retry_after` becomes a Retry-After header.
    Status { code: u16, body: String, retry_after: Option<String> },
    /// Writes the events, then keeps the connection open, sending nothing, until the client
    /// closes it (read returns 0 or error). Then records that the hang was dropped.
    Hang(Vec<Event>),
    /// Writes the events (no [DONE], no final 0-chunk) then closes the socket abruptly.
    Cut(Vec<Event>),
    /// `chunks` stamped text pieces (as `Event::Stamp`), one every `every_ms`, then `stop`
    /// and `[DONE]`: the stream `[Stamp, Pause(every_ms)] x chunks` would be, but written by
    /// one pacer thread shared by every paced stream, which wakes at most once a
    /// millisecond, not once per piece per stream (a load test's fake LLM must stay cheap
    /// next to the server it feeds). The OpenAI format; Anthropic gets the plain stream.
    Paced { chunks: usize, every_ms: u64 },
}

/// A streamed text answer: the text in ~5-char pieces, `stop`, usage and `[DONE]`.
pub fn text_reply(text: &str) -> Reply {
    let pieces = split_chars(text, TEXT_PIECE_CHARS);
    let completion = pieces.len() as u64;
    let mut events: Vec<Event> = pieces.into_iter().map(Event::Text).collect();
    events.extend([Event::Finish("stop"), Event::Usage { prompt: 10, completion }, Event::Done]);
    Reply::Stream(events)
}

/// A streamed answer with one tool call (index 0), `tool_calls`, usage and `[DONE]`.
pub fn tool_reply(id: &str, name: &str, args: Value) -> Reply {
    tool_replies(&[(id, name, args)])
}

/// A streamed answer with several tool calls (indexes `0..n`), `tool_calls`, usage and `[DONE]`.
pub fn tool_replies(calls: &[(&str, &str, Value)]) -> Reply {
    let mut events: Vec<Event> = calls
        .iter()
        .enumerate()
        .map(|(index, (id, name, args))| Event::ToolCall {
            index,
            id: (*id).to_owned(),
            name: (*name).to_owned(),
            args: args.clone(),
        })
        .collect();
    events.extend([
        Event::Finish("tool_calls"),
        Event::Usage { prompt: 20, completion: 5 },
        Event::Done,
    ]);
    Reply::Stream(events)
}

/// A streamed answer: `before` (thinking, text), then one tool call (index 0),
/// `tool_calls` and `[DONE]`, without usage.
pub fn tool_reply_after(mut before: Vec<Event>, id: &str, name: &str, args: Value) -> Reply {
    let call = Event::ToolCall { index: 0, id: id.to_owned(), name: name.to_owned(), args };
    before.extend([call, Event::Finish("tool_calls"), Event::Done]);
    Reply::Stream(before)
}

/// The arguments text of a tool call: a JSON string verbatim, any other value serialized.
pub(super) fn arguments_text(args: &Value) -> String {
    match args {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

/// Splits `text` into pieces of at most `n` chars, on char boundaries.
pub(super) fn split_chars(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n.max(1)).map(|piece| piece.iter().collect()).collect()
}
