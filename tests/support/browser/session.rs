//! One headless Chromium driven over WebDriver: navigation, finding and waiting for
//! elements, scripts, and keyboard input to whatever has focus. Every failure panics with
//! the page's URL, the tail of its visible text and a screenshot's path. Chromium-only
//! extras (screenshots, CDP, zoom, dark mode, console) are in `chrome.rs`.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::element::Element;
use super::{Inner, keys};

/// How often a wait looks again.
const POLL: Duration = Duration::from_millis(25);

/// Distinguishes the profiles of one test process's sessions.
static PROFILES: AtomicUsize = AtomicUsize::new(0);

/// A browser with its own fresh profile; it quits, and its profile is removed, on drop.
pub struct Session {
    pub(crate) inner: Arc<Inner>,
    pub(crate) id: String,
    profile: PathBuf,
    /// The window's size as last set, which `zoom` divides.
    pub(crate) size: std::sync::Mutex<(u32, u32)>,
    /// Screenshots taken on failures, numbered.
    pub(crate) failures: AtomicUsize,
}

impl Session {
    pub(crate) fn open(inner: Arc<Inner>) -> Session {
        let n = PROFILES.fetch_add(1, Ordering::SeqCst);
        let name = format!("{}-{}-{n}", inner.test, std::process::id());
        let profile = std::env::temp_dir().join("iac-code-web").join(name);
        let _ = std::fs::remove_dir_all(&profile);
        std::fs::create_dir_all(&profile).expect("create the browser profile");
        let (width, height) = (1280, 900);
        let args = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--disable-extensions",
            "--metrics-recording-only",
            &format!("--window-size={width},{height}"),
            &format!("--user-data-dir={}", profile.display()),
        ];
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "pageLoadStrategy": "normal",
            "timeouts": {"implicit": 0, "pageLoad": 30_000, "script": 30_000},
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {
                "binary": inner.programs.chromium,
                "args": args,
            },
        }}});
        let created = inner.wire.post("/session", &capabilities);
        let created = created.unwrap_or_else(|e| panic!("cannot start Chromium: {e}"));
        let id = created["sessionId"].as_str().expect("a session id").to_string();
        Session {
            inner,
            id,
            profile,
            size: std::sync::Mutex::new((width, height)),
            failures: AtomicUsize::new(0),
        }
    }

    /// `GET /session/<id><suffix>`, an error as `Err`.
    pub(crate) fn try_get(&self, suffix: &str) -> Result<Value, String> {
        self.inner.wire.get(&format!("/session/{}{suffix}", self.id))
    }

    /// `POST /session/<id><suffix>`, an error as `Err`.
    pub(crate) fn try_post(&self, suffix: &str, body: &Value) -> Result<Value, String> {
        self.inner.wire.post(&format!("/session/{}{suffix}", self.id), body)
    }

    /// `GET`, failing the test on an error.
    pub(crate) fn get(&self, suffix: &str) -> Value {
        self.try_get(suffix).unwrap_or_else(|e| self.fail(&e))
    }

    /// `POST`, failing the test on an error.
    pub(crate) fn post(&self, suffix: &str, body: &Value) -> Value {
        self.try_post(suffix, body).unwrap_or_else(|e| self.fail(&e))
    }

    /// Loads `url` and waits for its `load` event.
    pub fn goto(&self, url: &str) {
        self.post("/url", &json!({"url": url}));
    }

    /// The page's current URL.
    pub fn url(&self) -> String {
        self.get("/url").as_str().unwrap_or_default().to_string()
    }

    /// `document.title`.
    pub fn title(&self) -> String {
        self.get("/title").as_str().unwrap_or_default().to_string()
    }

    /// `document.body.innerText` (empty while there is no body).
    pub fn body_text(&self) -> String {
        let text = self.try_post("/execute/sync", &script_body(BODY_TEXT, &[]));
        text.ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
    }

    /// The first element matching `css`, or `None`.
    pub fn try_find(&self, css: &str) -> Option<Element<'_>> {
        let found = self.try_post("/element", &by_css(css)).ok()?;
        Element::from_json(self, &found)
    }

    /// The first element matching `css`; fails the test if there is none.
    pub fn find(&self, css: &str) -> Element<'_> {
        self.try_find(css).unwrap_or_else(|| self.fail(&format!("no element matches {css:?}")))
    }

    /// Every element matching `css`, in document order.
    pub fn find_all(&self, css: &str) -> Vec<Element<'_>> {
        let found = self.post("/elements", &by_css(css));
        let list = found.as_array().cloned().unwrap_or_default();
        list.iter().filter_map(|v| Element::from_json(self, v)).collect()
    }

    /// Waits up to `timeout` for an element matching `css` to be present and displayed.
    pub fn wait(&self, css: &str, timeout: Duration) -> Element<'_> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(element) = self.try_find(css)
                && element.try_displayed() == Some(true)
            {
                return element;
            }
            if Instant::now() > deadline {
                self.fail(&format!("no visible element matches {css:?} after {timeout:?}"));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Waits up to `timeout` for the first element matching `css` to show text containing
    /// `needle` (its `innerText`, as a user sees it); returns the element.
    pub fn wait_text(&self, css: &str, needle: &str, timeout: Duration) -> Element<'_> {
        let js = format!(
            "(() => {{ const e = document.querySelector({}); \
             return !!e && e.innerText.includes({}); }})()",
            json!(css),
            json!(needle)
        );
        self.wait_until(&js, timeout);
        self.find(css)
    }

    /// Waits up to `timeout` for the JavaScript expression `condition` to be truthy
    /// (`document.title === "x"`; statements go in an arrow function called at once);
    /// returns its value. A script error counts as false (the page may be loading); the
    /// last value or error is in the panic.
    pub fn wait_until(&self, condition: &str, timeout: Duration) -> Value {
        let body = format!("return ({condition});");
        let deadline = Instant::now() + timeout;
        let mut last;
        loop {
            match self.try_post("/execute/sync", &script_body(&body, &[])) {
                Ok(v) if truthy(&v) => return v,
                Ok(v) => last = v,
                Err(e) => last = Value::String(e),
            }
            if Instant::now() > deadline {
                self.fail(&format!("{condition:?} still not true after {timeout:?}: {last}"));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Runs `js` (a function body: `return …` gives the result) with `args` (`arguments[i]`;
    /// an element is passed as [`Element::json`]).
    pub fn script(&self, js: &str, args: &[Value]) -> Value {
        self.post("/execute/sync", &script_body(js, args))
    }

    /// Runs `js` as an async script: it ends by calling `arguments[arguments.length - 1]`
    /// with the result (within the session's 30 s script timeout).
    pub fn script_async(&self, js: &str, args: &[Value]) -> Value {
        self.post("/execute/async", &script_body(js, args))
    }

    /// The element that has focus (the body when none has).
    pub fn active_element(&self) -> Element<'_> {
        let found = self.get("/element/active");
        Element::from_json(self, &found).unwrap_or_else(|| self.fail("no active element"))
    }

    /// Types `text` into whatever has focus, through the Actions API: each character is
    /// pressed and released; a modifier in [`keys`] stays down until the end.
    pub fn keys(&self, text: &str) {
        let mut actions = Vec::new();
        let mut held = Vec::new();
        for key in text.chars() {
            let value = key.to_string();
            if keys::is_modifier(key) {
                if !held.contains(&value) {
                    actions.push(json!({"type": "keyDown", "value": value}));
                    held.push(value);
                }
                continue;
            }
            actions.push(json!({"type": "keyDown", "value": value}));
            actions.push(json!({"type": "keyUp", "value": value}));
        }
        for value in held.iter().rev() {
            actions.push(json!({"type": "keyUp", "value": value}));
        }
        let body = json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]});
        self.post("/actions", &body);
    }

    /// Fails the test: `what`, the page's URL, the tail of its text, and a screenshot.
    pub fn fail(&self, what: &str) -> ! {
        let url = self.try_get("/url").map(|v| v.to_string()).unwrap_or_else(|e| e);
        let text = self.body_text();
        let tail: String = {
            let chars: Vec<char> = text.chars().collect();
            chars[chars.len().saturating_sub(1500)..].iter().collect()
        };
        let n = self.failures.fetch_add(1, Ordering::SeqCst);
        let shot = self.try_screenshot(&format!("failure-{n}"));
        let shot = shot.map(|p| p.display().to_string()).unwrap_or_else(|e| e);
        panic!("{what}\n  at {url}\n  screenshot: {shot}\n  page text (tail):\n{tail}")
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.inner.wire.delete(&format!("/session/{}", self.id));
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

const BODY_TEXT: &str = "return document.body ? document.body.innerText : ''";

fn by_css(css: &str) -> Value {
    json!({"using": "css selector", "value": css})
}

fn script_body(js: &str, args: &[Value]) -> Value {
    json!({"script": js, "args": args})
}

/// JavaScript's truthiness of a returned value.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}
