//! What a [`Session`] can do through chromedriver's Chromium extensions and the window:
//! screenshots, the window's size, Chrome DevTools Protocol commands (zoom, dark mode),
//! and the console's errors.

use std::path::PathBuf;

use base64::Engine;
use serde_json::{Value, json};

use super::session::Session;

impl Session {
    /// Saves a PNG of the viewport as `<artifacts>/<name>.png` (see
    /// [`super::artifacts`]) and returns its path; fails the test if it cannot.
    pub fn screenshot(&self, name: &str) -> PathBuf {
        self.try_screenshot(name).unwrap_or_else(|e| panic!("screenshot {name}: {e}"))
    }

    /// [`Session::screenshot`], an error as `Err` (used while failing).
    pub fn try_screenshot(&self, name: &str) -> Result<PathBuf, String> {
        let data = self.try_get("/screenshot")?;
        let data = data.as_str().ok_or("no screenshot data")?;
        let png = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| format!("bad base64: {e}"))?;
        let dir = super::artifacts(&self.inner.test);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(path)
    }

    /// Sets the window's outer size (in headless Chromium, the viewport's).
    pub fn set_window_size(&self, width: u32, height: u32) {
        self.post("/window/rect", &json!({"width": width, "height": height}));
        *self.size.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = (width, height);
    }

    /// Runs a Chrome DevTools Protocol command on the page; returns its result.
    pub fn cdp(&self, command: &str, params: Value) -> Value {
        self.post("/goog/cdp/execute", &json!({"cmd": command, "params": params}))
    }

    /// Zooms the page as the browser's zoom does: at `factor` 2 the layout viewport is
    /// half as wide in CSS pixels and `devicePixelRatio` is 2. 1 undoes it.
    pub fn zoom(&self, factor: f64) {
        if (factor - 1.0).abs() < f64::EPSILON {
            self.cdp("Emulation.clearDeviceMetricsOverride", json!({}));
            return;
        }
        let (width, height) = *self.size.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let metrics = json!({
            "width": (f64::from(width) / factor).round() as u32,
            "height": (f64::from(height) / factor).round() as u32,
            "deviceScaleFactor": factor,
            "mobile": false,
        });
        self.cdp("Emulation.setDeviceMetricsOverride", metrics);
    }

    /// Makes `prefers-color-scheme` match dark (or light) for this page.
    pub fn emulate_dark_mode(&self, dark: bool) {
        let scheme = if dark { "dark" } else { "light" };
        let features = json!([{"name": "prefers-color-scheme", "value": scheme}]);
        self.cdp("Emulation.setEmulatedMedia", json!({"features": features}));
    }

    /// The browser's log since the last call (Chromium drains it on reading), as
    /// `(level, message)`: levels are `SEVERE`, `WARNING`, `INFO`, `DEBUG`.
    pub fn console(&self) -> Vec<(String, String)> {
        let log = self.post("/se/log", &json!({"type": "browser"}));
        let entries = log.as_array().cloned().unwrap_or_default();
        let field = |e: &Value, k: &str| e[k].as_str().unwrap_or_default().to_string();
        entries.iter().map(|e| (field(e, "level"), field(e, "message"))).collect()
    }

    /// The `SEVERE` entries of [`Session::console`]: `console.error`, uncaught exceptions,
    /// and failed loads (a missing favicon counts).
    pub fn console_errors(&self) -> Vec<String> {
        self.console().into_iter().filter(|(level, _)| level == "SEVERE").map(|(_, m)| m).collect()
    }
}
