//! The page as the real server serves it: `GET /` of `iac-code acp --transport http`
//! (started with a token and the fake LLM) loads in Chromium, titled, without errors in
//! the console.

use crate::browser::{Driver, WAIT};
use crate::support::fake_llm::{FakeLlm, text_reply};
use crate::support::http_client::HttpServer;
use crate::support::workspace::Workspace;

/// The token the servers of these tests are started with.
pub const TOKEN: &str = "web-test-token";

/// The real server, with the fake LLM answering `replies`, and a token.
pub fn server(ws: &Workspace, llm: &FakeLlm, args: &[&str]) -> HttpServer {
    HttpServer::spawn(ws, Some(llm), args, &[("IACCODE_ACP_HTTP_TOKEN", TOKEN)])
}

#[test]
fn the_page_loads_with_its_title() {
    let Some(driver) = Driver::start("the_page_loads_with_its_title") else { return };
    let ws = Workspace::new("web-smoke");
    let llm = FakeLlm::start(vec![text_reply("Hello from the agent")]);
    let server = server(&ws, &llm, &[]);
    let browser = driver.session();
    browser.goto(&format!("http://{}/", server.addr));
    browser.wait_until("document.readyState === 'complete'", WAIT);
    let title = browser.title();
    assert!(title.contains("iac-code"), "title {title:?}; page: {}", browser.body_text());
    let shot = browser.screenshot("loaded");
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{}", shot.display());
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:?}");
}
