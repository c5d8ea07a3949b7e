//! A small W3C WebDriver client for the web page's tests and bench: [`Driver`] runs a
//! private `chromedriver` on a free loopback port, and each [`Driver::session`] is a fresh
//! headless Chromium ([`Session`], several per driver, e.g. two tabs of one user).
//! Requests go over `ureq`, bodies are `serde_json` values.
//!
//! Without Chromium or chromedriver, [`Driver::start`] prints `SKIPPED <test>: …` and
//! returns `None`, except under CI (`CI` set), where `.ci/run` installs both and a missing
//! one fails the test.

mod chrome;
mod element;
mod session;
mod wire;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

pub use session::Session;
use wire::Wire;

/// How long a test usually waits for the page to show something.
pub const WAIT: Duration = Duration::from_secs(10);

/// W3C WebDriver key codes, for [`element::Element::send_keys`] and [`Session::keys`]. A modifier
/// (SHIFT, CONTROL, ALT, META) stays down until the end of the text: `SHIFT + TAB` is
/// `format!("{SHIFT}{TAB}")`.
#[allow(dead_code, reason = "the W3C key table whole: a test names the key it needs")]
pub mod keys {
    pub const BACKSPACE: &str = "\u{E003}";
    pub const TAB: &str = "\u{E004}";
    pub const ENTER: &str = "\u{E007}";
    pub const SHIFT: &str = "\u{E008}";
    pub const CONTROL: &str = "\u{E009}";
    pub const ALT: &str = "\u{E00A}";
    pub const ESCAPE: &str = "\u{E00C}";
    pub const SPACE: &str = "\u{E00D}";
    pub const PAGE_UP: &str = "\u{E00E}";
    pub const PAGE_DOWN: &str = "\u{E00F}";
    pub const END: &str = "\u{E010}";
    pub const HOME: &str = "\u{E011}";
    pub const ARROW_LEFT: &str = "\u{E012}";
    pub const ARROW_UP: &str = "\u{E013}";
    pub const ARROW_RIGHT: &str = "\u{E014}";
    pub const ARROW_DOWN: &str = "\u{E015}";
    pub const DELETE: &str = "\u{E017}";
    pub const META: &str = "\u{E03D}";

    /// Whether `key` is a modifier that stays down until the text ends.
    pub fn is_modifier(key: char) -> bool {
        matches!(key, '\u{E008}' | '\u{E009}' | '\u{E00A}' | '\u{E03D}')
    }
}

/// The Chromium and chromedriver programs found here.
#[derive(Clone, Debug)]
pub struct Programs {
    pub chromium: PathBuf,
    pub chromedriver: PathBuf,
}

impl Programs {
    /// `/usr/bin/chromium` and `/usr/bin/chromedriver`, or the same names on PATH.
    pub fn find() -> Result<Programs, String> {
        let find = |name: &str| {
            let fixed = PathBuf::from("/usr/bin").join(name);
            if fixed.is_file() {
                return Ok(fixed);
            }
            let path = std::env::var_os("PATH").unwrap_or_default();
            std::env::split_paths(&path)
                .map(|dir| dir.join(name))
                .find(|p| p.is_file())
                .ok_or_else(|| format!("no {name} (apt-get install chromium chromium-driver)"))
        };
        Ok(Programs { chromium: find("chromium")?, chromedriver: find("chromedriver")? })
    }
}

/// A running chromedriver; it is killed when the driver and all its sessions are gone.
pub struct Driver {
    inner: Arc<Inner>,
}

/// What the driver's sessions share.
pub(crate) struct Inner {
    pub(crate) wire: Wire,
    pub(crate) programs: Programs,
    /// The test's name: where its screenshots go, and part of its profile's name.
    pub(crate) test: String,
    child: std::sync::Mutex<Child>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        let child = self.child.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Driver {
    /// The driver for `test`, or `None` after [`skip`](crate::support::skip::skip) when
    /// Chromium or chromedriver is missing (under CI a failure).
    pub fn start(test: &str) -> Option<Driver> {
        match Programs::find() {
            Ok(programs) => {
                // Screenshots of an earlier run of this test would mislead.
                let _ = std::fs::remove_dir_all(artifacts(test));
                // chromedriver's `--port=0` picks a port for IPv4 and then wants the same
                // one for IPv6; when that one is taken it exits ("IPv4 port not
                // available"), so a few tries.
                let mut tries = 0;
                loop {
                    match Driver::launch(test, programs.clone()) {
                        Ok(driver) => return Some(driver),
                        Err(e) if tries < 4 && e.contains("port not available") => tries += 1,
                        Err(e) => panic!("{e}"),
                    }
                }
            }
            Err(why) => {
                crate::support::skip::skip(&why, crate::support::skip::Ci::Fails);
                None
            }
        }
    }

    /// Starts chromedriver on a free loopback port (it picks one with `--port=0` and says
    /// which on its first lines) and waits until `/status` says it is ready.
    pub fn launch(test: &str, programs: Programs) -> Result<Driver, String> {
        let mut child = Command::new(&programs.chromedriver)
            .arg("--port=0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", programs.chromedriver.display()))?;
        let stdout = child.stdout.take().ok_or("no chromedriver stdout")?;
        let (tx, rx) = crossbeam_channel::unbounded();
        // Reads every line to the end, so that chromedriver never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let mut seen = Vec::new();
        let port = loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let Ok(line) = rx.recv_timeout(left) else {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("chromedriver never said its port; it printed {seen:?}"));
            };
            if let Some(rest) = line.split("started successfully on port ").nth(1) {
                break rest.trim_end_matches('.').trim().to_string();
            }
            seen.push(line);
        };
        let wire = Wire::new(format!("http://127.0.0.1:{port}"));
        let inner =
            Inner { wire, programs, test: test.to_string(), child: std::sync::Mutex::new(child) };
        while !inner.wire.get("/status").is_ok_and(|s| s["ready"] == true) {
            if std::time::Instant::now() > deadline {
                return Err("chromedriver never became ready".to_string());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Driver { inner: Arc::new(inner) })
    }

    /// A new headless Chromium with a fresh profile.
    pub fn session(&self) -> Session {
        Session::open(Arc::clone(&self.inner))
    }

    /// The directory this test's screenshots go to:
    /// `<CARGO_TARGET_DIR or target>/web-artifacts/<test>/`.
    pub fn artifacts(&self) -> PathBuf {
        artifacts(&self.inner.test)
    }
}

/// `<CARGO_TARGET_DIR or target>/web-artifacts/<test>/`.
pub fn artifacts(test: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/target")));
    target.join("web-artifacts").join(test)
}
