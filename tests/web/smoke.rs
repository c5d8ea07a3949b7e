//! The page as the real server serves it: `GET /` of `iac-code acp --transport http`
//! (started with a token and the fake LLM) loads in Chromium, titled, asks for the token,
//! and connects with it, with nothing in the console but the first 401; through the
//! cutting proxy, it comes back after a network cut.

use crate::browser::{Driver, WAIT};
use crate::cut_proxy::CutProxy;
use crate::support::fake_llm::{FakeLlm, text_reply};
use crate::support::workspace::Workspace;
use crate::web::page::{FIRST_401, TOKEN, server, sign_in};

#[test]
fn the_page_loads_with_its_title() {
    let Some(driver) = Driver::start("the_page_loads_with_its_title") else { return };
    let ws = Workspace::new("web-smoke");
    let llm = FakeLlm::start(vec![text_reply("Hello from the agent")]);
    let server = server(&ws, &llm, &[]);
    let browser = driver.session();
    browser.goto(&format!("http://{}/", server.addr));
    let title = browser.title();
    assert!(title.contains("iac-code"), "title {title:?}; page: {}", browser.body_text());
    browser.wait("#signin #token", WAIT);
    let shot = browser.screenshot("signin");
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{}", shot.display());
    let errors = browser.console_errors();
    assert!(errors.iter().all(|e| e.contains(FIRST_401)), "console errors: {errors:?}");
    assert!(!browser.body_text().contains(TOKEN));

    sign_in(&browser, &server.addr);
    assert_eq!(browser.find("#status").text(), "Connected");
    assert!(!browser.find("#signin-box").is_displayed());
    browser.screenshot("connected");
}

/// Notes every state the status shows, in `window.__states`.
const STATES: &str = "window.__states = [];
new MutationObserver(() => window.__states.push(document.getElementById('status').dataset.state))
  .observe(document.getElementById('status'), {attributes: true, attributeFilter: ['data-state']});";

#[test]
fn the_page_comes_back_after_a_network_cut() {
    let Some(driver) = Driver::start("the_page_comes_back_after_a_network_cut") else { return };
    let ws = Workspace::new("web-cut");
    let llm = FakeLlm::start(vec![text_reply("Hello from the agent")]);
    let server = server(&ws, &llm, &[]);
    let proxy = CutProxy::start(server.addr.parse().unwrap());
    let browser = driver.session();
    sign_in(&browser, &proxy.addr().to_string());
    browser.script(STATES, &[]);
    let before = proxy.connections();
    assert!(proxy.cut() >= 1, "the page holds its stream open through the proxy");
    browser.wait_until("window.__states.includes('connected')", WAIT);
    let states = browser.script("return window.__states", &[]);
    assert_ne!(states[0], "connected", "the page saw the cut: {states}");
    assert!(proxy.connections() > before, "the page connected again");
    // The connection works after the cut: a new session opens in a tab.
    browser.find("#new-session").click();
    browser.wait("#tabs [role='tab']", WAIT);
    browser.screenshot("after-cut");
}
