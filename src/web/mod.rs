//! The web client's files, compiled into the binary: `index.html` at `/`, and the style
//! sheet and JavaScript modules under `/web/`. Plain files, no build step and no network:
//! the page speaks ACP over `POST /acp` and `GET /acp` like any other client (see
//! `page/acp.js`). This module only knows the files: the HTTP transport serves them with
//! [`HEADERS`] and decides whether to (`--no-web`).

/// One file of the page.
pub struct Asset {
    /// Its path on the server (`/`, `/web/app.js`).
    pub path: &'static str,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// Its bytes.
    pub body: &'static [u8],
    /// Its `ETag` (a quoted FNV-1a hash of the bytes, computed at compile time).
    pub etag: &'static str,
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const SVG: &str = "image/svg+xml";

macro_rules! asset {
    ($path:literal, $file:literal, $kind:expr) => {{
        const BODY: &[u8] = include_bytes!(concat!("page/", $file));
        const HEX: [u8; 18] = etag(BODY);
        Asset {
            path: $path,
            content_type: $kind,
            body: BODY,
            etag: match std::str::from_utf8(&HEX) {
                Ok(etag) => etag,
                Err(_) => panic!("an ETag is ASCII"),
            },
        }
    }};
}

/// Every file of the page. Nothing else is served: a path not in this table is 404.
pub static ASSETS: &[Asset] = &[
    asset!("/", "index.html", HTML),
    asset!("/web/app.css", "app.css", CSS),
    asset!("/web/icon.svg", "icon.svg", SVG),
    asset!("/web/main.js", "main.js", JS),
    asset!("/web/acp.js", "acp.js", JS),
    asset!("/web/sse.js", "sse.js", JS),
    asset!("/web/dom.js", "dom.js", JS),
    asset!("/web/markdown.js", "markdown.js", JS),
    asset!("/web/diff.js", "diff.js", JS),
    asset!("/web/session.js", "session.js", JS),
    asset!("/web/log.js", "log.js", JS),
    asset!("/web/tools.js", "tools.js", JS),
    asset!("/web/questions.js", "questions.js", JS),
    asset!("/web/composer.js", "composer.js", JS),
    asset!("/web/sidebar.js", "sidebar.js", JS),
];

/// Headers every file of the page is served with. The policy allows scripts, styles and
/// connections to this origin only, no inline script or style, no framing, and Trusted
/// Types with no policy: a string can never become markup or script, so model and tool
/// output can only ever be text, whatever the page's code does by mistake.
pub const HEADERS: &[(&str, &str)] = &[
    (
        "Content-Security-Policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
         connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; \
         require-trusted-types-for 'script'; trusted-types 'none'",
    ),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
    ("Cache-Control", "no-cache"),
];

/// The file served at `path`, if any.
pub fn asset(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.path == path)
}

/// The total size of the page in bytes (the budget is 200 KiB).
pub fn total_size() -> usize {
    ASSETS.iter().map(|a| a.body.len()).sum()
}

/// `"` + 16 hex digits of the FNV-1a hash of `bytes` + `"`.
const fn etag(bytes: &[u8]) -> [u8; 18] {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    let digits = b"0123456789abcdef";
    let mut out = [b'"'; 18];
    let mut n = 0;
    while n < 16 {
        out[1 + n] = digits[((hash >> (60 - 4 * n)) & 0xf) as usize];
        n += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_fits_its_budget_and_every_module_it_imports_is_served() {
        assert!(total_size() <= 200 << 10, "the page is {} bytes, over 200 KiB", total_size());
        for a in ASSETS {
            let text = std::str::from_utf8(a.body).expect("assets are UTF-8");
            for line in text.lines() {
                let line = line.trim();
                if !(line.starts_with("import ") || line.starts_with("} from ")) {
                    continue;
                }
                let Some(start) = line.find("\"./") else { continue };
                let rest = &line[start + 3..];
                let name = &rest[..rest.find('"').expect("a closed import path")];
                assert!(
                    asset(&format!("/web/{name}")).is_some(),
                    "{}: {name} is not served",
                    a.path
                );
            }
        }
    }

    #[test]
    fn no_page_file_writes_markup_from_strings() {
        // Trusted Types would stop it at run time; this keeps it out of the code too.
        for a in ASSETS.iter().filter(|a| a.content_type == JS) {
            let text = std::str::from_utf8(a.body).expect("assets are UTF-8");
            for banned in
                ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("]
            {
                assert!(!text.contains(banned), "{} uses {banned}", a.path);
            }
        }
    }

    #[test]
    fn etags_differ_with_the_bytes() {
        assert_ne!(etag(b"a"), etag(b"b"));
        assert_eq!(etag(b"").len(), 18);
        let unique: std::collections::BTreeSet<_> = ASSETS.iter().map(|a| a.etag).collect();
        assert_eq!(unique.len(), ASSETS.len());
    }
}
