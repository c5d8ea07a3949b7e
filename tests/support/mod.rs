//! Shared test support for the `iac-code` integration tests: the command that starts the
//! real binary, a scripted fake LLM, scripted fake MCP servers, a real Redis server, an ACP client driving the
//! binary (over stdio, HTTP or a WebSocket), ACP schema validation and scratch workspaces.
//! The integration binary includes every module and uses all of it, so a dead-code warning
//! here is real; the web and release binaries include a part, with an allow and its reason.

pub mod acp_client;
pub mod command;
pub mod fake_llm;
pub mod fake_mcp;
pub mod http_client;
pub mod http_fixture;
pub mod procs;
pub mod pty;
pub mod redis;
pub mod registry;
pub mod schema;
pub mod screen;
pub mod skip;
pub mod workspace;
pub mod ws_client;
