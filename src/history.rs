//! The conversation as the agent keeps it: internal types, not wire types and not
//! `Serialize` (persisted records get their own versioned structs). An `Image` is checked
//! before it enters (type, size, base64, and its bytes' signature), and a request carries
//! only the most recent images (`recent_images`): older ones become a note.

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
/// Base64 characters of images one request carries at most: the most recent images of the
/// conversation (they would otherwise be sent again with every request).
pub const MAX_SENT_IMAGES_BASE64: usize = 10 * 1024 * 1024;
/// Images one request carries at most.
pub const MAX_SENT_IMAGES: usize = 20;

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
        match sniff(&head_bytes(data)) {
            Some(found) if found == mime => Ok(Image { mime, data: data.to_string() }),
            Some(found) => Err(format!("it says {mime}, but its bytes are {found}")),
            None => Err(format!("its bytes are not {mime} (no {mime} signature)")),
        }
    }

    /// Its size in KiB of image (not of base64).
    fn kib(&self) -> usize {
        (self.data.len() / 4 * 3).div_ceil(1024)
    }
}

/// The first bytes (at most 12) of base64 `data`.
fn head_bytes(data: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(12);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in data.bytes().take(16) {
        let value = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => break,
        };
        acc = (acc << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// The image type whose signature `bytes` start with (PNG, JPEG, GIF, WebP).
fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// `messages` as a request carries them: the most recent images, up to
/// `MAX_SENT_IMAGES` of them (past it, the oldest go by batches of half of it) and
/// `MAX_SENT_IMAGES_BASE64` characters; each older one is replaced by a note in its
/// message's text. Borrowed when nothing is left out.
pub fn recent_images(messages: &[ChatMessage]) -> std::borrow::Cow<'_, [ChatMessage]> {
    fn images(message: &ChatMessage) -> &[Image] {
        match message {
            ChatMessage::User { images, .. } | ChatMessage::ToolResult { images, .. } => images,
            ChatMessage::Assistant { .. } => &[],
        }
    }
    // Past the cap, the oldest images go in batches of half the cap, counted from the
    // first image: the cut moves once every `BATCH` new images, not at each one, so the
    // requests in between keep a byte-identical prefix (a provider's prompt cache).
    const BATCH: usize = MAX_SENT_IMAGES / 2;
    let total: usize = messages.iter().map(|m| images(m).len()).sum();
    let allowed = match total.checked_sub(MAX_SENT_IMAGES) {
        None | Some(0) => total,
        Some(over) => total - over.div_ceil(BATCH) * BATCH,
    };
    let (mut count, mut size) = (0usize, 0usize);
    // How many of each message's images (its last ones) are kept, from the end.
    let mut keep = vec![usize::MAX; messages.len()];
    let mut cut = false;
    for (at, message) in messages.iter().enumerate().rev() {
        let list = images(message);
        let mut kept = 0;
        for image in list.iter().rev() {
            if count < allowed && size + image.data.len() <= MAX_SENT_IMAGES_BASE64 {
                (count, size, kept) = (count + 1, size + image.data.len(), kept + 1);
            } else {
                // Older images are left out even when a smaller one would still fit.
                (count, size) = (MAX_SENT_IMAGES, MAX_SENT_IMAGES_BASE64);
            }
        }
        if kept < list.len() {
            keep[at] = kept;
            cut = true;
        }
    }
    if !cut {
        return std::borrow::Cow::Borrowed(messages);
    }
    let mut out = messages.to_vec();
    for (message, keep) in out.iter_mut().zip(keep) {
        let (ChatMessage::User { text, images }
        | ChatMessage::ToolResult { content: text, images, .. }) = message
        else {
            continue;
        };
        if keep >= images.len() {
            continue;
        }
        let dropped: Vec<Image> = images.drain(..images.len() - keep).collect();
        for image in dropped {
            text.push_str(&format!(
                "\n[image ({}, {} KiB) no longer sent: a request carries only the most recent \
                 {MAX_SENT_IMAGES} images and {} MiB of them]",
                image.mime,
                image.kib(),
                MAX_SENT_IMAGES_BASE64 >> 20
            ));
        }
    }
    std::borrow::Cow::Owned(out)
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

    #[test]
    fn an_image_is_what_it_says_and_old_images_are_not_sent_again() {
        let png = "iVBORw0KGgo=";
        assert_eq!(Image::checked("image/png", png).map(|i| i.mime), Ok("image/png".into()));
        assert!(Image::checked("image/jpeg", "/9j/4AAQSkZJRg==").is_ok());
        assert!(Image::checked("image/gif", "R0lGODlhAQABAAAAACw=").is_ok());
        assert!(Image::checked("image/webp", "UklGRiQAAABXRUJQVlA4IBgAAAAw").is_ok());
        let lie = Image::checked("image/jpeg", png).unwrap_err();
        assert_eq!(lie, "it says image/jpeg, but its bytes are image/png");
        let text = Image::checked("image/png", "PHN2Zz4=").unwrap_err();
        assert!(text.contains("not image/png"), "{text}");
        // Four big images per result, three results: only the most recent go again.
        let big = Image { mime: "image/png".into(), data: "A".repeat(MAX_IMAGE_BASE64 - 8) };
        let shot = |id: &str| ChatMessage::ToolResult {
            call_id: id.into(),
            content: "shot".into(),
            is_error: false,
            images: vec![big.clone(); 4],
        };
        let history = vec![user("go"), calls(&["a"]), shot("a"), calls(&["b"]), shot("b")];
        let sent = recent_images(&history);
        let kept: Vec<usize> = sent
            .iter()
            .map(|m| match m {
                ChatMessage::ToolResult { images, .. } => images.len(),
                _ => 0,
            })
            .collect();
        assert_eq!(kept, [0, 0, 0, 0, 2], "the newest two of 5 MiB fit in 10 MiB");
        let ChatMessage::ToolResult { content, .. } = &sent[2] else { panic!() };
        assert_eq!(content.matches("no longer sent").count(), 4, "{content}");
        let small = [user("go"), calls(&["a"]), shot("a")];
        assert!(matches!(recent_images(&small[..2]), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn past_the_image_cap_the_cut_moves_by_batches() {
        let tiny = Image { mime: "image/png".into(), data: "A".repeat(64) };
        let shot =
            |n: usize| ChatMessage::User { text: format!("{n}"), images: vec![tiny.clone()] };
        let kept = |n: usize| {
            let history: Vec<ChatMessage> = (0..n).map(shot).collect();
            let sent = recent_images(&history);
            let first = sent
                .iter()
                .position(|m| matches!(m, ChatMessage::User { images, .. } if !images.is_empty()));
            (first.unwrap_or(n), sent.into_owned())
        };
        assert_eq!(kept(MAX_SENT_IMAGES).0, 0, "at the cap all are sent");
        let (cut, first) = kept(MAX_SENT_IMAGES + 1);
        assert_eq!(cut, MAX_SENT_IMAGES / 2, "one over drops a whole batch");
        for n in MAX_SENT_IMAGES + 2..=MAX_SENT_IMAGES + MAX_SENT_IMAGES / 2 {
            let (same, sent) = kept(n);
            assert_eq!(same, cut, "{n} images: the cut stays where it was");
            assert_eq!(sent[..first.len()], first[..], "{n}: the earlier messages are unchanged");
        }
        assert_eq!(kept(MAX_SENT_IMAGES + MAX_SENT_IMAGES / 2 + 1).0, MAX_SENT_IMAGES);
    }
}
