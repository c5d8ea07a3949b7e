//! An MCP server's tool as one of ours: its model name, description and input schema (made
//! acceptable to the provider APIs, and said so when it had to be changed), its kind and
//! access from the annotations, and its call: through the server's connection, with
//! progress shown live, cancel passed on, and the result turned into text for the model.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::conn::RemoteTool;
use crate::history::Image;
use crate::text::Title;
use crate::tools::{Access, Invocation, Tool, ToolContext, ToolError, ToolKind, ToolOutput};

/// Images of one result passed on to the model at most.
const MAX_IMAGES: usize = 4;

/// The server behind a tool: its name, and a call through its connection.
pub(super) trait Calls: Send + Sync {
    /// The server's name.
    fn server(&self) -> &str;
    /// Calls a tool (`params` of `tools/call`) for a running tool call.
    fn call(&self, params: Value, ctx: &ToolContext) -> Result<Value, ToolError>;
}

/// One MCP tool, offered to the model as `name`.
pub struct McpTool {
    /// `mcp__<server>__<tool>`.
    pub name: String,
    /// The tool as its server named it.
    pub remote: RemoteTool,
    description: String,
    schema: Value,
    server: Arc<dyn Calls>,
}

impl McpTool {
    pub(super) fn new(name: String, remote: RemoteTool, server: Arc<dyn Calls>) -> McpTool {
        let (schema, changed) = model_schema(&remote.schema);
        let mut description = if remote.description.trim().is_empty() {
            format!("Tool '{}' of the MCP server '{}'.", remote.name, server.server())
        } else {
            remote.description.clone()
        };
        if let Some(changed) = changed {
            log::warn!(
                "MCP server {}: the input schema of {} was simplified: {changed}",
                server.server(),
                remote.name
            );
            description.push_str(&format!(
                "\n(Its input schema was simplified for this model: {changed}. Follow the \
                 description for the arguments.)"
            ));
        }
        McpTool { name, remote, description, schema, server }
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn schema(&self) -> Value {
        self.schema.clone()
    }

    fn kind(&self) -> ToolKind {
        match (self.remote.read_only, self.remote.open_world) {
            (true, true) => ToolKind::Fetch,
            (true, false) => ToolKind::Read,
            _ => ToolKind::Other,
        }
    }

    fn access(&self) -> Access {
        Access::Mcp { read_only: self.remote.read_only }
    }

    /// The server and the tool's own name: the model's name for it may change hands.
    fn memory_key(&self) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Owned(format!("mcp\0{}\0{}", self.server.server(), self.remote.name))
    }

    /// Whose claim it is comes first: "MCP server x: <its title>" (`text::Title`).
    fn describe(&self, _args: &Value, _ctx: &ToolContext) -> Invocation {
        let shown = self.remote.title.as_deref().unwrap_or(&self.remote.name);
        let claimant = format!("MCP server {}", self.server.server());
        Invocation::plain(Title::new(Some(&claimant), shown).into_string())
    }

    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let params = json!({ "name": self.remote.name, "arguments": args });
        let result = self.server.call(params, ctx)?;
        let (text, images) = result_content(&result, ctx.images);
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            let text =
                if text.is_empty() { "the tool reported an error".to_string() } else { text };
            return Err(ToolError::Model(text));
        }
        Ok(ToolOutput { text, raw: without_blobs(result), images, ..ToolOutput::default() })
    }
}

/// The result's content for the model: text as it is, resources and links as text, images
/// as images when the model takes them (`images`), else (and audio) as a marker, and
/// `structuredContent` as JSON when nothing else says anything.
pub(super) fn result_content(result: &Value, images: bool) -> (String, Vec<Image>) {
    let mut parts: Vec<String> = Vec::new();
    let mut attached = Vec::new();
    for item in result.get("content").and_then(Value::as_array).into_iter().flatten() {
        let field = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
        match field("type") {
            "text" => parts.push(field("text").to_string()),
            kind @ ("image" | "audio") => {
                let (mime, data) = (field("mimeType"), field("data"));
                let kib = (data.len() / 4 * 3).div_ceil(1024);
                let usable = match kind {
                    "image" if !images => Err("this model takes no images".to_string()),
                    "image" if attached.len() >= MAX_IMAGES => {
                        Err(format!("only {MAX_IMAGES} images per result are passed on"))
                    }
                    "image" => Image::checked(mime, data),
                    _ => Err("audio is not passed on".to_string()),
                };
                match usable {
                    Ok(image) => {
                        parts.push(format!("[image ({mime}, {kib} KiB) attached]"));
                        attached.push(image);
                    }
                    Err(why) => parts.push(format!(
                        "[{kind} ({mime}, {kib} KiB) returned by the tool; not shown: {why}]"
                    )),
                }
            }
            "resource" => {
                let resource = &item["resource"];
                let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("");
                match resource.get("text").and_then(Value::as_str) {
                    Some(text) => parts.push(format!("[resource {uri}]\n{text}")),
                    None => parts.push(format!("[binary resource {uri}; not shown]")),
                }
            }
            "resource_link" => {
                let mut line = format!("[resource link: {} <{}>]", field("name"), field("uri"));
                if !field("description").is_empty() {
                    line.push(' ');
                    line.push_str(field("description"));
                }
                parts.push(line);
            }
            other => parts.push(format!("[content of type '{other}' not shown]")),
        }
    }
    let said = parts.iter().any(|p| !p.trim().is_empty());
    if !said && let Some(structured) = result.get("structuredContent") {
        return (serde_json::to_string_pretty(structured).unwrap_or_default(), attached);
    }
    (parts.join("\n"), attached)
}

/// The result for `rawOutput`: base64 payloads replaced by their size.
fn without_blobs(mut result: Value) -> Value {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    if (key == "data" || key == "blob")
                        && let Value::String(s) = v
                        && s.len() > 256
                    {
                        *v = Value::String(format!("<{} base64 characters>", s.len()));
                    } else {
                        walk(v);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut result);
    result
}

/// The schema offered to the model: an object schema the provider APIs accept. What had to
/// change is returned, to be said in the description and the log, never dropped silently.
pub(super) fn model_schema(schema: &Value) -> (Value, Option<String>) {
    let empty = || json!({ "type": "object", "properties": {} });
    if let Value::String(size) = schema {
        return (empty(), Some(format!("at {size} it was too large to pass on")));
    }
    let Some(object) = schema.as_object() else {
        let why = if schema.is_null() { "the server gave none" } else { "it was not an object" };
        return (empty(), (!schema.is_null()).then(|| why.to_string()));
    };
    match object.get("type") {
        None => {}
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return (empty(), Some(format!("its top-level type was {other}, not object")));
        }
    }
    let mut out: Map<String, Value> = object.clone();
    let mut changed = Vec::new();
    out.insert("type".into(), Value::String("object".into()));
    for key in ["$schema", "$id"] {
        out.remove(key);
    }
    for key in ["oneOf", "anyOf", "allOf", "not", "enum", "if", "then", "else"] {
        if out.remove(key).is_some() {
            changed.push(format!("a top-level {key} was removed"));
        }
    }
    match out.get("properties") {
        Some(Value::Object(_)) => {}
        None => {
            out.insert("properties".into(), json!({}));
        }
        Some(_) => {
            out.insert("properties".into(), json!({}));
            changed.push("its properties were not an object".into());
        }
    }
    if let Some(required) = out.get("required")
        && !required.as_array().is_some_and(|r| r.iter().all(Value::is_string))
    {
        out.remove("required");
        changed.push("its required list was not a list of names".into());
    }
    let changed = (!changed.is_empty()).then(|| changed.join(", "));
    (Value::Object(out), changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_become_text() {
        let result = json!({"content": [
            {"type": "text", "text": "one"},
            {"type": "image", "data": format!("iVBORw0KGgo{}", "A".repeat(4085)), "mimeType": "image/png"},
            {"type": "image", "data": "R0lGODlhAQABAAAAACw=", "mimeType": "image/png"},
            {"type": "image", "data": "PHN2Zz4=", "mimeType": "image/svg+xml"},
            {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b", "description": "the b"}
        ]});
        let (text, images) = result_content(&result, false);
        assert!(images.is_empty());
        assert!(text.starts_with("one\n[image (image/png, 3 KiB) returned"), "{text}");
        assert!(text.contains("not shown: this model takes no images"), "{text}");
        let (shown, images) = result_content(&result, true);
        assert!(shown.starts_with("one\n[image (image/png, 3 KiB) attached]"), "{shown}");
        assert_eq!(images.len(), 1, "svg is not an image the APIs take");
        assert_eq!(images[0].mime, "image/png");
        assert!(
            shown.contains(
                "[image (image/svg+xml, 1 KiB) returned by the tool; not shown: the type"
            )
        );
        assert!(shown.contains("not shown: it says image/png, but its bytes are image/gif"));
        assert!(text.contains("[resource file:///a]\nbody"), "{text}");
        assert!(text.contains("[resource link: b <file:///b>] the b"), "{text}");
        let structured = json!({"content": [], "structuredContent": {"answer": 42}});
        assert!(result_content(&structured, false).0.contains("\"answer\": 42"));
        let raw = without_blobs(result);
        assert_eq!(raw["content"][1]["data"], "<4096 base64 characters>");
        assert_eq!(raw["content"][3]["data"], "PHN2Zz4=", "short data stays");
    }

    #[test]
    fn schemas_are_made_acceptable_and_changes_said() {
        let (plain, changed) = model_schema(&json!({"type": "object",
            "properties": {"a": {"type": "string"}}, "required": ["a"], "$schema": "x"}));
        assert_eq!(changed, None);
        assert!(plain.get("$schema").is_none() && plain["required"][0] == "a");
        let (fixed, changed) = model_schema(&json!({"anyOf": [{"type": "object"}]}));
        assert_eq!(fixed["type"], "object");
        assert!(changed.unwrap().contains("anyOf"));
        let (fixed, changed) = model_schema(&json!({"type": "string"}));
        assert_eq!(fixed, json!({"type": "object", "properties": {}}));
        assert!(changed.unwrap().contains("not object"));
        let (none, changed) = model_schema(&Value::Null);
        assert_eq!(none["type"], "object");
        assert_eq!(changed, None);
    }
}
