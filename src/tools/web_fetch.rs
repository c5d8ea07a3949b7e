//! `web_fetch`: GET an http(s) URL with capped redirects, a 30 s deadline and a 10 MiB
//! download cap; HTML becomes readable text, other text is returned as is, binary content
//! is refused. The request runs on its own thread so that a cancel returns at once.
//!
//! Every hop (the first URL and each redirect) is judged before it is followed: the host is
//! resolved once, the name and every address are judged (loopback, private, link-local,
//! metadata … are internal), the session's network gate decides (internal targets ask
//! every time and are refused in plan mode; public ones follow the `webFetch` policy), and
//! the connection goes only to the addresses judged.

use std::io::Read;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crossbeam_channel::select;
use serde::Deserialize;
use serde_json::{Value, json};
use ureq::ResponseExt;

use super::address::{self, Judged, Unjudged};
use super::parse_args;
use super::{
    Access, HostReach, Invocation, Tool, ToolContext, ToolError, ToolKind, ToolOutput, html,
};

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
        // A policy that refuses every fetch refuses before any name is resolved.
        ctx.network.open().map_err(ToolError::Model)?;
        let first = args.url.trim().to_string();
        let max_length = args.max_length.unwrap_or(DEFAULT_MAX_LENGTH).max(1);
        let deadline = Instant::now() + TIMEOUT;
        let mut url = first.clone();
        let mut hops = 0;
        let page = loop {
            let target = Target::parse(&url)?;
            let judged = judge(&target, ctx, deadline)?;
            ctx.network
                .reach(&HostReach {
                    url: url.clone(),
                    host: target.host.clone(),
                    internal: judged.internal.clone(),
                })
                .map_err(ToolError::Model)?;
            let page = fetch_pinned(&url, &target, judged.addrs, ctx, deadline)?;
            match page.location.as_deref() {
                Some(location) if (300..400).contains(&page.status) => {
                    hops += 1;
                    if hops > MAX_REDIRECTS {
                        return Err(ToolError::Model(format!(
                            "cannot fetch {first}: more than {MAX_REDIRECTS} redirects"
                        )));
                    }
                    // The next hop is judged like the first before it is followed.
                    url = join(&target, location);
                }
                _ => break page,
            }
        };
        let status = page.status;
        let output = render(page, &first, max_length);
        if status >= 400 {
            // The body often explains the error; the model still needs to know it failed.
            return Err(ToolError::Model(format!("HTTP error {status}\n{}", output.text)));
        }
        Ok(output)
    }
}

/// Where one hop goes.
struct Target {
    https: bool,
    /// Lowercase, IPv6 without brackets.
    host: String,
    port: u16,
    /// `scheme://authority`, for resolving relative redirects.
    origin: String,
    /// The path of the URL (for relative redirects).
    path: String,
}

impl Target {
    fn parse(url: &str) -> Result<Target, ToolError> {
        let bad = |why: &str| ToolError::Model(format!("cannot fetch '{url}': {why}"));
        let lower = url.to_ascii_lowercase();
        if !(lower.starts_with("http://") || lower.starts_with("https://")) {
            return Err(ToolError::Model(format!(
                "only http:// and https:// URLs can be fetched, not '{url}'"
            )));
        }
        let uri: ureq::http::Uri = url.parse().map_err(|_| bad("not a valid URL"))?;
        let https = uri.scheme_str().is_some_and(|s| s.eq_ignore_ascii_case("https"));
        let raw_host = uri.host().ok_or_else(|| bad("no host"))?;
        let host = raw_host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let authority = uri.authority().map(|a| a.as_str()).unwrap_or(raw_host);
        let origin = format!("{}://{authority}", if https { "https" } else { "http" });
        Ok(Target { https, host, port, origin, path: uri.path().to_string() })
    }
}

/// The absolute URL a `Location` names, from the hop that sent it.
fn join(from: &Target, location: &str) -> String {
    let location = location.trim();
    let lower = location.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return location.to_string();
    }
    if let Some(rest) = location.strip_prefix("//") {
        return format!("{}://{rest}", if from.https { "https" } else { "http" });
    }
    if location.starts_with('/') {
        return format!("{}{location}", from.origin);
    }
    let dir = match from.path.rfind('/') {
        Some(end) => &from.path[..=end],
        None => "/",
    };
    format!("{}{dir}{location}", from.origin)
}

/// Resolves the hop's host once (cancellable, within the deadline) and judges the name and
/// every address it resolved to; the fetch then connects only to those addresses.
fn judge(target: &Target, ctx: &ToolContext, deadline: Instant) -> Result<Judged, ToolError> {
    address::judge(&target.host, target.port, deadline, ctx.cancel.channel(), "web-fetch-dns")
        .map_err(|why| match why {
            Unjudged::Cancelled => ToolError::Model("Fetch cancelled.".to_string()),
            Unjudged::Unresolved => ToolError::Model(format!(
                "cannot fetch: {} does not resolve (is this machine offline?)",
                target.host
            )),
            Unjudged::NoThread(err) => {
                ToolError::Fatal(format!("cannot start the resolver thread: {err}"))
            }
        })
}

/// GETs `url` (one hop, no redirect followed) connecting only to `addrs`, on its own
/// thread so that a cancel returns at once.
fn fetch_pinned(
    url: &str,
    target: &Target,
    addrs: Vec<SocketAddr>,
    ctx: &ToolContext,
    deadline: Instant,
) -> Result<Page, ToolError> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(ToolError::Model(format!("cannot fetch {url}: no answer in time")));
    }
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(left))
        .timeout_connect(Some(CONNECT_TIMEOUT))
        .max_redirects(0)
        .http_status_as_error(false)
        .user_agent(concat!("iac-code/", env!("CARGO_PKG_VERSION")))
        .build();
    let agent = address::pinned(config, &target.host, addrs);
    let (tx, rx) = crossbeam_channel::bounded(1);
    let worker_agent = agent.clone();
    let worker_url = url.to_string();
    std::thread::Builder::new()
        .name("web-fetch".into())
        .spawn(move || {
            let _ = tx.send(fetch(&worker_agent, &worker_url));
        })
        .map_err(|err| ToolError::Fatal(format!("cannot start the fetch thread: {err}")))?;
    select! {
        recv(rx) -> page => page.map_err(|_| ToolError::Model(format!("fetching {url} failed")))?,
        recv(ctx.cancel.channel()) -> _ => {
            agent.shutdown();
            Err(ToolError::Model("Fetch cancelled.".to_string()))
        }
    }
}

struct Page {
    status: u16,
    /// A redirect's target, as sent.
    location: Option<String>,
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
    let location =
        response.headers().get("location").and_then(|v| v.to_str().ok()).map(str::to_string);
    let mut body = Vec::new();
    response
        .body_mut()
        .as_reader()
        .take(MAX_DOWNLOAD + 1)
        .read_to_end(&mut body)
        .map_err(|err| ToolError::Model(format!("reading {url} failed: {err}")))?;
    let cut = body.len() as u64 > MAX_DOWNLOAD;
    body.truncate(MAX_DOWNLOAD as usize);
    Ok(Page { status, location, final_url, content_type, body, cut })
}

fn describe(err: &ureq::Error, url: &str) -> String {
    let hint = match err {
        ureq::Error::HostNotFound => " (the host name does not resolve; is this machine offline?)",
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            " (connection refused)"
        }
        ureq::Error::Timeout(_) => " (no answer in time; is this machine offline?)",
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
        return ToolOutput { text, raw, diff: None, ..ToolOutput::default() };
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
    ToolOutput { text, raw, diff: None, ..ToolOutput::default() }
}
