//! The web page (`GET /` of `iac-code acp --transport http`) in a real headless Chromium,
//! driven over WebDriver (`tests/support/browser/`), and the loopback proxy that cuts its
//! connections (`tests/support/cut_proxy.rs`). A test binary of its own, so that the
//! integration suite neither builds nor waits for browsers: `cargo test --test web`.
//! Without Chromium and chromedriver (`apt-get install chromium chromium-driver`) each
//! browser test prints `SKIPPED` and passes, except under CI (`CI` set), where `.ci/run`
//! installs them. Screenshots go to `<target>/web-artifacts/<test>/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// The part of the shared harness (tests/support/) the page's tests use: the real binary over
// HTTP, the fake LLM, workspaces, a fixture server. The integration binary includes all of
// it and checks it for dead code; here each module is used only in part.
#[allow(dead_code, unused_imports, reason = "this binary uses a part of the shared module")]
#[path = "support/command.rs"]
mod command;
#[allow(dead_code, unused_imports, reason = "this binary uses a part of the shared module")]
#[path = "support/fake_llm/mod.rs"]
mod fake_llm;
#[allow(dead_code, unused_imports, reason = "this binary uses a part of the shared module")]
#[path = "support/http_client.rs"]
mod http_client;
#[allow(dead_code, unused_imports, reason = "this binary uses a part of the shared module")]
#[path = "support/http_fixture.rs"]
mod http_fixture;
#[allow(dead_code, unused_imports, reason = "this binary uses a part of the shared module")]
#[path = "support/schema.rs"]
mod schema;
#[allow(dead_code, unused_imports, reason = "this binary uses a part of the shared module")]
#[path = "support/skip.rs"]
mod skip;
#[allow(dead_code, unused_imports, reason = "this binary uses a part of the shared module")]
#[path = "support/workspace.rs"]
mod workspace;
/// Where the shared modules look for each other (`crate::support::…`).
mod support {
    pub(crate) use crate::{fake_llm, http_client, http_fixture, skip, workspace};
}

#[path = "support/browser/mod.rs"]
mod browser;
#[path = "support/cut_proxy.rs"]
mod cut_proxy;

// The tests, in `tests/web/`.
mod web {
    // The browser harness itself, on a fixture page: clicks, keys, waits, CDP, screenshots.
    mod harness;
    // The cutting proxy: a cut ends live connections, new ones work, the backend switches.
    mod cut;
    // What they share: the server with a token, signing in.
    pub mod page;
    // The page served by the real server loads, asks for the token and connects.
    mod smoke;
    // How the page is served: no token, its policy, ETags, 404s, --no-web, Origin.
    mod served;
    // Sign in and stream, a write and its diff, a destroy refused (real terraform), markup.
    mod flows;
    // A cut mid-reply, a new node on the same sessions, two tabs streaming at once.
    mod resume;
    // Keyboard only, zoom and dark mode, commands, forms, huge outputs and sessions.
    mod access;
    // The plan checklist, the context meter, cancel.
    mod turns;
}
