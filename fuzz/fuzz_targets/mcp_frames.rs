//! What an MCP server sends, as the client reads it: stdio lines, an event stream (with
//! `endpoint` events), or one POST answer, delivered to a connection with requests waiting,
//! each answer read as a tool list, a tool result and a schema. Nothing may panic, every
//! message we send back must be a JSON-RPC response, and an `endpoint` we accept must keep
//! the configured server's scheme, host and port as `ureq` will parse them.
//!
//! Input: one byte for the framing (0 lines, 1 events, else one body), then the bytes.

#![no_main]

use iac_code::fuzzing::{MCP_BASE, mcp_endpoint, mcp_frames};
use iac_code::jsonrpc::{self, Message};
use libfuzzer_sys::fuzz_target;

/// Scheme, host and port of `url` as the HTTP client sees them.
fn authority(url: &str) -> Option<(String, String, Option<u16>)> {
    let uri: http::Uri = url.parse().ok()?;
    Some((uri.scheme_str()?.to_ascii_lowercase(), uri.host()?.to_ascii_lowercase(), uri.port_u16()))
}

fn check_endpoint(base: &str, found: &Result<String, String>) {
    if let Ok(url) = found {
        let ours = authority(base).expect("the base parses");
        if let Some(theirs) = authority(url) {
            assert_eq!(theirs, ours, "{url} leaves {base}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let [framing, bytes @ ..] = data else { return };
    let run = mcp_frames(bytes, *framing);
    for sent in &run.sent {
        let parsed = jsonrpc::parse(sent);
        assert!(matches!(parsed, Ok(Message::Response(_))), "we sent {sent:?}");
    }
    for found in &run.endpoints {
        check_endpoint(MCP_BASE, found);
    }
    // The whole input as one endpoint, against a base with and without a path.
    let text = String::from_utf8_lossy(bytes);
    for base in [MCP_BASE, "https://Example.COM:8443", "http://[::1]:9/a/b/"] {
        check_endpoint(base, &mcp_endpoint(base, text.trim()));
    }
});
