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
