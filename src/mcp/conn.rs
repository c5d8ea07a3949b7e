//! Opening one connection: the transport, then `initialize` with version negotiation,
//! `notifications/initialized`, and the tool list (every page). All of it inside one
//! deadline; a failure closes what was opened and says why in one line.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::http::{HttpSetup, StreamableLink};
use super::peer::{CallError, Link, Peer};
use super::reach;
use super::spec::{ServerSpec, Transport};
use super::sse::SseLink;
use super::stdio;

/// Every MCP version this client speaks, newest first; `initialize` asks for the first.
pub const VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// Pages of `tools/list` read at most.
const MAX_PAGES: usize = 100;
/// Tools taken from one server at most.
const MAX_TOOLS: usize = 500;
/// A tool description longer than this is cut (it goes to the model with every request).
const MAX_DESCRIPTION: usize = 2048;
/// An input schema larger than this (as JSON) is not passed on.
const MAX_SCHEMA: usize = 32 << 10;
/// A tool name longer than this (bytes) is left out: the model gets any name hashed to 64
/// characters (`names.rs`), but the server gets it back as it is with every call.
pub const MAX_TOOL_NAME: usize = 1024;

/// What opening a connection needs besides the entry.
#[derive(Clone)]
pub struct Setup {
    /// The session cwd (the stdio server's cwd and the root it is told about).
    pub cwd: std::path::PathBuf,
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// How long one tool call may take.
    pub call_timeout: Duration,
    /// The agent for HTTP servers (site CA, proxy).
    pub agent: ureq::Agent,
    /// Whether a client's URLs may reach internal addresses (`IAC_CODE_MCP_INTERNAL`).
    pub client_internal: bool,
    /// The config dir whose approvals a project's server needs at every start; `None`:
    /// the caller checked.
    pub approvals: Option<std::path::PathBuf>,
    /// Bytes of tool definitions (name, description, schema) a session's servers may offer
    /// together (`IAC_CODE_MCP_TOOLS_MAX_BYTES`): they go with every LLM request.
    pub tools_max_bytes: usize,
}

/// `Setup::tools_max_bytes` unless configured.
pub const DEFAULT_TOOLS_MAX_BYTES: usize = crate::config::MCP_TOOLS_MAX_BYTES;

/// A tool as the server describes it.
#[derive(Debug, Clone)]
pub struct RemoteTool {
    pub name: String,
    pub description: String,
    pub schema: Value,
    /// `annotations.title` or `title`.
    pub title: Option<String>,
    /// `annotations.readOnlyHint`.
    pub read_only: bool,
    /// `annotations.openWorldHint`.
    pub open_world: bool,
}

/// An open connection.
pub struct Conn {
    pub(super) peer: Arc<Peer>,
    /// The negotiated protocol version.
    pub version: String,
    /// `serverInfo` as "name version".
    pub server_info: String,
    /// What its tool list held that is not offered, and why (told in `/mcp` and the log).
    pub left_out: Vec<String>,
}

impl Conn {
    /// Calls one tool and waits (at most `timeout`) for its result: `tools/call` without a
    /// session around it (for `iac-code mcp` and the benchmarks).
    pub fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        timeout: Duration,
    ) -> Result<Value, String> {
        let params = json!({ "name": name, "arguments": arguments });
        self.peer.request("tools/call", params, timeout, None, &|_| {}).map_err(|e| e.to_string())
    }

    /// Ends the connection.
    pub fn close(&self) {
        self.peer.close();
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.close();
    }
}

/// Connects to `spec` and reads its tools.
pub fn connect(spec: &ServerSpec, setup: &Setup) -> Result<(Conn, Vec<RemoteTool>), String> {
    let deadline = Instant::now() + setup.connect_timeout;
    reach::may_start(spec, setup)?;
    let peer = Peer::new(&spec.name, setup.cwd.clone());
    let link: Arc<dyn Link> = match &spec.transport {
        Transport::Stdio { command, args, env } => {
            stdio::start(command, args, env, Path::new(&setup.cwd), &peer)?
        }
        Transport::Http { url, headers } | Transport::Sse { url, headers } => {
            // Its own agent (pinned to the judged addresses for a client's URL), shut down
            // on close: silent streams end at once.
            let http = match reach::agent_for(spec, url, setup, deadline)? {
                Some(agent) => HttpSetup { agent, url: url.clone(), headers: headers.clone() },
                None => HttpSetup::own(&setup.agent, url, headers),
            };
            peer.quiet();
            match &spec.transport {
                Transport::Sse { .. } => SseLink::start(http, &peer, setup.connect_timeout)?,
                _ => StreamableLink::new(http, &peer),
            }
        }
    };
    peer.attach(Arc::clone(&link));
    // From here on the connection closes with `conn` if anything fails.
    let mut conn =
        Conn { peer, version: String::new(), server_info: String::new(), left_out: Vec::new() };
    let left = || deadline.saturating_duration_since(Instant::now());
    let params = json!({
        "protocolVersion": VERSIONS[0],
        "capabilities": { "roots": { "listChanged": false } },
        "clientInfo": { "name": "iac-code", "version": env!("CARGO_PKG_VERSION") },
    });
    let answer = conn
        .peer
        .request("initialize", params, left(), None, &|_| {})
        .map_err(|err| during("initialize", err))?;
    let version = answer.get("protocolVersion").and_then(Value::as_str).unwrap_or_default();
    if !VERSIONS.contains(&version) {
        return Err(format!(
            "the server speaks MCP version '{version}', which this client does not know \
             (it speaks {})",
            VERSIONS.join(", ")
        ));
    }
    conn.version = version.to_string();
    link.set_version(version);
    let info = &answer["serverInfo"];
    conn.server_info = format!(
        "{} {}",
        info.get("name").and_then(Value::as_str).unwrap_or("?"),
        info.get("version").and_then(Value::as_str).unwrap_or("")
    )
    .trim()
    .to_string();
    conn.peer.notify("notifications/initialized", Value::Null);
    link.opened();
    if answer.pointer("/capabilities/tools").is_none() {
        return Ok((conn, Vec::new()));
    }
    let listing = list_tools(&conn, left()).map_err(|err| during("tools/list", err))?;
    conn.left_out = listing.left_out;
    Ok((conn, listing.tools))
}

fn during(step: &str, err: CallError) -> String {
    match err {
        CallError::Timeout(after) => {
            format!("no answer to {step} within {} s", after.as_secs_f64().round())
        }
        other => format!("{step} failed: {other}"),
    }
}

/// A server's tool list as read: what is offered, and what is not and why.
#[derive(Debug, Default)]
pub struct Listing {
    pub tools: Vec<RemoteTool>,
    /// One line per reason, naming the tools (or how many) it left out.
    pub left_out: Vec<String>,
}

/// Every page of `tools/list`. A tool that cannot be offered (no name, a name over
/// `MAX_TOOL_NAME`, past `MAX_TOOLS`) is left out and said so, never dropped silently.
pub fn list_tools(conn: &Conn, timeout: Duration) -> Result<Listing, CallError> {
    let deadline = Instant::now() + timeout;
    let mut tools = Vec::new();
    let mut unnamed = 0usize;
    let mut long_names = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = match &cursor {
            Some(cursor) => json!({ "cursor": cursor }),
            None => json!({}),
        };
        let left = deadline.saturating_duration_since(Instant::now());
        let page = conn.peer.request("tools/list", params, left, None, &|_| {})?;
        for tool in page.get("tools").and_then(Value::as_array).into_iter().flatten() {
            match remote_tool(tool) {
                Ok(tool) => tools.push(tool),
                Err(None) => unnamed += 1,
                Err(Some(name)) => long_names.push(name),
            }
        }
        cursor = page.get("nextCursor").and_then(Value::as_str).map(str::to_string);
        if cursor.is_none() || tools.len() >= MAX_TOOLS {
            break;
        }
    }
    // Pages not read (past the tools taken, or past `MAX_PAGES`) are said to exist.
    let unread = if cursor.is_some() { " or more (pages not read)" } else { "" };
    let mut left_out = Vec::new();
    if unnamed > 0 {
        left_out.push(format!("{unnamed} tool(s) without a name"));
    }
    if !long_names.is_empty() {
        let shown: Vec<String> = long_names
            .iter()
            .map(|n| format!("'{}' ({} bytes)", crate::text::Title::bounded(None, n, 40), n.len()))
            .collect();
        left_out.push(format!(
            "{} tool(s) named with more than {MAX_TOOL_NAME} bytes: {}",
            long_names.len(),
            shown.join(", ")
        ));
    }
    if tools.len() > MAX_TOOLS || !unread.is_empty() {
        left_out.push(format!(
            "{}{unread} tool(s) past the first {} read",
            tools.len().saturating_sub(MAX_TOOLS),
            tools.len().min(MAX_TOOLS)
        ));
    }
    tools.truncate(MAX_TOOLS);
    Ok(Listing { tools, left_out })
}

/// The tool as offered, or why not: `Err(None)` without a name, `Err(Some(name))` for a
/// name over `MAX_TOOL_NAME` (a name is sent back as it is, so it must be bounded).
pub(super) fn remote_tool(tool: &Value) -> Result<RemoteTool, Option<String>> {
    let name = tool.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()).ok_or(None)?;
    if name.len() > MAX_TOOL_NAME {
        return Err(Some(name.to_string()));
    }
    let hint = |key: &str| tool.pointer(&format!("/annotations/{key}")).and_then(Value::as_bool);
    let title = tool
        .pointer("/annotations/title")
        .or_else(|| tool.get("title"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let description = tool.get("description").and_then(Value::as_str).unwrap_or("");
    let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
    // `Value::String` stands for a schema too large to pass on (`tool::model_schema` says so).
    let size = schema.to_string().len();
    let schema =
        if size > MAX_SCHEMA { Value::String(format!("{} KiB", size >> 10)) } else { schema };
    Ok(RemoteTool {
        name: name.to_string(),
        description: crate::text::clip(description, MAX_DESCRIPTION),
        schema,
        title,
        read_only: hint("readOnlyHint") == Some(true),
        open_world: hint("openWorldHint") == Some(true),
    })
}
