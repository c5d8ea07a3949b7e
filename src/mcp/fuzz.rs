//! What a server sends, read offline as a connection reads it, for the fuzz targets
//! (`fuzz/`, through `crate::fuzzing`): stdio lines, an event stream or one POST answer,
//! delivered to a `Peer` with three requests waiting; each answer then read as a
//! `tools/list` page, a `tools/call` result and an input schema.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::conn::remote_tool;
use super::http::read_events;
use super::peer::{Link, Peer};
use super::sse::same_origin;
use super::stdio::MAX_LINE;
use super::tool::{model_schema, result_content};
use crate::jsonrpc::{LineRead, read_capped_line};
use crate::sync::lock;

/// The URL an HTTP+SSE server is configured at, for its `endpoint` events.
pub const BASE: &str = "http://127.0.0.1:8080/mcp/sse";

/// What reading a server's bytes did.
#[derive(Debug, Default)]
pub struct McpRun {
    /// What we sent the server (answers to its requests), one message each.
    pub sent: Vec<Vec<u8>>,
    /// Why the connection ended, if it did.
    pub broken: Option<String>,
    /// Each answer our requests got, as read: tool names and schemas, and result text.
    pub answers: Vec<String>,
    /// Where each `endpoint` event said to POST (resolved against `BASE`), or why not.
    pub endpoints: Vec<Result<String, String>>,
}

/// Our side of the connection: keeps what we send.
#[derive(Default)]
struct Recorder(Mutex<Vec<Vec<u8>>>);

impl Link for Recorder {
    fn send(&self, message: &[u8]) -> Result<(), String> {
        lock(&self.0).push(message.to_vec());
        Ok(())
    }

    fn close(&self) {}
}

/// Reads `bytes` as what a server sent: with `framing` 0 as stdio lines, 1 as an event
/// stream (HTTP+SSE, or a Streamable HTTP answer or GET stream), else as one POST answer.
pub fn frames(bytes: &[u8], framing: u8) -> McpRun {
    let peer = Peer::new("fuzz", PathBuf::from("/fuzz/project"));
    let recorder = Arc::new(Recorder::default());
    peer.attach(Arc::clone(&recorder) as Arc<dyn Link>);
    let waiting: Vec<_> = (0..3).map(|_| peer.expect()).collect();
    let mut run = McpRun::default();
    match framing {
        0 => {
            let mut input = bytes;
            let mut line = Vec::new();
            loop {
                line.clear();
                match read_capped_line(&mut input, &mut line, MAX_LINE) {
                    Ok(LineRead::Line) => peer.deliver(&line),
                    Ok(LineRead::TooLong) => peer.fail("a line over the cap".to_string()),
                    Ok(LineRead::Eof) | Err(_) => break,
                }
                if peer.broken().is_some() {
                    break;
                }
            }
        }
        1 => {
            read_events(bytes, &mut |event, data| {
                if event == "endpoint" {
                    run.endpoints.push(same_origin(BASE, data.trim()));
                    return true;
                }
                peer.deliver(data.as_bytes());
                peer.broken().is_none()
            });
        }
        _ => peer.deliver(bytes),
    }
    for (_, answer, progress) in &waiting {
        progress.try_iter().for_each(drop);
        if let Ok(Ok(value)) = answer.try_recv() {
            run.answers.push(read_answer(&value));
        }
    }
    run.broken = peer.broken();
    run.sent = std::mem::take(&mut *lock(&recorder.0));
    run
}

/// An answer read every way a connection may read one.
fn read_answer(value: &Value) -> String {
    let mut out = String::new();
    for tool in value.get("tools").and_then(Value::as_array).into_iter().flatten() {
        if let Ok(tool) = remote_tool(tool) {
            let (schema, changed) = model_schema(&tool.schema);
            out.push_str(&format!("{} {schema} {changed:?}\n", tool.name));
        }
    }
    let (text, images) = result_content(value, true);
    let (schema, changed) = model_schema(value);
    out.push_str(&format!("{text} [{} images] {schema} {changed:?}", images.len()));
    out
}

/// `endpoint` resolved against `base` if it keeps `base`'s origin (the HTTP+SSE transport's
/// check), or why not.
pub fn endpoint(base: &str, endpoint: &str) -> Result<String, String> {
    same_origin(base, endpoint)
}
