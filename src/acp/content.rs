//! Prompt content blocks → the text the model reads. Lenient: an unknown or malformed
//! block becomes a visible marker, never a failed prompt.

use serde_json::Value;

use crate::agent::history::Image;

/// Flattens prompt blocks into one user message (blocks joined by a blank line).
pub fn prompt_text(blocks: &[Value]) -> String {
    let parts: Vec<String> = blocks.iter().map(block_text).filter(|p| !p.is_empty()).collect();
    parts.join("\n\n")
}

/// The prompt's text, and its images when the model accepts them (otherwise an image
/// stays a text marker).
pub fn prompt_input(blocks: &[Value], images: bool) -> (String, Vec<Image>) {
    if !images {
        return (prompt_text(blocks), Vec::new());
    }
    let mut found = Vec::new();
    let mut rest = Vec::new();
    for block in blocks {
        let field = |key: &str| block.get(key).and_then(Value::as_str);
        match (field("type"), field("data"), field("mimeType")) {
            (Some("image"), Some(data), Some(mime)) if !data.is_empty() => {
                found.push(Image { mime: mime.to_string(), data: data.to_string() });
            }
            _ => rest.push(block.clone()),
        }
    }
    (prompt_text(&rest), found)
}

fn block_text(block: &Value) -> String {
    let s = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
    let kind = s("type");
    match kind {
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
}
