//! Scripted fake MCP (Model Context Protocol) servers for the MCP client's tests: one
//! [`Script`] (how `initialize` is answered, which [`FakeTool`]s are offered and how each
//! [`Behaviour`]s) played over three transports, each recording every message it received.
//!
//! - stdio, as a real child process the client spawns: [`stdio_entry`] gives the ACP
//!   `McpServer` entry that re-executes this test binary into [`fake_mcp_stdio_entry`]
//!   (protocol on fd 3, libtest's chatter on stderr); the received messages go to a log
//!   file read back with [`received`] and [`wait_for`].
//! - Streamable HTTP and the legacy HTTP+SSE transport, in process on loopback:
//!   [`HttpMcp::start`], with the received messages and HTTP requests in memory.
//!
//! The script types live in `script`, the transport-neutral answering in `engine`, the
//! stdio server in `stdio`, the HTTP wire in `http`, the HTTP handle in `server`, the state
//! its connection threads share in `shared`, the two HTTP transports in `streamable` and
//! `legacy`, and the checks of the fakes themselves in `tests`.

mod engine;
mod http;
mod legacy;
mod script;
mod server;
mod shared;
mod stdio;
mod streamable;
mod tests;

// The API for the tests to come: not all of it is used yet.
#[allow(unused_imports)]
pub use script::{
    BIG_HEAD, BIG_TAIL, Behaviour, DEFAULT_PROTOCOL_VERSION, FLOOD_LINE, FakeTool, SERVER_NAME,
    Script, TINY_PNG_BASE64,
};
#[allow(unused_imports)]
pub use server::{HttpKind, HttpMcp, TEST_TOKEN};
#[allow(unused_imports)]
pub use shared::Seen;
#[allow(unused_imports)]
pub use stdio::{
    CRASH_EXIT_CODE, ENTRY_TEST, GARBAGE_LINE, LOG_ENV, SCRIPT_ENV, StdioHandles, stdio_entry,
};

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

/// How often [`wait_for`] looks at a stdio server's log again.
const LOG_POLL: Duration = Duration::from_millis(10);

/// The stdio server's entry point: a no-op in a normal test run; in the re-executed test
/// binary launched by a [`stdio_entry`] command (`FAKE_MCP_SCRIPT` set) it serves the
/// script and exits the process.
#[test]
fn fake_mcp_stdio_entry() {
    if let Some(script) = std::env::var_os(SCRIPT_ENV) {
        let log = std::env::var_os(LOG_ENV);
        let code = stdio::serve(Path::new(&script), log.as_deref().map(Path::new));
        std::process::exit(code);
    }
}

/// The messages a stdio server recorded in `log`, in order (nothing if it never started).
/// A line that was not JSON is recorded as a JSON string.
pub fn received(log: &Path) -> Vec<Value> {
    let Ok(text) = std::fs::read_to_string(log) else { return Vec::new() };
    text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
}

/// The first message in `log` satisfying `predicate`, waiting up to `timeout` for the
/// server process to record it (the log is re-read every 10 ms: a bounded wait for
/// another process's output).
pub fn wait_for(
    log: &Path,
    predicate: impl Fn(&Value) -> bool,
    timeout: Duration,
) -> Option<Value> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(found) = received(log).into_iter().find(|m| predicate(m)) {
            return Some(found);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(LOG_POLL);
    }
}

/// A predicate for `wait_for`: the message has this `method`.
pub fn has_method(method: &str) -> impl Fn(&Value) -> bool + '_ {
    move |message| message.get("method").and_then(Value::as_str) == Some(method)
}

/// The messages among `messages` with this `method`.
pub fn with_method<'a>(messages: &'a [Value], method: &str) -> Vec<&'a Value> {
    messages.iter().filter(|m| has_method(method)(m)).collect()
}

/// A `.mcp.json` document: `{"mcpServers": {name: entry, …}}` (entries from
/// `mcp_json_entry`).
pub fn mcp_json(servers: &[(&str, Value)]) -> Value {
    let servers: Map<String, Value> =
        servers.iter().map(|(name, entry)| ((*name).to_owned(), entry.clone())).collect();
    json!({"mcpServers": servers})
}
