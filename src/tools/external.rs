//! Tools that are not built in: a session's MCP servers' tools, which come and go while it
//! runs. The agent asks for them anew at every LLM request and every call; read-only
//! sub-agents see only the read-only ones.

use std::sync::Arc;

use super::Tool;

/// Tools that come and go while a session runs (its MCP servers' tools), looked at anew
/// for every LLM request and every call.
pub trait ExternalTools: Send + Sync {
    /// The tools offered now.
    fn current(&self) -> Vec<Arc<dyn Tool>>;
}

/// No external tools.
pub struct NoExternalTools;

impl ExternalTools for NoExternalTools {
    fn current(&self) -> Vec<Arc<dyn Tool>> {
        Vec::new()
    }
}

/// Another source's tools that read-only sub-agents may have.
pub struct ReadOnlyTools<'a>(pub &'a dyn ExternalTools);

impl ExternalTools for ReadOnlyTools<'_> {
    fn current(&self) -> Vec<Arc<dyn Tool>> {
        self.0.current().into_iter().filter(|t| t.access().read_only()).collect()
    }
}
