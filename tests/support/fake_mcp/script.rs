//! What a fake MCP server plays: the [`Script`] (how it answers `initialize`, which tools it
//! offers, how `tools/list` pages) and each [`FakeTool`]'s [`Behaviour`], plus the pure
//! pieces of the answers (the initialize result, a page of the tool list, the results of
//! the behaviours that need no conversation with the client). Serialisable, because the
//! stdio server reads its script from a JSON file.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The protocol version answered when neither the script nor the client names one.
pub const DEFAULT_PROTOCOL_VERSION: &str = "2025-06-18";
/// A 1×1 PNG, base64: the data of [`Behaviour::Image`].
pub const TINY_PNG_BASE64: &str = concat!(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9",
    "awAAAABJRU5ErkJggg==",
);
/// First line of a [`Behaviour::Big`] text.
pub const BIG_HEAD: &str = "BIG-HEAD";
/// Last line of a [`Behaviour::Big`] text.
pub const BIG_TAIL: &str = "BIG-TAIL";
/// What each log message of a [`Behaviour::LogFlood`] starts with.
pub const FLOOD_LINE: &str = "fake flood line";
/// The `serverInfo.name` the fake answers `initialize` with.
pub const SERVER_NAME: &str = "fake-mcp";

/// The behaviour of one fake MCP server. Every field has a default (`#[serde(default)]`),
/// so a JSON script names only what it changes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Script {
    /// `protocolVersion` answered to `initialize`; `None` echoes the client's.
    pub protocol_version: Option<String>,
    /// Never answer `initialize` (the request is still recorded).
    pub hang_initialize: bool,
    /// stdio only: write a line that is not JSON to stdout before anything else.
    pub garbage_first: bool,
    /// `instructions` in the initialize result, if any.
    pub instructions: Option<String>,
    /// The tools offered until a [`Behaviour::ChangeList`] call.
    pub tools: Vec<FakeTool>,
    /// The tools offered after a [`Behaviour::ChangeList`] call.
    pub tools_after_change: Vec<FakeTool>,
    /// Page `tools/list` by this many tools, with an opaque `nextCursor`.
    pub page_size: Option<usize>,
    /// Streamable HTTP only: answer requests with a `text/event-stream` (a call's
    /// notifications and requests to the client first, the response last) instead of
    /// `application/json`.
    pub sse_responses: bool,
    /// Streamable HTTP only: accept `GET /mcp` as a standing SSE stream (405 otherwise).
    pub get_stream: bool,
    /// Streamable HTTP only: answer `DELETE` 200 but end nothing (the session's standing
    /// streams stay open and silent until the client closes them).
    pub ignore_delete: bool,
}

impl Script {
    /// A script offering `tools`, everything else default.
    pub fn with_tools(tools: Vec<FakeTool>) -> Script {
        Script { tools, ..Script::default() }
    }
}

/// One tool the fake offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FakeTool {
    pub name: String,
    pub description: String,
    /// The tool's `inputSchema`.
    pub input_schema: Value,
    /// The tool's `annotations` (e.g. `{"readOnlyHint":true}`), left out when `None`.
    #[serde(default)]
    pub annotations: Option<Value>,
    pub behaviour: Behaviour,
}

impl FakeTool {
    /// A tool taking an optional string `text`, described as "fake tool <name>".
    pub fn new(name: &str, behaviour: Behaviour) -> FakeTool {
        FakeTool {
            name: name.to_owned(),
            description: format!("fake tool {name}"),
            input_schema: json!({
                "type": "object",
                "properties": {"text": {"type": "string", "description": "Text to echo"}},
            }),
            annotations: None,
            behaviour,
        }
    }

    /// `new` with `annotations`.
    pub fn annotated(name: &str, behaviour: Behaviour, annotations: Value) -> FakeTool {
        FakeTool { annotations: Some(annotations), ..FakeTool::new(name, behaviour) }
    }

    /// `new` with this `inputSchema`.
    pub fn with_schema(name: &str, behaviour: Behaviour, input_schema: Value) -> FakeTool {
        FakeTool { input_schema, ..FakeTool::new(name, behaviour) }
    }

    /// The tool as `tools/list` lists it.
    pub(super) fn listed(&self) -> Value {
        let mut tool = json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        });
        if let Some(annotations) = &self.annotations {
            tool["annotations"] = annotations.clone();
        }
        tool
    }
}

/// What a `tools/call` of a [`FakeTool`] does. In JSON: `"Echo"`, `{"Error":"text"}`,
/// `{"Big":100000}`, `{"Progress":3}`, `{"Raw":{…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Behaviour {
    /// Text content: the `text` argument, or the arguments' JSON if there is none.
    Echo,
    /// `isError: true` with this text.
    Error(String),
    /// A text item ("an image") then an image item (a 1×1 PNG, `image/png`).
    Image,
    /// An embedded `resource` item (`file:///fake/readme.txt`, text "resource text") and a
    /// `resource_link` item (`file:///fake/link.txt`, name "link.txt").
    Resource,
    /// Text of exactly this many bytes: a line `BIG-HEAD`, numbered filler lines, and
    /// `BIG-TAIL` as the last 8 bytes, on a line of its own (for sizes of at least 17).
    Big(usize),
    /// Never answers; a `notifications/cancelled` for it is recorded like any message.
    /// Streamable HTTP holds the POST open (an SSE answer sends its head first) until the
    /// client closes the connection or cancels the request, then closes it unanswered.
    Hang,
    /// stdio: the process exits with code 3 without answering. Streamable HTTP: the
    /// response is cut mid-way and the connection closed. Legacy SSE: the POST got its
    /// 202, then the session's event stream is cut (and the session ends).
    Crash,
    /// With a `_meta.progressToken`: that many `notifications/progress` (progress 1..=n,
    /// total n, message "step i"); then the text "done".
    Progress(u32),
    /// Answers "changed", switches the offered tools to `tools_after_change` and sends
    /// `notifications/tools/list_changed`.
    ChangeList,
    /// Only `structuredContent: {"answer":42}`, with an empty `content`.
    Structured,
    /// Sends `roots/list` to the client, waits for the answer, and answers with its
    /// `result` as JSON text (an error answer: the whole response as JSON, `isError`).
    AskRoots,
    /// Sends `ping` to the client, waits for the answer, and answers "pong".
    Ping,
    /// Sends `notifications/message` (level "warning", logger "fake-mcp", data
    /// "fake log line"), then answers "logged".
    Log,
    /// Answers with exactly this result.
    Raw(Value),
    /// Sends this many `notifications/message` (level "warning", data `FLOOD_LINE`, a
    /// number and 400 dots), then answers "flooded".
    LogFlood(usize),
}

/// The result of `initialize` for `params` (the client's).
pub(super) fn initialize_result(script: &Script, params: &Value) -> Value {
    let version = script
        .protocol_version
        .clone()
        .or_else(|| params.get("protocolVersion").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| DEFAULT_PROTOCOL_VERSION.to_owned());
    let mut result = json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": true}, "logging": {}},
        "serverInfo": {"name": SERVER_NAME, "version": "0.1.0"},
    });
    if let Some(instructions) = &script.instructions {
        result["instructions"] = json!(instructions);
    }
    result
}

/// The page of `tools/list` that `params.cursor` asks for: `Err` with a JSON-RPC error
/// for a cursor the fake did not hand out.
pub(super) fn list_page(
    tools: &[FakeTool],
    page_size: Option<usize>,
    params: &Value,
) -> Result<Value, (i64, String)> {
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(cursor) => cursor
            .as_str()
            .and_then(|c| c.strip_prefix("fake-cursor-"))
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| *n <= tools.len())
            .ok_or_else(|| (-32602, format!("invalid cursor {cursor}")))?,
    };
    let end = page_size.map_or(tools.len(), |size| (start + size.max(1)).min(tools.len()));
    let listed: Vec<Value> = tools[start..end].iter().map(FakeTool::listed).collect();
    let mut result = json!({"tools": listed});
    if end < tools.len() {
        result["nextCursor"] = json!(format!("fake-cursor-{end}"));
    }
    Ok(result)
}

/// A result with one text item.
pub(super) fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

/// A result with one text item and `isError: true`.
pub(super) fn error_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

/// The result of an [`Behaviour::Echo`] call with these arguments.
pub(super) fn echo_result(arguments: &Value) -> Value {
    match arguments.get("text").and_then(Value::as_str) {
        Some(text) => text_result(text),
        None => text_result(&arguments.to_string()),
    }
}

/// The result of [`Behaviour::Image`].
pub(super) fn image_result() -> Value {
    json!({"content": [
        {"type": "text", "text": "an image"},
        {"type": "image", "data": TINY_PNG_BASE64, "mimeType": "image/png"},
    ]})
}

/// The result of [`Behaviour::Resource`].
pub(super) fn resource_result() -> Value {
    json!({"content": [
        {"type": "resource", "resource": {
            "uri": "file:///fake/readme.txt", "mimeType": "text/plain", "text": "resource text",
        }},
        {"type": "resource_link", "uri": "file:///fake/link.txt", "name": "link.txt"},
    ]})
}

/// The result of [`Behaviour::Structured`].
pub(super) fn structured_result() -> Value {
    json!({"content": [], "structuredContent": {"answer": 42}})
}

/// The text of [`Behaviour::Big`]: exactly `n` bytes, `BIG-TAIL` on a line of its own
/// when `n` ≥ 17 (shorter: the first `n` bytes of `BIG-HEAD\nBIG-TAIL`).
pub(super) fn big_text(n: usize) -> String {
    let mut text = format!("{BIG_HEAD}\n");
    if n < text.len() + BIG_TAIL.len() {
        text.push_str(BIG_TAIL);
        text.truncate(n);
        return text;
    }
    let mut line = 0usize;
    loop {
        let filler = format!("line {line:08} of a big fake answer\n");
        if text.len() + filler.len() + BIG_TAIL.len() > n {
            break;
        }
        text.push_str(&filler);
        line += 1;
    }
    let pad = n - text.len() - BIG_TAIL.len();
    if pad > 0 {
        text.push_str(&".".repeat(pad - 1));
        text.push('\n');
    }
    text.push_str(BIG_TAIL);
    text
}
