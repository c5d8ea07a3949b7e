//! `web_fetch`: GET an http(s) URL with capped redirects, a 30 s deadline and a 10 MiB
//! download cap; HTML becomes readable text, other text is returned as is, binary content
//! is refused. The request runs on its own thread so that a cancel returns at once.

use std::io::Read;
use std::time::Duration;

use crossbeam_channel::select;
use serde::Deserialize;
use serde_json::{Value, json};
use ureq::ResponseExt;

use super::parse_args;
use super::{Access, Invocation, Tool, ToolContext, ToolError, ToolKind, ToolOutput, html};

/// The whole request, redirects included.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Connecting alone (an offline host fails fast).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Redirects followed at most.
const MAX_REDIRECTS: u32 = 5;
/// Bytes downloaded at most.
const MAX_DOWNLOAD: u64 = 10 << 20;
/// Characters returned when the call does not say.
const DEFAULT_MAX_LENGTH: usize = 50_000;

pub struct WebFetch;

#[derive(Deserialize)]
struct Args {
    url: String,
    #[serde(default)]
    max_length: Option<usize>,
}

impl Tool for WebFetch {
    fn name(&self) -> &'static str {
        "web_fetch"
    }
    fn description(&self) -> &'static str {
        "Fetch the content of a web page. Supports HTTP and HTTPS URLs. For HTML pages, the \
         content is extracted as plain text (scripts and styles removed, links kept). Returns \
         the page content truncated to max_length characters."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "The URL of the web page to fetch. Must include scheme (http:// or https://)."},
                "max_length": {"type": "integer", "description": "Maximum number of characters to return. Defaults to 50000."}
            },
            "required": ["url"]
        })
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Fetch
    }
    fn access(&self) -> Access {
        Access::Read
    }
    fn describe(&self, args: &Value, _ctx: &ToolContext) -> Invocation {
        let url = args.get("url").and_then(Value::as_str).unwrap_or("");
        Invocation::plain(format!("Fetch {url}"))
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        let url = args.url.trim().to_string();
        let lower = url.to_ascii_lowercase();
        if !(lower.starts_with("http://") || lower.starts_with("https://")) {
            return Err(ToolError::Model(format!(
                "only http:// and https:// URLs can be fetched, not '{url}'"
            )));
        }
        let max_length = args.max_length.unwrap_or(DEFAULT_MAX_LENGTH).max(1);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(TIMEOUT))
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .max_redirects(MAX_REDIRECTS)
            .http_status_as_error(false)
            .user_agent(concat!("iac-code/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        let (tx, rx) = crossbeam_channel::bounded(1);
        let worker_agent = agent.clone();
        let worker_url = url.clone();
        std::thread::Builder::new()
            .name("web-fetch".into())
            .spawn(move || {
                let _ = tx.send(fetch(&worker_agent, &worker_url));
            })
            .map_err(|err| ToolError::Fatal(format!("cannot start the fetch thread: {err}")))?;
        let page = select! {
            recv(rx) -> page => page.map_err(|_| ToolError::Model(format!("fetching {url} failed")))??,
            recv(ctx.cancel.channel()) -> _ => {
                agent.shutdown();
                return Err(ToolError::Model("Fetch cancelled.".to_string()));
            }
        };
        let status = page.status;
        let output = render(page, &url, max_length);
        if status >= 400 {
            // The body often explains the error; the model still needs to know it failed.
            return Err(ToolError::Model(format!("HTTP error {status}\n{}", output.text)));
        }
        Ok(output)
    }
}

struct Page {
    status: u16,
    final_url: String,
    content_type: String,
    body: Vec<u8>,
    cut: bool,
}

fn fetch(agent: &ureq::Agent, url: &str) -> Result<Page, ToolError> {
    let mut response = agent
        .get(url)
        .header("Accept", "text/html, text/plain, application/json;q=0.9, */*;q=0.5")
        .call()
        .map_err(|err| ToolError::Model(describe(&err, url)))?;
    let status = response.status().as_u16();
    let final_url = response.get_uri().to_string();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let mut body = Vec::new();
    response
        .body_mut()
        .as_reader()
        .take(MAX_DOWNLOAD + 1)
        .read_to_end(&mut body)
        .map_err(|err| ToolError::Model(format!("reading {url} failed: {err}")))?;
    let cut = body.len() as u64 > MAX_DOWNLOAD;
    body.truncate(MAX_DOWNLOAD as usize);
    Ok(Page { status, final_url, content_type, body, cut })
}

fn describe(err: &ureq::Error, url: &str) -> String {
    let hint = match err {
        ureq::Error::HostNotFound => " (the host name does not resolve; is this machine offline?)",
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            " (connection refused)"
        }
        ureq::Error::Timeout(_) => " (no answer in time; is this machine offline?)",
        ureq::Error::TooManyRedirects => " (more than 5 redirects)",
        _ => "",
    };
    format!("cannot fetch {url}: {err}{hint}")
}

fn render(page: Page, url: &str, max_length: usize) -> ToolOutput {
    let mime = page.content_type.split(';').next().unwrap_or("").trim().to_string();
    let looks_html = mime.contains("html")
        || (mime.is_empty() && page.body.iter().take(512).any(|b| *b == b'<'));
    let textual = mime.starts_with("text/")
        || ["json", "xml", "yaml", "javascript", "toml", "x-sh", "hcl"]
            .iter()
            .any(|t| mime.contains(t));
    let binary = !looks_html && !mime.is_empty() && !textual;
    let status_line = format!("URL: {}\nStatus: {}\n", page.final_url, page.status);
    if binary || page.body[..page.body.len().min(8192)].contains(&0) {
        let text = format!(
            "{status_line}Content-Type: {mime}\n\n[binary content, {} bytes, not shown]",
            page.body.len()
        );
        let raw = json!({"url": page.final_url, "status": page.status, "contentType": mime, "bytes": page.body.len()});
        return ToolOutput { text, raw, diff: None };
    }
    let decoded = String::from_utf8_lossy(&page.body);
    let body = if looks_html { html::to_text(&decoded) } else { decoded.into_owned() };
    let total = body.chars().count();
    let mut text = status_line;
    if page.final_url != url {
        text.push_str(&format!("(redirected from {url})\n"));
    }
    text.push('\n');
    text.extend(body.chars().take(max_length));
    if total > max_length {
        text.push_str(&format!(
            "\n\n[truncated: {max_length} of {total} characters shown; raise max_length to see more]"
        ));
    }
    if page.cut {
        text.push_str("\n\n[the download stopped at 10 MiB]");
    }
    let raw = json!({
        "url": page.final_url, "status": page.status, "contentType": mime,
        "bytes": page.body.len(), "chars": total, "truncated": total > max_length || page.cut,
    });
    ToolOutput { text, raw, diff: None }
}
