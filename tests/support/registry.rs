//! The ACP registry's rules for an entry, as its CI applies them: the JSON Schema
//! (`deploy/registry/agent.schema.json`, a copy of the registry's) and the checks of its
//! `build_registry.py` beyond the schema (id, version, platforms, version-pinned archive
//! URLs, the icon). Each check returns every problem found, empty when the entry passes.
//! Used by `tests/registry.rs` on the tree's entry and by `tests/release.rs` on the copy a
//! release writes beside its archives.

use serde_json::Value;

pub const SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/registry/agent.schema.json");
pub const ENTRY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/registry/iac-code");

/// The platform keys the registry knows (`build_registry.py`'s `VALID_PLATFORMS`).
pub const PLATFORMS: &[&str] = &[
    "darwin-aarch64",
    "darwin-x86_64",
    "linux-aarch64",
    "linux-x86_64",
    "windows-aarch64",
    "windows-x86_64",
];

/// What `fill` and `stroke` may be in an icon (`ALLOWED_FILL_STROKE_VALUES`).
const PAINTS: &[&str] = &["currentcolor", "none", "inherit"];

/// Problems of `entry` (an `agent.json`) in the folder `folder`: schema first, as the
/// registry does, then its further rules.
pub fn entry_problems(entry: &Value, folder: &str) -> Vec<String> {
    let text = std::fs::read_to_string(SCHEMA).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let validator =
        jsonschema::draft7::options().should_validate_formats(true).build(&schema).unwrap();
    let mut problems: Vec<String> = validator
        .iter_errors(entry)
        .map(|e| format!("schema, at '{}': {e}", e.instance_path()))
        .collect();
    if !problems.is_empty() {
        return problems;
    }
    let id = entry["id"].as_str().unwrap_or_default();
    if id != folder {
        problems.push(format!("id '{id}' is not the folder's name '{folder}'"));
    }
    let version = entry["version"].as_str().unwrap_or_default();
    let parts: Vec<&str> = version.split('.').collect();
    if parts.len() < 3
        || !parts[..3].iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        problems.push(format!("version '{version}' is not x.y.z"));
    }
    let Some(binary) = entry["distribution"]["binary"].as_object() else {
        return problems;
    };
    for (platform, target) in binary {
        if !PLATFORMS.contains(&platform.as_str()) {
            problems.push(format!("unknown platform '{platform}'"));
        }
        let url = target["archive"].as_str().unwrap_or_default();
        if url.contains("/latest/") {
            problems.push(format!("{platform}: the archive URL uses /latest/"));
        } else if let Some(named) = url_version(url)
            && named != version
        {
            problems.push(format!("{platform}: the archive URL names {named}, not {version}"));
        }
        if !url.starts_with("https://") {
            problems.push(format!("{platform}: the archive URL is not https: {url}"));
        }
    }
    problems
}

/// The version a release URL names (`/download/v1.2.3/`), as `extract_version_from_url`.
fn url_version(url: &str) -> Option<String> {
    for marker in ["/download/", "/releases/"] {
        let Some(at) = url.find(marker) else { continue };
        let rest = &url[at + marker.len()..];
        let rest = rest.strip_prefix('v').unwrap_or(rest);
        let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        if end > 0 && rest[end..].starts_with('/') {
            let mut parts: Vec<&str> = rest[..end].split('.').collect();
            parts.resize(3, "0");
            return Some(parts[..3].join("."));
        }
    }
    None
}

/// Problems of an `icon.svg`: the registry's rules (square 16×16, monochrome in
/// `currentColor`) and ours (well formed, `viewBox="0 0 16 16"`, nothing external, no
/// scripts or styles, small).
pub fn icon_problems(svg: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if svg.len() > 2048 {
        problems.push(format!("{} bytes: an icon this small needs under 2 KiB", svg.len()));
    }
    let tags = match tags(svg) {
        Ok(tags) => tags,
        Err(e) => return vec![format!("not well formed: {e}")],
    };
    let Some((root, attrs)) = tags.first() else {
        return vec!["no element".to_owned()];
    };
    if root != "svg" {
        problems.push(format!("the root element is <{root}>, not <svg>"));
    }
    let attr = |name: &str| attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    if attr("xmlns") != Some("http://www.w3.org/2000/svg") {
        problems.push("no xmlns=\"http://www.w3.org/2000/svg\"".to_owned());
    }
    for (key, want) in [("width", "16"), ("height", "16"), ("viewBox", "0 0 16 16")] {
        if attr(key) != Some(want) {
            problems.push(format!("{key} is {:?}, not \"{want}\"", attr(key)));
        }
    }
    let mut current_color = false;
    for (name, attrs) in &tags {
        if ![
            "svg", "path", "g", "circle", "rect", "line", "polyline", "polygon", "ellipse", "title",
        ]
        .contains(&name.as_str())
        {
            problems.push(format!("element <{name}> (only plain shapes)"));
        }
        for (key, value) in attrs {
            let lower = value.trim().to_ascii_lowercase();
            if key == "fill" || key == "stroke" {
                if !PAINTS.contains(&lower.as_str()) {
                    problems.push(format!("{key}=\"{value}\" (only currentColor, none, inherit)"));
                }
                current_color |= lower == "currentcolor";
            }
            if key == "style" || key.starts_with("on") || key.ends_with("href") {
                problems.push(format!("attribute {key} (no styles, scripts or links)"));
            }
            if lower.contains("url(") || (lower.contains("://") && key != "xmlns") {
                problems.push(format!("{key}=\"{value}\" refers outside the icon"));
            }
        }
    }
    if !current_color {
        problems.push("nothing is drawn in currentColor".to_owned());
    }
    problems
}

type Tag = (String, Vec<(String, String)>);

/// Every start tag's name and attributes, in order, after checking that the tags nest and
/// close, attributes are quoted and unique, and no text sits outside the root.
fn tags(svg: &str) -> Result<Vec<Tag>, String> {
    let mut out = Vec::new();
    let mut open: Vec<String> = Vec::new();
    let mut rest = svg.trim();
    if rest.starts_with("<?xml") {
        let end = rest.find("?>").ok_or("unclosed <?xml")?;
        rest = rest[end + 2..].trim_start();
    }
    while !rest.is_empty() {
        let Some(start) = rest.find('<') else {
            return Err(format!("text after the root: {rest:?}"));
        };
        if open.is_empty() && !rest[..start].trim().is_empty() {
            return Err(format!("text outside the root: {:?}", &rest[..start]));
        }
        if !out.is_empty() && open.is_empty() {
            return Err("more than one root element".to_owned());
        }
        let end = rest[start..].find('>').ok_or("a tag is not closed")? + start;
        let body = &rest[start + 1..end];
        rest = &rest[end + 1..];
        if let Some(name) = body.strip_prefix('/') {
            match open.pop() {
                Some(top) if top == name.trim() => continue,
                top => return Err(format!("</{}> closes {top:?}", name.trim())),
            }
        }
        if body.starts_with('!') || body.starts_with('?') {
            return Err(format!("<{body}> (no comments, doctype or instructions)"));
        }
        let closed = body.ends_with('/');
        let body = body.trim_end_matches('/');
        let name_end = body.find(char::is_whitespace).unwrap_or(body.len());
        let name = body[..name_end].to_owned();
        let attrs = attributes(&body[name_end..])?;
        if !closed {
            open.push(name.clone());
        }
        out.push((name, attrs));
    }
    if let Some(top) = open.pop() {
        return Err(format!("<{top}> is never closed"));
    }
    Ok(out)
}

fn attributes(mut text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    loop {
        text = text.trim_start();
        if text.is_empty() {
            return Ok(out);
        }
        let eq = text.find('=').ok_or_else(|| format!("attribute without a value: {text:?}"))?;
        let key = text[..eq].trim().to_owned();
        let value = text[eq + 1..].trim_start();
        let quote = value.chars().next().filter(|c| *c == '"' || *c == '\'');
        let quote = quote.ok_or_else(|| format!("{key}: the value is not quoted"))?;
        let close = value[1..].find(quote).ok_or_else(|| format!("{key}: unclosed quote"))?;
        if out.iter().any(|(k, _)| *k == key) {
            return Err(format!("attribute {key} twice"));
        }
        out.push((key, value[1..close + 1].to_owned()));
        text = &value[close + 2..];
    }
}
