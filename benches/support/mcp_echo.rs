//! A minimal MCP server over stdio: `initialize`, `tools/list` with one tool, and `echo`
//! calls answered "pong". The `mcp` bench builds this file with rustc as a program, and
//! uses `answer` itself in its HTTP server, so both transports answer alike.

use std::io::{BufRead, Write};

/// The answer to a request line (`None` for a notification).
pub fn answer(line: &str) -> Option<String> {
    if !line.contains("\"method\"") {
        return None;
    }
    let id: String =
        line.split("\"id\":").nth(1)?.chars().take_while(char::is_ascii_digit).collect();
    let result = if line.contains("\"initialize\"") {
        r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"echo","version":"1"}}"#
    } else if line.contains("\"tools/list\"") {
        r#"{"tools":[{"name":"echo","description":"echo","inputSchema":{"type":"object","properties":{}}}]}"#
    } else {
        r#"{"content":[{"type":"text","text":"pong"}]}"#
    };
    (!id.is_empty()).then(|| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#))
}

#[allow(dead_code)]
fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if let Some(answer) = answer(&line) {
            let _ = writeln!(out, "{answer}");
            let _ = out.flush();
        }
    }
}
