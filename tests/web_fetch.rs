//! `web_fetch` against a local HTTP fixture: HTML to text, redirects, errors, caps, and a
//! fast clear failure without a server.

use serde_json::json;

use crate::support::acp_client::Permission;
use crate::support::http_fixture::{HttpFixture, Route};
use crate::support::workspace::Workspace;
use crate::tools::run_tool;

const PAGE: &str = "<html><head><title>Provider docs</title><script>alert(1)</script></head>\
    <body><h2>Arguments</h2><ul><li><code>region</code> &ndash; required</li></ul></body></html>";

#[test]
fn html_becomes_text_and_redirects_are_followed() {
    let ws = Workspace::new("fetch-html");
    let site = HttpFixture::start(vec![
        ("/docs", Route::ok("text/html; charset=utf-8", PAGE)),
        ("/old", Route::redirect("/docs")),
    ]);
    let run = run_tool(&ws, "web_fetch", json!({"url": site.url("/old")}), Permission::AllowOnce);
    // The fixture is on loopback, an internal address: each hop asks, without "always".
    assert_eq!(run.asked.len(), 2, "both hops are internal and ask");
    for question in &run.asked {
        let title = question["params"]["toolCall"]["title"].as_str().unwrap();
        assert!(title.contains("loopback"), "{title}");
        let options = question["params"]["options"].as_array().unwrap();
        assert!(options.iter().all(|o| !o["kind"].as_str().unwrap().ends_with("always")));
    }
    assert_eq!(run.status, "completed");
    let expected = format!(
        "URL: {}\nStatus: 200\n(redirected from {})\n\n# Provider docs\n\n## Arguments\n\n- region – required",
        site.url("/docs"),
        site.url("/old")
    );
    assert_eq!(run.result, expected);
    assert_eq!(site.hits(), ["/old", "/docs"]);
}

#[test]
fn errors_caps_and_binary_content() {
    let ws = Workspace::new("fetch-errors");
    let long = "y".repeat(3000);
    let site = HttpFixture::start(vec![
        ("/long.txt", Route::ok("text/plain", long.as_str())),
        ("/logo.png", Route::ok("image/png", b"\x89PNG\r\n\x1a\n\0\0".to_vec())),
        ("/loop", Route::redirect("/loop")),
        ("/gone", Route::status(410, "this page is gone")),
        ("/huge.txt", Route::ok("text/plain", "z".repeat(11 << 20))),
    ]);
    let run = run_tool(
        &ws,
        "web_fetch",
        json!({"url": site.url("/huge.txt"), "max_length": 10}),
        Permission::AllowOnce,
    );
    assert!(run.result.contains("[truncated: 10 of 10485760 characters shown"), "{}", run.result);
    assert!(run.result.ends_with("[the download stopped at 10 MiB]"), "{}", run.result);
    let run = run_tool(
        &ws,
        "web_fetch",
        json!({"url": site.url("/long.txt"), "max_length": 1000}),
        Permission::AllowOnce,
    );
    assert!(
        run.result.contains(&format!("\n\n{}\n\n[truncated: 1000 of 3000", "y".repeat(1000))),
        "{}",
        run.result
    );

    let run =
        run_tool(&ws, "web_fetch", json!({"url": site.url("/logo.png")}), Permission::AllowOnce);
    assert!(run.result.ends_with("[binary content, 10 bytes, not shown]"), "{}", run.result);

    let run = run_tool(&ws, "web_fetch", json!({"url": site.url("/gone")}), Permission::AllowOnce);
    assert_eq!(run.status, "failed");
    assert!(
        run.result.starts_with("HTTP error 410") && run.result.contains("this page is gone"),
        "{}",
        run.result
    );

    let run = run_tool(&ws, "web_fetch", json!({"url": site.url("/loop")}), Permission::AllowOnce);
    assert_eq!(run.status, "failed");
    assert!(run.result.contains("redirect"), "{}", run.result);
    assert!(site.hits().iter().filter(|p| *p == "/loop").count() <= 6, "redirects are capped");

    let run =
        run_tool(&ws, "web_fetch", json!({"url": "file:///etc/passwd"}), Permission::AllowOnce);
    assert_eq!(run.status, "failed");
    assert!(run.result.contains("only http:// and https://"), "{}", run.result);
}

#[test]
fn no_server_fails_fast_and_clearly() {
    let ws = Workspace::new("fetch-offline");
    // Reserve a port, then close it: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let run = run_tool(
        &ws,
        "web_fetch",
        json!({"url": format!("http://127.0.0.1:{port}/")}),
        Permission::AllowOnce,
    );
    assert_eq!(run.status, "failed");
    assert!(
        run.result.starts_with("cannot fetch") && run.result.contains("refused"),
        "{}",
        run.result
    );
}
