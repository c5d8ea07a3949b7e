//! What the page's tests share: the real server started with a token and the fake LLM,
//! and signing in the way a user does (the token typed into the form the page shows).

use crate::browser::keys::ENTER;
use crate::browser::{Session, WAIT};
use crate::support::fake_llm::FakeLlm;
use crate::support::http_client::HttpServer;
use crate::support::workspace::Workspace;

/// The token the servers of these tests are started with.
pub const TOKEN: &str = "web-test-token";

/// The page's one expected console error: its first `POST /acp`, without a token, is
/// answered 401, which is how it learns to show the sign-in form.
pub const FIRST_401: &str =
    "/acp - Failed to load resource: the server responded with a status of 401";

/// The real server, with `llm` and `args`, requiring [`TOKEN`].
pub fn server(ws: &Workspace, llm: &FakeLlm, args: &[&str]) -> HttpServer {
    HttpServer::spawn(ws, Some(llm), args, &[("IACCODE_ACP_HTTP_TOKEN", TOKEN)])
}

/// Opens `http://<addr>/`, types [`TOKEN`] into the sign-in form (focused for the user)
/// and waits until the page says it is connected. Fails on any console error but the
/// first 401.
pub fn sign_in(browser: &Session, addr: &str) {
    browser.goto(&format!("http://{addr}/"));
    browser.wait("#token", WAIT);
    browser.wait_until("document.activeElement === document.getElementById('token')", WAIT);
    browser.keys(&format!("{TOKEN}{ENTER}"));
    browser.wait("#status[data-state='connected']", WAIT);
    browser.wait("#app", WAIT);
    let errors: Vec<String> =
        browser.console_errors().into_iter().filter(|e| !e.contains(FIRST_401)).collect();
    assert!(errors.is_empty(), "console errors while signing in: {errors:?}");
}

/// The panel of the session shown now.
pub const PANEL: &str = "section.session:not([hidden])";

/// Starts a session in the page's directory (the server's cwd) and waits for its prompt.
pub fn new_session(browser: &Session) {
    let before = browser.find_all("section.session").len();
    browser.find("#new-session").click();
    browser.wait_until(
        &format!("document.querySelectorAll('section.session').length > {before}"),
        WAIT,
    );
    browser.wait(&format!("{PANEL} textarea.prompt"), WAIT);
}

/// Types `text` into the shown session's prompt and sends it with Enter.
pub fn prompt(browser: &Session, text: &str) {
    let input = browser.wait(&format!("{PANEL} textarea.prompt"), WAIT);
    input.click();
    browser.keys(&format!("{text}{ENTER}"));
    // The page marks the turn running as the key is handled; a fast one may be over.
    browser.wait(&format!("{PANEL} form.composer[data-running]"), WAIT);
}

/// Waits until the shown session's turn is over.
pub fn wait_idle(browser: &Session) {
    browser.wait(&format!("{PANEL} form.composer[data-running='false']"), WAIT);
}

/// The text of the shown session's agent messages, one string each.
pub fn agent_texts(browser: &Session) -> Vec<String> {
    let found = browser.script(
        "return [...document.querySelectorAll(arguments[0] + ' .msg.agent .md')].map(e => e.innerText.trim())",
        &[serde_json::json!(PANEL)],
    );
    serde_json::from_value(found).unwrap()
}

/// Console errors but the first 401 (see [`FIRST_401`]).
pub fn console_errors(browser: &Session) -> Vec<String> {
    browser.console_errors().into_iter().filter(|e| !e.contains(FIRST_401)).collect()
}

/// Waits until the shown session's last agent message contains `needle`.
pub fn wait_last_agent(browser: &Session, needle: &str) {
    let js = format!(
        "(() => {{ const m = [...document.querySelectorAll({PANEL:?} + ' .msg.agent')].pop(); \
         return !!m && m.innerText.includes({needle:?}); }})()"
    );
    browser.wait_until(&js, WAIT);
}

/// Waits until the journal of session `id` in `ws` holds `needle` (the server wrote it).
pub fn wait_journal(ws: &Workspace, id: &str, needle: &str) {
    let journal = ws.config().join("sessions").join(id).join("journal.jsonl");
    let deadline = std::time::Instant::now() + WAIT;
    while !std::fs::read_to_string(&journal).is_ok_and(|j| j.contains(needle)) {
        assert!(
            std::time::Instant::now() < deadline,
            "{} never held {needle:?}",
            journal.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
