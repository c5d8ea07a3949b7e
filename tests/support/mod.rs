//! Shared test support for the `iac-code` integration tests: the command that starts the
//! real binary, a scripted fake LLM, scripted fake MCP servers, a real Redis server, an ACP client driving the
//! binary (over stdio, HTTP or a WebSocket), ACP schema validation and scratch workspaces.

#[allow(dead_code)]
pub mod acp_client;
#[allow(dead_code)]
pub mod command;
#[allow(dead_code)]
pub mod fake_llm;
#[allow(dead_code)]
pub mod fake_mcp;
#[allow(dead_code)]
pub mod http_client;
#[allow(dead_code)]
pub mod http_fixture;
#[allow(dead_code)]
pub mod procs;
#[allow(dead_code)]
pub mod pty;
#[allow(dead_code)]
pub mod redis;
#[allow(dead_code)]
pub mod registry;
#[allow(dead_code)]
pub mod schema;
#[allow(dead_code)]
pub mod screen;
#[allow(dead_code)]
pub mod workspace;
#[allow(dead_code)]
pub mod ws_client;
