//! Prompt content blocks → the text the model reads. Lenient: an unknown or malformed
//! block becomes a visible marker, never a failed prompt.

use serde_json::Value;

use crate::history::Image;

/// Flattens prompt blocks into one user message (blocks joined by a blank line).
pub fn prompt_text(blocks: &[Value]) -> String {
    let parts: Vec<String> = blocks.iter().map(block_text).filter(|p| !p.is_empty()).collect();
    parts.join("\n\n")
}

/// The prompt's text, and its images when the model accepts them. An image that is not
/// sent (the model takes none, or this one is of a type or size no API accepts) stays a
/// text marker that says why, so one bad block never fails the whole prompt.
pub fn prompt_input(blocks: &[Value], images: bool) -> (String, Vec<Image>) {
    if !images {
        return (prompt_text(blocks), Vec::new());
    }
    let mut found = Vec::new();
    let mut rest = Vec::new();
    for block in blocks {
        if block.get("type").and_then(Value::as_str) != Some("image") {
            rest.push(block.clone());
            continue;
        }
        match usable_image(block) {
            Ok(image) => found.push(image),
            Err(why) => {
                let mime = block.get("mimeType").and_then(Value::as_str).unwrap_or("");
                log::warn!("prompt image not sent: {why}");
                rest.push(Value::String(format!("[image: {} not sent: {why}]", or_unknown(mime))));
            }
        }
    }
    (prompt_text(&rest), found)
}

/// The image of an `image` block, or why it cannot be sent.
fn usable_image(block: &Value) -> Result<Image, String> {
    let field = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
    Image::checked(field("mimeType"), field("data"))
}

fn block_text(block: &Value) -> String {
    let s = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
    let kind = s("type");
    match kind {
        // A marker already written by `prompt_input`.
        _ if block.is_string() => block.as_str().unwrap_or("").to_string(),
        "text" => s("text").to_string(),
        "image" => format!("[image: {}]", or_unknown(s("mimeType"))),
        "audio" => format!("[audio: {}]", or_unknown(s("mimeType"))),
        "resource_link" => {
            let mut out = format!("<resource_link uri='{}' name='{}'", s("uri"), s("name"));
            if let Some(mime) = block.get("mimeType").and_then(Value::as_str) {
                out.push_str(&format!(" mimeType='{mime}'"));
            }
            out.push_str(" />");
            out
        }
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let r = |key: &str| resource.get(key).and_then(Value::as_str);
            let uri = r("uri").unwrap_or("");
            match (r("text"), r("blob")) {
                (Some(text), _) => format!("<resource uri='{uri}'>\n{text}\n</resource>"),
                (None, Some(blob)) => format!(
                    "[binary resource: {uri} ({}, {} bytes base64) not shown]",
                    or_unknown(r("mimeType").unwrap_or("")),
                    blob.len()
                ),
                (None, None) => format!("[resource: {uri} (no content)]"),
            }
        }
        other => {
            log::warn!("unsupported prompt content block type '{other}'");
            format!("[unsupported content: {}]", or_unknown(other))
        }
    }
}

fn or_unknown(s: &str) -> &str {
    if s.is_empty() { "unknown" } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_block_kind_reaches_the_model() {
        let blocks = [
            json!({"type":"text","text":"Why?"}),
            json!({"type":"resource","resource":{"uri":"file:///p/main.tf","text":"x = 1"}}),
            json!({"type":"resource_link","uri":"file:///p/vars.tf","name":"vars.tf"}),
            json!({"type":"image","mimeType":"image/png","data":"AA=="}),
            json!({"type":"audio","mimeType":"audio/wav","data":"AA=="}),
            json!({"type":"resource","resource":{"uri":"file:///p/a.bin","blob":"AAAA"}}),
            json!({"type":"hologram"}),
            json!(42),
        ];
        let text = prompt_text(&blocks);
        for want in [
            "Why?",
            "<resource uri='file:///p/main.tf'>\nx = 1\n</resource>",
            "<resource_link uri='file:///p/vars.tf' name='vars.tf' />",
            "[image: image/png]",
            "[audio: audio/wav]",
            "[binary resource: file:///p/a.bin (unknown, 4 bytes base64) not shown]",
            "[unsupported content: hologram]",
            "[unsupported content: unknown]",
        ] {
            assert!(text.contains(want), "missing {want:?} in {text}");
        }
    }

    #[test]
    fn only_images_an_api_accepts_are_sent() {
        let blocks = [
            json!({"type":"text","text":"compare"}),
            json!({"type":"image","mimeType":"image/PNG","data":"iVBORw0KGgo="}),
            json!({"type":"image","mimeType":"image/jpg","data":"data:image/jpeg;base64,/9j/4A=="}),
            json!({"type":"image","mimeType":"image/bmp","data":"Qk0="}),
            json!({"type":"image","mimeType":"image/png","data":"not base64!"}),
            json!({"type":"image","mimeType":"image/png"}),
            json!({"type":"image","mimeType":"image/gif","data":"R".repeat(crate::history::MAX_IMAGE_BASE64 + 1)}),
        ];
        let (text, images) = prompt_input(&blocks, true);
        let sent: Vec<(&str, &str)> =
            images.iter().map(|i| (i.mime.as_str(), i.data.as_str())).collect();
        assert_eq!(sent, [("image/png", "iVBORw0KGgo="), ("image/jpeg", "/9j/4A==")]);
        for want in [
            "compare",
            "[image: image/bmp not sent: the type must be one of",
            "[image: image/png not sent: its data is not base64]",
            "[image: image/png not sent: it has no data]",
            "[image: image/gif not sent: 5120 KiB of base64 is over the 5 MiB limit",
        ] {
            assert!(text.contains(want), "missing {want:?} in {text}");
        }
        let (text, images) = prompt_input(&blocks[..2], false);
        assert!(images.is_empty() && text.contains("[image: image/PNG]"));
    }
}
