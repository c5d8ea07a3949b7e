//! Entry points for the fuzz targets in `fuzz/` (`cargo fuzz`, a crate outside the
//! workspace build; `fuzz/run.sh` runs them). Not an API: hidden from the documentation,
//! and nothing else uses it. Every parser that reads bytes from outside is reachable as a
//! pure function: those already public (`jsonrpc::read_capped_line` and `jsonrpc::parse`,
//! `session::record::Rebuilt::from_journal`, `shell::parse`, `infra::classify`,
//! `infra::plan::summarise`, `rules::Rule::parse`) directly, the others through the `fuzz`
//! file of their own module, which drives that module's private reader from memory as its
//! I/O would, and which are re-exported here.

pub use crate::commands::transfer::read_export;
pub use crate::config::fuzz::{project_settings, settings};
pub use crate::mcp::fuzz::frames as mcp_frames;
pub use crate::mcp::fuzz::{BASE as MCP_BASE, McpRun, endpoint as mcp_endpoint};
pub use crate::provider::fuzz::{Replay, SseRun, anthropic, anthropic_whole};
pub use crate::provider::fuzz::{openai, openai_whole, sse_events};
pub use crate::transport::http::fuzz::{
    MAX_BODY as HTTP_MAX_BODY, Seen, requests as http_requests,
};
