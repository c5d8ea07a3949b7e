//! The browser harness on a fixture page (no `iac-code`): clicks, typing into an element
//! and into whatever has focus, modifiers, waits and what a timed-out wait says, two
//! sessions of one driver, dark mode, zoom, the console and screenshots.

use std::time::Duration;

use serde_json::json;

use crate::browser::keys::{ENTER, SHIFT, TAB};
use crate::browser::{Driver, Session, WAIT};
use crate::support::http_fixture::{HttpFixture, Route};

const PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>harness page</title></head>
<body>
<button id="b" onclick="document.getElementById('out').textContent = 'clicked'">Click</button>
<input id="name" onkeydown="if (event.key === 'Enter') document.getElementById('out').textContent = 'typed ' + this.value">
<p id="out">waiting</p>
<div id="later" hidden>later</div>
<script>
setTimeout(() => { document.getElementById('later').hidden = false; }, 200);
console.error('harness-error-marker');
</script>
</body></html>"#;

fn fixture() -> HttpFixture {
    HttpFixture::start(vec![
        ("/", Route::ok("text/html; charset=utf-8", PAGE)),
        ("/favicon.ico", Route::ok("image/x-icon", Vec::new())),
    ])
}

fn out_is(session: &Session, text: &str) {
    session.wait_until(
        &format!("document.getElementById('out').textContent === {}", json!(text)),
        WAIT,
    );
}

#[test]
fn harness_clicks_types_and_waits() {
    let Some(driver) = Driver::start("harness_clicks_types_and_waits") else { return };
    let site = fixture();
    let s = driver.session();
    s.goto(&site.url("/"));
    assert_eq!(s.title(), "harness page");
    assert_eq!(s.url(), site.url("/"));
    assert_eq!(s.find("#out").text(), "waiting");
    assert_eq!(s.find_all("button, input").len(), 2);
    assert!(s.try_find("#nothing").is_none());

    s.find("#b").click();
    out_is(&s, "clicked");
    assert_eq!(s.wait("#later", WAIT).text(), "later", "wait finds what appears later");
    s.wait_text("#out", "click", WAIT);

    // Typing into whatever has focus (keyboard only), then into an element.
    let input = s.find("#name");
    input.click();
    assert!(input.has_focus());
    assert_eq!(s.active_element().attr("id").as_deref(), Some("name"));
    s.keys(&format!("abc{ENTER}"));
    out_is(&s, "typed abc");
    input.clear();
    input.send_keys(&format!("xy{ENTER}"));
    out_is(&s, "typed xy");
    assert_eq!(input.prop("value"), json!("xy"));
    assert_eq!(input.attr("missing"), None);
    // A modifier stays down: Shift+Tab goes back from the input to the button.
    s.keys(&format!("{SHIFT}{TAB}"));
    assert_eq!(s.active_element().attr("id").as_deref(), Some("b"));

    let shown =
        s.script("return arguments[0] + document.querySelectorAll('p').length", &[json!(41)]);
    assert_eq!(shown, json!(42));
    let later =
        s.script_async("const done = arguments[0]; setTimeout(() => done('late'), 10)", &[]);
    assert_eq!(later, json!("late"));

    let errors = s.console_errors();
    assert!(errors.iter().any(|e| e.contains("harness-error-marker")), "{errors:?}");
    let shot = s.screenshot("clicked");
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 1000, "{}", shot.display());
    assert!(shot.ends_with("harness_clicks_types_and_waits/clicked.png"), "{}", shot.display());
}

#[test]
fn harness_sessions_are_apart_and_emulate_dark_mode_and_zoom() {
    let name = "harness_sessions_are_apart_and_emulate_dark_mode_and_zoom";
    let Some(driver) = Driver::start(name) else { return };
    let site = fixture();
    let (one, two) = (driver.session(), driver.session());
    one.goto(&site.url("/"));
    two.goto(&site.url("/"));
    one.script("localStorage.setItem('who', 'one')", &[]);
    one.find("#b").click();
    out_is(&one, "clicked");
    assert_eq!(two.find("#out").text(), "waiting");
    assert_eq!(two.script("return localStorage.getItem('who')", &[]), json!(null), "own profiles");

    let dark = "matchMedia('(prefers-color-scheme: dark)').matches";
    one.emulate_dark_mode(true);
    assert_eq!(one.script(&format!("return {dark}"), &[]), json!(true));
    one.emulate_dark_mode(false);
    assert_eq!(one.script(&format!("return {dark}"), &[]), json!(false));

    let width = || one.script("return [innerWidth, devicePixelRatio]", &[]);
    let before = width();
    // The browser applies a zoom on its next frame: wait for it, never read at once.
    one.zoom(2.0);
    one.wait_until("innerWidth == 640 && devicePixelRatio == 2", WAIT);
    assert_eq!(width(), json!([640, 2]), "at 200 % the page is 640 CSS pixels wide");
    one.zoom(1.0);
    one.wait_until(
        &format!("innerWidth == {} && devicePixelRatio == {}", before[0], before[1]),
        WAIT,
    );
    assert_eq!(width(), before);
    one.set_window_size(800, 600);
    one.wait_until("innerWidth <= 800 && innerWidth > 700", WAIT);
}

#[test]
fn a_wait_that_times_out_says_where_and_what_the_page_shows() {
    let test = "a_wait_that_times_out_says_where_and_what_the_page_shows";
    let Some(driver) = Driver::start(test) else { return };
    let _ = std::fs::remove_dir_all(driver.artifacts());
    let site = fixture();
    let s = driver.session();
    s.goto(&site.url("/"));
    let short = Duration::from_millis(300);
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        s.wait("#never", short);
    }));
    let payload = failed.expect_err("the wait fails");
    let message = payload.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("#never") && message.contains(&site.url("/")), "{message}");
    assert!(message.contains("waiting"), "the page's text: {message}");
    let shot = driver.artifacts().join("failure-0.png");
    assert!(shot.is_file() && message.contains(&shot.display().to_string()), "{message}");
}
