//! How the page is served, over plain HTTP (no browser): `/` and `/web/…` without the
//! token, with a policy that allows this origin only and no string-to-markup, ETags, 404
//! for anything else and with `--no-web`, and an `Origin` that must be the server's own.

use super::page::{TOKEN, server};
use crate::support::fake_llm::FakeLlm;
use crate::support::workspace::Workspace;

#[test]
fn the_page_is_served_without_the_token_with_a_strict_policy_and_etags() {
    let ws = Workspace::new("web-served");
    let llm = FakeLlm::start(vec![]);
    let server = server(&ws, &llm, &[]);
    let none = [("Authorization", "")];
    let page = server.request("GET", "/", &none, b"");
    assert_eq!(page.status, 200);
    assert!(page.header("content-type").unwrap().starts_with("text/html"));
    let body = String::from_utf8_lossy(&page.body).into_owned();
    assert!(body.contains("<script type=\"module\" src=\"/web/main.js\">"), "{body}");
    let policy = page.header("content-security-policy").unwrap();
    for part in [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
        "trusted-types 'none'",
        "require-trusted-types-for 'script'",
        "frame-ancestors 'none'",
    ] {
        assert!(policy.contains(part), "{policy}");
    }
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    let etag = page.header("etag").unwrap().to_string();
    let again = server.request("GET", "/", &[("Authorization", ""), ("If-None-Match", &etag)], b"");
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    let script = server.request("GET", "/web/main.js", &none, b"");
    assert_eq!(script.status, 200);
    assert!(script.header("content-type").unwrap().starts_with("text/javascript"));
    for path in ["/web/", "/web/../Cargo.toml", "/web/nope.js", "/index.html", "/web/main.js/"] {
        assert_eq!(server.request("GET", path, &none, b"").status, 404, "{path}");
    }
    assert_eq!(server.request("POST", "/", &none, b"{}").status, 405);
    // The ACP endpoint still wants the token.
    assert_eq!(server.request("POST", "/acp", &none, b"{}").status, 401);
    let bearer = format!("Bearer {TOKEN}");
    let own = format!("http://{}", server.addr);
    let foreign = server.request(
        "GET",
        "/acp",
        &[("Authorization", &bearer), ("Origin", "http://127.0.0.1:1")],
        b"",
    );
    assert_eq!(foreign.status, 403, "another loopback page is another site");
    let same = server.request("GET", "/acp", &[("Authorization", &bearer), ("Origin", &own)], b"");
    assert_eq!(same.status, 400, "past the Origin check: only the connection id is missing");
}

#[test]
fn no_web_serves_no_page() {
    let ws = Workspace::new("web-off");
    let llm = FakeLlm::start(vec![]);
    let server = server(&ws, &llm, &["--no-web"]);
    for path in ["/", "/web/main.js", "/web/app.css"] {
        assert_eq!(server.request("GET", path, &[], b"").status, 404, "{path}");
    }
    assert_eq!(server.request("GET", "/health", &[], b"").status, 200);
}
