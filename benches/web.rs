//! The web page (`GET /` of `iac-code acp --transport http`): `cargo bench --bench web`.
//!
//! (a) Its weight: `GET /` and every file it references, found the way a browser finds
//! them (`src`/`href` of `script`, `link` and `img` tags, `import`/`export … from` and
//! `import(…)` of JavaScript modules, `url(…)` and `@import` of style sheets, followed
//! transitively), in bytes as served (no compression), against the 200 KiB budget.
//! (b) How fast it shows in headless Chromium: 20 cold loads, each in a new browser with
//! an empty profile (no cache), reading first paint, first contentful paint,
//! DOMContentLoaded and load from the Performance API, and when the page says it is
//! connected (its `initialize` answered: the server has no token, as on one's own
//! machine, so the page connects at once); median and p90. Without Chromium and
//! chromedriver (`apt-get install chromium chromium-driver`) it says so and prints (a).
//! `BENCH_WEB_URL=http://host:port` measures the page another server serves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[allow(dead_code, unused_imports)]
#[path = "../tests/support/browser/mod.rs"]
mod browser;
#[allow(dead_code)]
#[path = "../tests/support/skip.rs"]
mod skip;
/// Where the browser harness finds its skip helper (`crate::support::skip`).
mod support {
    pub(crate) use crate::skip;
}
#[path = "support/builds.rs"]
mod builds;
#[path = "support/server.rs"]
mod server;
#[allow(dead_code)]
#[path = "support/summary.rs"]
mod summary;

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use regex::Regex;
/// Cold loads measured in the browser.
const LOADS: usize = 20;
/// The page's budget: everything it loads, uncompressed.
const BUDGET_KIB: f64 = 200.0;

fn main() {
    // `BENCH_WEB_URL=http://host:port` measures the page another server serves.
    let (mut server, base) = match std::env::var("BENCH_WEB_URL") {
        Ok(url) => (None, url.trim_end_matches('/').to_string()),
        Err(_) => {
            let (label, bin) = builds::builds().into_iter().next().expect("a build to measure");
            println!("web: {label} ({})", bin.display());
            let (server, addr) = spawn_server(&bin);
            (Some(server), format!("http://{addr}"))
        }
    };

    let files = weigh(&base);
    let total: usize = files.values().sum();
    for (path, bytes) in &files {
        println!("  {bytes:>8} B  {path}");
    }
    println!("  {total:>8} B  in all ({} files)", files.len());
    let metric = format!("page weight, uncompressed ({} files)", files.len());
    summary::at_most(&metric, total as f64 / 1024.0, BUDGET_KIB, "KiB");

    match browser::Programs::find() {
        Ok(programs) => paint(&base, programs),
        Err(why) => println!("no browser timings: {why}"),
    }
    if let Some(server) = server.as_mut() {
        let _ = server.kill();
        let _ = server.wait();
    }
    summary::print("web");
}

/// Starts the server on a free loopback port; returns it and its `host:port`.
fn spawn_server(bin: &Path) -> (Child, String) {
    let home = std::env::temp_dir().join("iac-code-bench-web");
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(home.join("config")).unwrap();
    let mut command = Command::new(bin);
    command
        .args(["acp", "--transport", "http", "--port", "0"])
        .current_dir(&home)
        .env_clear()
        .env("HOME", &home)
        .env("IAC_CODE_CONFIG_DIR", home.join("config"))
        .env("IAC_CODE_LOG", "warn")
        .stdin(Stdio::null());
    server::start_http(&mut command)
}

/// Every file the page loads (path → bytes), from `/` on.
fn weigh(base: &str) -> BTreeMap<String, usize> {
    let agent: ureq::Agent =
        ureq::Agent::config_builder().http_status_as_error(false).proxy(None).build().into();
    let tag =
        Regex::new(r#"<(?:script|link|img)\b[^>]*?\b(?:src|href)\s*=\s*["']([^"']+)["']"#).unwrap();
    // Static imports and re-exports at a statement's start (their braces may span lines),
    // side-effect imports, and dynamic `import("…")`; not the word "from" in a message.
    let module = Regex::new(concat!(
        r#"(?m)^\s*(?:import|export)\b[^"'`;]*?\bfrom\s*["']([^"']+)["']"#,
        r#"|^\s*import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)"#,
    ))
    .unwrap();
    let style =
        Regex::new(r#"url\(\s*["']?([^"')]+)["']?\s*\)|@import\s+["']([^"']+)["']"#).unwrap();
    let mut files = BTreeMap::new();
    let mut queue = VecDeque::from(["/".to_string()]);
    while let Some(path) = queue.pop_front() {
        if files.contains_key(&path) {
            continue;
        }
        let mut reply = agent.get(format!("{base}{path}")).call().unwrap();
        let status = reply.status().as_u16();
        assert_eq!(status, 200, "GET {path}: {status} (is the page served at /?)");
        let kind = reply
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let body = reply.body_mut().with_config().limit(16 << 20).read_to_vec().unwrap();
        files.insert(path.clone(), body.len());
        let text = String::from_utf8_lossy(&body);
        let pattern = match kind.split(';').next().unwrap_or("").trim() {
            "text/html" => &tag,
            "text/javascript" | "application/javascript" => &module,
            "text/css" => &style,
            _ => continue,
        };
        for found in pattern.captures_iter(&text) {
            let Some(reference) = found.iter().skip(1).flatten().next() else { continue };
            match resolve(&path, reference.as_str()) {
                Some(next) => queue.push_back(next),
                None => println!("  not counted (not on this server): {}", reference.as_str()),
            }
        }
    }
    files
}

/// The server path `reference` (found in the file at `from`) points to, or `None` for
/// another origin or a `data:` URL.
fn resolve(from: &str, reference: &str) -> Option<String> {
    let reference = reference.split(['?', '#']).next().unwrap_or("");
    if reference.is_empty() || reference.starts_with("//") || reference.contains(':') {
        return None;
    }
    let joined = if reference.starts_with('/') {
        reference.to_string()
    } else {
        let dir = &from[..from.rfind('/').map_or(0, |i| i + 1)];
        format!("{dir}{reference}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/').skip(1) {
        match part {
            "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// First paint, first contentful paint and DOMContentLoaded of one cold load, in ms.
const TIMINGS: &str = "const paint = Object.fromEntries(performance.getEntriesByType('paint')
    .map(e => [e.name, e.startTime]));
const nav = performance.getEntriesByType('navigation')[0];
return {fp: paint['first-paint'] ?? null, fcp: paint['first-contentful-paint'] ?? null,
        dcl: nav ? nav.domContentLoadedEventEnd : null, load: nav ? nav.loadEventEnd : null};";

/// Runs before the page's own scripts: notes when the status first says connected.
const WATCH: &str = "new MutationObserver((_, seen) => {
  const status = document.getElementById('status');
  if (status && status.dataset.state === 'connected') {
    window.__iacConnected = performance.now();
    seen.disconnect();
  }
}).observe(document, {subtree: true, childList: true, attributes: true});";

fn paint(base: &str, programs: browser::Programs) {
    let driver = browser::Driver::launch("bench_web", programs).expect("chromedriver");
    let mut series: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for _ in 0..LOADS {
        let session = driver.session();
        session.cdp("Page.addScriptToEvaluateOnNewDocument", serde_json::json!({"source": WATCH}));
        session.goto(&format!("{base}/"));
        // Paint entries are recorded with the first frames, which may follow `load`.
        let deadline = Instant::now() + Duration::from_secs(10);
        let timings = loop {
            let t = session.script(TIMINGS, &[]);
            if !t["fcp"].is_null() || Instant::now() > deadline {
                break t;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let connected = session.wait_until("window.__iacConnected", Duration::from_secs(10));
        series.entry("connected").or_default().extend(connected.as_f64());
        for key in ["fp", "fcp", "dcl", "load"] {
            if let Some(ms) = timings[key].as_f64() {
                series.entry(key).or_default().push(ms);
            }
        }
        let errors = session.console_errors();
        if !errors.is_empty() {
            println!("  console errors: {errors:?}");
        }
    }
    let names = [
        ("fp", "first paint"),
        ("fcp", "first contentful paint"),
        ("dcl", "DOMContentLoaded"),
        ("load", "load"),
        ("connected", "connected (initialize answered)"),
    ];
    for (key, name) in names {
        let Some(mut values) = series.remove(key) else {
            println!("{name}: never recorded in {LOADS} loads");
            continue;
        };
        values.sort_by(f64::total_cmp);
        let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
        println!("{name}: {} loads, median {:.1} ms, p90 {:.1} ms", values.len(), at(0.5), at(0.9));
        summary::info(&format!("{name}, median of {LOADS} cold loads"), at(0.5), "ms");
        summary::info(&format!("{name}, p90"), at(0.9), "ms");
    }
}
