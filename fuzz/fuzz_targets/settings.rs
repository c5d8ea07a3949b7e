//! settings.json and the files like it: the user's settings as the configuration they make
//! (`config::settings` parse and `from_value`, then every value checked), the MCP servers
//! and permission rules in them, the same text as a project's `.iac-code/settings.json`
//! and as a project's `.mcp.json`. Errors, never panics.
//!
//! Input: the file's text.

#![no_main]

use iac_code::fuzzing::{project_settings, settings};
use iac_code::mcp::project::ProjectFile;
use iac_code::mcp::spec::{Origin, parse_servers};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    if let Ok(config) = settings(&text) {
        for server in parse_servers(&config.mcp.servers, Origin::Settings).into_iter().flatten() {
            let _ = server.transport.describe();
        }
    }
    let _ = project_settings(&text);
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) {
        let _ = parse_servers(&value, Origin::Client);
    }
    let file = ProjectFile { path: "/fuzz/.mcp.json".into(), text };
    let _ = (file.servers(), file.names());
});
