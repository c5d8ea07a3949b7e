//! Token estimates for servers that report no usage, and for the compaction threshold:
//! about four bytes per token, an image about 1,600 tokens.

use crate::history::ChatMessage;
use crate::provider::ChatRequest;

/// A rough token count for servers that report none (about four bytes per token).
pub(super) fn tokens(bytes: usize) -> u64 {
    bytes.div_ceil(4) as u64
}

/// What one image counts for in an estimate, in bytes of text (about 1,600 tokens).
const IMAGE_BYTES: usize = 1600 * 4;

/// A rough token count of a whole request: system prompt, messages and tool schemas.
pub(super) fn request(request: &ChatRequest) -> u64 {
    let mut bytes = request.system.len();
    for message in request.messages {
        bytes += 16
            + match message {
                // An image costs about 1,600 tokens on either API, whatever its bytes.
                ChatMessage::User { text, images } => text.len() + images.len() * IMAGE_BYTES,
                ChatMessage::Assistant { text, tool_calls, .. } => {
                    text.len()
                        + tool_calls
                            .iter()
                            .map(|c| c.arguments.len() + c.name.len() + 16)
                            .sum::<usize>()
                }
                ChatMessage::ToolResult { content, images, .. } => {
                    content.len() + images.len() * IMAGE_BYTES
                }
            };
    }
    for tool in request.tools {
        bytes += tool.name.len() + tool.description.len() + tool.parameters.to_string().len();
    }
    tokens(bytes)
}
