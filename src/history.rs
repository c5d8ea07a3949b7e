//! The conversation as the agent keeps it: internal types, not wire types and not
//! `Serialize` (persisted records get their own versioned structs).

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    /// What the user said (prompt content already flattened to text).
    User {
        text: String,
        /// Images attached to the prompt (only when the model accepts images).
        images: Vec<Image>,
    },
    /// What the model said.
    Assistant {
        text: String,
        /// Reasoning, if the model streamed any.
        thinking: String,
        /// The reasoning as the provider signed it (Anthropic), to send it back intact.
        signed: Vec<SignedThinking>,
        /// Tool calls requested, in order.
        tool_calls: Vec<ToolUse>,
    },
    /// The result of one tool call.
    ToolResult {
        /// Id of the call (as the model named it).
        call_id: String,
        /// Text handed back to the model.
        content: String,
        /// Whether the call failed.
        is_error: bool,
        /// Images the tool returned (only when the model accepts images).
        images: Vec<Image>,
    },
}

/// An image in a prompt, as the client sent it, or in a tool's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// MIME type, e.g. `image/png`.
    pub mime: String,
    /// Base64 data.
    pub data: String,
}

/// Image types both APIs accept.
pub const IMAGE_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

/// The largest image sent, in characters of base64: Anthropic refuses more than 5 MiB of
/// base64 (about 3.75 MiB of image).
pub const MAX_IMAGE_BASE64: usize = 5 * 1024 * 1024;

impl Image {
    /// An image both provider APIs accept (type, size, base64), or why it is not one. A
    /// `data:` URI is taken for its payload.
    pub fn checked(mime: &str, data: &str) -> Result<Image, String> {
        let mut mime = mime.trim().to_ascii_lowercase();
        if mime == "image/jpg" {
            mime = "image/jpeg".into();
        }
        let mut data = data.trim();
        if let Some(rest) = data.strip_prefix("data:")
            && let Some((_, payload)) = rest.split_once(";base64,")
        {
            data = payload;
        }
        if !IMAGE_TYPES.contains(&mime.as_str()) {
            return Err(format!("the type must be one of {}", IMAGE_TYPES.join(", ")));
        }
        if data.is_empty() {
            return Err("it has no data".into());
        }
        if data.len() > MAX_IMAGE_BASE64 {
            return Err(format!(
                "{} KiB of base64 is over the 5 MiB limit (about 3.75 MiB of image)",
                data.len() / 1024
            ));
        }
        if !data.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')) {
            return Err("its data is not base64".into());
        }
        Ok(Image { mime, data: data.to_string() })
    }
}

/// One block of reasoning as the provider signed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedThinking {
    /// The reasoning text, or for a redacted block its opaque data.
    pub thinking: String,
    /// The signature (empty for a redacted block).
    pub signature: String,
    /// A `redacted_thinking` block.
    pub redacted: bool,
}

/// A tool call as the model made it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolUse {
    /// The model's id for the call.
    pub id: String,
    pub name: String,
    /// Arguments, as the JSON text the model produced.
    pub arguments: String,
}

/// Gives every tool call of the last assistant message that has no result an error result
/// saying `reason`, so the next request is well formed. Returns how many were added.
pub fn close_unanswered(history: &mut Vec<ChatMessage>, reason: &str) -> usize {
    let Some(last_assistant) =
        history.iter().rposition(|m| matches!(m, ChatMessage::Assistant { .. }))
    else {
        return 0;
    };
    let ChatMessage::Assistant { tool_calls, .. } = &history[last_assistant] else { return 0 };
    let answered: Vec<&str> = history[last_assistant..]
        .iter()
        .filter_map(|m| match m {
            ChatMessage::ToolResult { call_id, .. } => Some(call_id.as_str()),
            ChatMessage::User { .. } | ChatMessage::Assistant { .. } => None,
        })
        .collect();
    let missing: Vec<String> = tool_calls
        .iter()
        .filter(|c| !answered.contains(&c.id.as_str()))
        .map(|c| c.id.clone())
        .collect();
    let added = missing.len();
    history.extend(missing.into_iter().map(|call_id| error_result(call_id, reason)));
    added
}

/// The error result of a tool call that never ran (or whose run was lost), saying why.
pub fn error_result(call_id: String, reason: &str) -> ChatMessage {
    ChatMessage::ToolResult {
        call_id,
        content: reason.to_string(),
        is_error: true,
        images: Vec::new(),
    }
}

/// Histories for unit tests, built in one line each.
#[cfg(test)]
pub mod fixtures {
    use super::*;

    /// A user message.
    pub fn user(text: &str) -> ChatMessage {
        ChatMessage::User { text: text.into(), images: Vec::new() }
    }

    /// An assistant message with no text that calls `bash` once per id.
    pub fn calls(ids: &[&str]) -> ChatMessage {
        let uses = ids
            .iter()
            .map(|id| ToolUse { id: (*id).into(), name: "bash".into(), arguments: "{}".into() })
            .collect();
        ChatMessage::Assistant {
            text: String::new(),
            thinking: String::new(),
            signed: Vec::new(),
            tool_calls: uses,
        }
    }

    /// A successful tool result.
    pub fn result(id: &str, content: &str) -> ChatMessage {
        ChatMessage::ToolResult {
            call_id: id.into(),
            content: content.into(),
            is_error: false,
            images: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{calls, result, user};
    use super::*;

    #[test]
    fn unanswered_calls_get_error_results() {
        let mut history = vec![user("hi"), calls(&["a", "b"]), result("a", "ok")];
        assert_eq!(close_unanswered(&mut history, "cancelled"), 1);
        assert_eq!(
            history.last(),
            Some(&ChatMessage::ToolResult {
                call_id: "b".into(),
                content: "cancelled".into(),
                is_error: true,
                images: Vec::new(),
            })
        );
        assert_eq!(close_unanswered(&mut history, "cancelled"), 0);
    }
}
