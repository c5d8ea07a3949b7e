//! Scripted fake of an OpenAI-compatible `/v1/chat/completions` endpoint on loopback,
//! answering with real OpenAI-style SSE chunk streams (HTTP/1.1, chunked, keep-alive).

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Body of the 500 answer given when a chat request arrives and the script is empty.
const EXHAUSTED_BODY: &str = r#"{"error":{"message":"fake llm: script exhausted"}}"#;
/// Body of every non-chat request (e.g. `GET /v1/models`).
const MODELS_BODY: &str = r#"{"object":"list","data":[{"id":"fake-model","object":"model"}]}"#;
/// Tool-call arguments are streamed in pieces of at most this many characters.
const ARGUMENT_PIECE_CHARS: usize = 7;
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
    /// A usage chunk (`"choices":[]`).
    Usage { prompt: u64, completion: u64 },
    /// Written verbatim as one HTTP chunk, e.g. `"data: {bad json\n\n"` or `": comment\n\n"`.
    Raw(String),
    /// `data: [DONE]`.
    Done,
    /// A text delta whose content is `t=<microseconds since the Unix epoch>` at the moment
    /// it is written (for latency benchmarks).
    Stamp,
    /// Waits this many milliseconds before the next event (paces benchmark streams).
    Pause(u64),
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

/// One HTTP request the fake received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names are lowercased.
    pub headers: Vec<(String, String)>,
    /// The body as JSON, `Value::Null` if it is not JSON.
    pub body: Value,
}

impl Recorded {
    /// First value of the header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    script: VecDeque<Reply>,
    /// Chat-completions requests, in arrival order.
    chat: Vec<Recorded>,
    /// Every other request.
    other: Vec<Recorded>,
    unexpected: usize,
    hangs_dropped: usize,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    stop: AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The fake server; lives as long as this handle (connection threads may outlive it briefly).
pub struct FakeLlm {
    shared: Arc<Shared>,
    addr: SocketAddr,
}

impl FakeLlm {
    /// Binds 127.0.0.1:0 and starts serving `script`, one reply per chat request.
    pub fn start(script: Vec<Reply>) -> FakeLlm {
        let listener = TcpListener::bind("127.0.0.1:0").expect("fake llm: cannot bind 127.0.0.1:0");
        listener.set_nonblocking(false).expect("fake llm: cannot make listener blocking");
        let addr = listener.local_addr().expect("fake llm: no local address");
        let shared = Arc::new(Shared {
            state: Mutex::new(State { script: script.into(), ..State::default() }),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let accept_shared = Arc::clone(&shared);
        thread::Builder::new()
            .name("fake-llm-accept".to_owned())
            .spawn(move || accept_loop(&listener, &accept_shared))
            .expect("fake llm: cannot spawn accept thread");
        FakeLlm { shared, addr }
    }

    /// `http://127.0.0.1:<port>/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Appends a reply to the script.
    pub fn push(&self, reply: Reply) {
        self.shared.lock().script.push_back(reply);
    }

    /// Chat-completions requests received so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.lock().chat.clone()
    }

    /// Every non-chat request received so far (e.g. `GET /v1/models`).
    pub fn other_requests(&self) -> Vec<Recorded> {
        self.shared.lock().other.clone()
    }

    /// Bodies of the chat-completions requests received so far.
    pub fn bodies(&self) -> Vec<Value> {
        self.shared.lock().chat.iter().map(|r| r.body.clone()).collect()
    }

    /// Blocks until at least `n` chat requests arrived; panics on timeout.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<Recorded> {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        loop {
            if state.chat.len() >= n {
                return state.chat.clone();
            }
            let now = Instant::now();
            if now >= deadline {
                let got = state.chat.len();
                let remaining = state.script.len();
                drop(state);
                panic!(
                    "fake llm: timed out after {timeout:?} waiting for {n} chat request(s); \
                     got {got}, {remaining} scripted repl(ies) left"
                );
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Blocks until a `Reply::Hang` connection was closed by the client; false on timeout.
    pub fn wait_hang_dropped(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        loop {
            if state.hangs_dropped > 0 {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Chat requests that arrived when the script was already empty.
    pub fn unexpected_requests(&self) -> usize {
        self.shared.lock().unexpected
    }

    /// Replies not yet consumed.
    pub fn remaining(&self) -> usize {
        self.shared.lock().script.len()
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        // Wake the accept loop so it sees the flag; never join (must not hang).
        self.shared.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = conn else { continue };
        let conn_shared = Arc::clone(shared);
        // A failed spawn just drops the connection; the client sees an error.
        let _ = thread::Builder::new().name("fake-llm-conn".to_owned()).spawn(move || {
            // Write/read errors mean the client went away: end this connection.
            let _ = serve_connection(stream, &conn_shared);
        });
    }
}

/// A parsed HTTP request.
struct HttpRequest {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl HttpRequest {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn wants_close(&self) -> bool {
        self.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }

    fn is_chat(&self) -> bool {
        let path = self.path.split('?').next().unwrap_or_default();
        self.method == "POST"
            && (path.ends_with("/chat/completions") || path.ends_with("/messages"))
    }

    /// An Anthropic Messages request: the reply uses Anthropic's event stream.
    fn is_anthropic(&self) -> bool {
        self.path.split('?').next().unwrap_or_default().ends_with("/messages")
    }

    fn into_recorded(self) -> Recorded {
        let body = serde_json::from_slice(&self.body).unwrap_or(Value::Null);
        Recorded { method: self.method, path: self.path, headers: self.headers, body }
    }
}

fn serve_connection(stream: TcpStream, shared: &Shared) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    while let Some(request) = read_request(&mut reader)? {
        let close = request.wants_close();
        if request.method == "CONNECT" {
            // Acting as an HTTP proxy: the tunnel ends here, at this same fake server.
            shared.lock().other.push(request.into_recorded());
            shared.changed.notify_all();
            writer.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
            writer.flush()?;
            continue;
        }
        if !request.is_chat() {
            shared.lock().other.push(request.into_recorded());
            shared.changed.notify_all();
            write_json(&mut writer, 200, MODELS_BODY, None)?;
        } else {
            let anthropic = request.is_anthropic();
            let recorded = request.into_recorded();
            let model = recorded
                .body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("fake-model")
                .to_owned();
            let reply = {
                let mut state = shared.lock();
                state.chat.push(recorded);
                let reply = state.script.pop_front();
                if reply.is_none() {
                    state.unexpected += 1;
                }
                reply
            };
            shared.changed.notify_all();
            match reply {
                None => write_json(&mut writer, 500, EXHAUSTED_BODY, None)?,
                Some(Reply::Status { code, body, retry_after }) => {
                    write_json(&mut writer, code, &body, retry_after.as_deref())?;
                }
                Some(Reply::Stream(events)) => {
                    write_stream_head(&mut writer)?;
                    write_any(&mut writer, &events, &model, anthropic)?;
                    writer.write_all(b"0\r\n\r\n")?;
                    writer.flush()?;
                }
                Some(Reply::Hang(events)) => {
                    // Even if the client is already gone, still record the drop below.
                    let _ = write_stream_head(&mut writer)
                        .and_then(|()| write_any(&mut writer, &events, &model, anthropic));
                    hang_until_closed(&mut reader, shared);
                    return Ok(());
                }
                Some(Reply::Cut(events)) => {
                    write_stream_head(&mut writer)?;
                    write_any(&mut writer, &events, &model, anthropic)?;
                    let _ = writer.shutdown(Shutdown::Both);
                    return Ok(());
                }
            }
        }
        if close {
            return Ok(());
        }
    }
    Ok(())
}

/// Reads until the client closes the connection, then records the dropped hang.
fn hang_until_closed(reader: &mut BufReader<TcpStream>, shared: &Shared) {
    let mut buf = [0u8; 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    shared.lock().hangs_dropped += 1;
    shared.changed.notify_all();
}

/// Reads one request; `None` on a clean EOF before a request line.
fn read_request(reader: &mut BufReader<TcpStream>) -> io::Result<Option<HttpRequest>> {
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        if !line.trim().is_empty() {
            break;
        }
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();

    let mut headers = Vec::new();
    loop {
        let mut raw = String::new();
        if reader.read_line(&mut raw)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "EOF inside request head"));
        }
        let raw = raw.trim_end_matches(['\r', '\n']);
        if raw.is_empty() {
            break;
        }
        if let Some((name, value)) = raw.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let mut request = HttpRequest { method, path, headers, body: Vec::new() };

    if request.header("expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue")) {
        let stream = reader.get_mut();
        stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        stream.flush()?;
    }
    let chunked = request
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    request.body = if chunked {
        read_chunked_body(reader)?
    } else {
        let len =
            request.header("content-length").and_then(|v| v.parse::<usize>().ok()).unwrap_or(0);
        let mut body = vec![0u8; len];
        reader.read_exact(&mut body)?;
        body
    };
    Ok(Some(request))
}

fn read_chunked_body(reader: &mut BufReader<TcpStream>) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size_line = String::new();
        if reader.read_line(&mut size_line)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "EOF inside chunked body"));
        }
        let size_hex = size_line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_hex, 16)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        if size == 0 {
            // Skip optional trailers up to the blank line.
            loop {
                let mut trailer = String::new();
                if reader.read_line(&mut trailer)? == 0 || trailer.trim().is_empty() {
                    return Ok(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf)?;
    }
}

fn reason_phrase(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// A complete (Content-Length) JSON answer.
fn write_json(
    w: &mut TcpStream,
    code: u16,
    body: &str,
    retry_after: Option<&str>,
) -> io::Result<()> {
    let reason = reason_phrase(code);
    let len = body.len();
    let mut response = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n"
    );
    if let Some(retry_after) = retry_after {
        response.push_str("Retry-After: ");
        response.push_str(retry_after);
        response.push_str("\r\n");
    }
    response.push_str("\r\n");
    response.push_str(body);
    w.write_all(response.as_bytes())?;
    w.flush()
}

fn write_stream_head(w: &mut TcpStream) -> io::Result<()> {
    w.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
          Transfer-Encoding: chunked\r\n\r\n",
    )?;
    w.flush()
}

/// Writes `data` as one HTTP chunk and flushes it (empty data is skipped: it would end the body).
fn write_chunk(w: &mut TcpStream, data: &str) -> io::Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    let len = data.len();
    w.write_all(format!("{len:x}\r\n{data}\r\n").as_bytes())?;
    w.flush()
}

/// Writes one SSE `data:` event carrying `payload` as one chunk.
fn write_data(w: &mut TcpStream, payload: &Value) -> io::Result<()> {
    write_chunk(w, &format!("data: {payload}\n\n"))
}

/// An OpenAI `chat.completion.chunk` with one choice.
fn chunk(model: &str, delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    })
}

fn write_any(w: &mut TcpStream, events: &[Event], model: &str, anthropic: bool) -> io::Result<()> {
    if anthropic { write_anthropic(w, events, model) } else { write_events(w, events, model) }
}

/// The same script as Anthropic Messages events: `message_start`, content blocks (text,
/// thinking with a signature, tool_use with `input_json_delta`), `message_delta` with the
/// stop reason and usage, `message_stop`.
fn write_anthropic(w: &mut TcpStream, events: &[Event], model: &str) -> io::Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    let send = |w: &mut TcpStream, payload: Value| {
        let kind = payload["type"].as_str().unwrap_or("message").to_string();
        write_chunk(w, &format!("event: {kind}\ndata: {payload}\n\n"))
    };
    send(
        w,
        json!({"type": "message_start", "message": {"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [], "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    )?;
    // The open block: its index and kind.
    let mut open: Option<(usize, &str)> = None;
    let mut next = 0;
    let stop = |w: &mut TcpStream, open: &mut Option<(usize, &str)>| -> io::Result<()> {
        if let Some((index, kind)) = open.take() {
            if kind == "thinking" {
                send(
                    w,
                    json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": format!("sig-{index}")}}),
                )?;
            }
            send(w, json!({"type": "content_block_stop", "index": index}))?;
        }
        Ok(())
    };
    let mut usage_out = 0;
    let mut stop_reason = None;
    for event in events {
        match event {
            Event::Text(text) | Event::Reasoning(text) => {
                let kind = if matches!(event, Event::Text(_)) { "text" } else { "thinking" };
                if open.map(|(_, k)| k) != Some(kind) {
                    stop(w, &mut open)?;
                    let block = if kind == "text" {
                        json!({"type": "text", "text": ""})
                    } else {
                        json!({"type": "thinking", "thinking": ""})
                    };
                    send(
                        w,
                        json!({"type": "content_block_start", "index": next, "content_block": block}),
                    )?;
                    open = Some((next, kind));
                    next += 1;
                }
                let index = open.map_or(0, |(i, _)| i);
                let delta = if kind == "text" {
                    json!({"type": "text_delta", "text": text})
                } else {
                    json!({"type": "thinking_delta", "thinking": text})
                };
                send(w, json!({"type": "content_block_delta", "index": index, "delta": delta}))?;
            }
            Event::ToolCall { id, name, args, .. } => {
                stop(w, &mut open)?;
                send(
                    w,
                    json!({"type": "content_block_start", "index": next, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
                )?;
                let arguments = match args {
                    Value::String(raw) => raw.clone(),
                    other => other.to_string(),
                };
                for piece in split_chars(&arguments, ARGUMENT_PIECE_CHARS) {
                    send(
                        w,
                        json!({"type": "content_block_delta", "index": next, "delta": {"type": "input_json_delta", "partial_json": piece}}),
                    )?;
                }
                send(w, json!({"type": "content_block_stop", "index": next}))?;
                next += 1;
            }
            Event::Finish(reason) => {
                stop(w, &mut open)?;
                stop_reason = Some(match *reason {
                    "stop" => "end_turn",
                    "tool_calls" => "tool_use",
                    "length" => "max_tokens",
                    "content_filter" => "refusal",
                    other => other,
                });
            }
            Event::Usage { completion, .. } => usage_out = *completion,
            Event::Done => {
                stop(w, &mut open)?;
                send(
                    w,
                    json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": usage_out}}),
                )?;
                send(w, json!({"type": "message_stop"}))?;
            }
            Event::Raw(raw) => write_chunk(w, raw)?,
            Event::Stamp | Event::Pause(_) => {}
        }
    }
    Ok(())
}

fn write_events(w: &mut TcpStream, events: &[Event], model: &str) -> io::Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    write_data(w, &chunk(model, json!({"role": "assistant", "content": ""}), None))?;
    for event in events {
        match event {
            Event::Text(text) => write_data(w, &chunk(model, json!({"content": text}), None))?,
            Event::Reasoning(text) => {
                write_data(w, &chunk(model, json!({"reasoning_content": text}), None))?;
            }
            Event::ToolCall { index, id, name, args } => {
                let header = json!({"tool_calls": [{
                    "index": index,
                    "id": id,
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                }]});
                write_data(w, &chunk(model, header, None))?;
                let arguments = match args {
                    Value::String(raw) => raw.clone(),
                    other => other.to_string(),
                };
                for piece in split_chars(&arguments, ARGUMENT_PIECE_CHARS) {
                    let delta =
                        json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]});
                    write_data(w, &chunk(model, delta, None))?;
                }
            }
            Event::Finish(reason) => write_data(w, &chunk(model, json!({}), Some(*reason)))?,
            Event::Usage { prompt, completion } => {
                let usage = json!({
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": 1_700_000_000,
                    "model": model,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": prompt,
                        "completion_tokens": completion,
                        "total_tokens": prompt + completion,
                    },
                });
                write_data(w, &usage)?;
            }
            Event::Raw(raw) => write_chunk(w, raw)?,
            Event::Done => write_chunk(w, "data: [DONE]\n\n")?,
            Event::Stamp => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_micros());
                write_data(w, &chunk(model, json!({"content": format!("t={now}")}), None))?;
            }
            Event::Pause(ms) => std::thread::sleep(std::time::Duration::from_millis(*ms)),
        }
    }
    Ok(())
}

/// Splits `text` into pieces of at most `n` chars, on char boundaries.
fn split_chars(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n.max(1)).map(|piece| piece.iter().collect()).collect()
}
