//! HTML to readable text for `web_fetch`: scripts, styles and other invisible elements
//! dropped, block elements on their own lines, headings and list items marked, links kept
//! with their targets, entities decoded, whitespace collapsed (except in `<pre>`). A small
//! tolerant scanner, not a full HTML parser: malformed markup degrades to text.

/// Elements whose content is never shown.
const SKIPPED: &[&str] =
    &["script", "style", "noscript", "template", "svg", "head", "iframe", "object", "canvas"];
/// Elements that start and end a line.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tr",
    "ul",
    "title",
];

/// Converts an HTML document to text.
pub(super) fn to_text(html: &str) -> String {
    let mut out = String::new();
    let title = element_text(html, "title");
    if let Some(title) = &title {
        out.push_str(&format!("# {title}\n\n"));
    }
    let mut rest = html;
    let mut pre = 0usize;
    let mut link: Option<String> = None;
    while let Some(lt) = rest.find('<') {
        push_text(&mut out, &rest[..lt], pre > 0);
        rest = &rest[lt..];
        let starts_tag = rest[1..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '/' | '!' | '?'));
        if !starts_tag {
            push_text(&mut out, "<", pre > 0);
            rest = &rest[1..];
            continue;
        }
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |end| &after[end + 3..]);
            continue;
        }
        let Some(end) = tag_end(rest) else {
            push_text(&mut out, rest, pre > 0);
            rest = "";
            break;
        };
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if name.is_empty() {
            continue; // <!DOCTYPE>, <?xml?>, stray '<'
        }
        if !closing && SKIPPED.contains(&name.as_str()) {
            rest = skip_element(rest, &name);
            continue;
        }
        match (name.as_str(), closing) {
            ("pre", false) => pre += 1,
            ("pre", true) => pre = pre.saturating_sub(1),
            ("a", false) => link = attribute(tag, "href"),
            ("a", true) => {
                if let Some(href) = link.take().filter(|h| h.starts_with("http")) {
                    out.push_str(&format!(" ({href})"));
                }
            }
            ("td" | "th", true) => out.push_str(" | "),
            _ => {}
        }
        if BLOCKS.contains(&name.as_str()) {
            newline(&mut out, if name == "br" || name == "li" || name == "tr" { 1 } else { 2 });
            if !closing {
                if let Some(level) = name.strip_prefix('h').and_then(|l| l.parse::<usize>().ok()) {
                    out.push_str(&"#".repeat(level));
                    out.push(' ');
                } else if name == "li" {
                    out.push_str("- ");
                } else if name == "hr" {
                    out.push_str("---\n");
                }
            }
        }
    }
    push_text(&mut out, rest, pre > 0);
    tidy(&out)
}

/// The index of the `>` that ends the tag starting at `s[0] == '<'`, skipping quoted values.
fn tag_end(s: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in s.char_indices().skip(1) {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(i),
            _ => {}
        }
    }
    None
}

/// Skips to just after `</name>`, or to the end.
fn skip_element<'a>(rest: &'a str, name: &str) -> &'a str {
    match find_ascii_ci(rest, &format!("</{name}")) {
        Some(at) => {
            let after = &rest[at..];
            after.find('>').map_or("", |end| &after[end + 1..])
        }
        None => "",
    }
}

/// The first index of `needle` (ASCII) in `haystack`, ignoring ASCII case; linear in the
/// haystack, no copy.
fn find_ascii_ci(haystack: &str, needle: &str) -> Option<usize> {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    let first = n.first()?.to_ascii_lowercase();
    let mut i = 0;
    while i + n.len() <= h.len() {
        if h[i].to_ascii_lowercase() == first && h[i..i + n.len()].eq_ignore_ascii_case(n) {
            return Some(i);
        }
        i += 1;
    }
    None
}

fn attribute(tag: &str, name: &str) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let at = lower.find(&format!("{name}="))? + name.len() + 1;
    let value = &tag[at..];
    let value = match value.chars().next()? {
        q @ ('"' | '\'') => value[1..].split(q).next()?,
        _ => value.split(|c: char| c.is_whitespace() || c == '>').next()?,
    };
    Some(decode_entities(value))
}

fn element_text(html: &str, name: &str) -> Option<String> {
    let start = find_ascii_ci(html, &format!("<{name}"))?;
    let open_end = start + tag_end(&html[start..])?;
    let close = find_ascii_ci(&html[open_end..], &format!("</{name}"))? + open_end;
    let text = decode_entities(&html[open_end + 1..close]);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

fn push_text(out: &mut String, raw: &str, pre: bool) {
    if raw.is_empty() {
        return;
    }
    let text = decode_entities(raw);
    if pre {
        out.push_str(&text);
        return;
    }
    let starts_space = text.starts_with(char::is_whitespace);
    let ends_space = text.ends_with(char::is_whitespace);
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() {
        if !out.ends_with([' ', '\n']) && !out.is_empty() {
            out.push(' ');
        }
        return;
    }
    if starts_space && !out.ends_with([' ', '\n']) && !out.is_empty() {
        out.push(' ');
    }
    out.push_str(&words.join(" "));
    if ends_space {
        out.push(' ');
    }
}

fn newline(out: &mut String, count: usize) {
    while out.ends_with(' ') {
        out.pop();
    }
    let have = out.chars().rev().take_while(|c| *c == '\n').count();
    for _ in have..count {
        out.push('\n');
    }
}

/// Trims trailing spaces on lines and folds runs of blank lines.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.trim().is_empty() {
            blank += 1;
            if blank > 1 || out.is_empty() {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_string()
}

/// Decodes the common named entities and every numeric one.
pub(super) fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest.char_indices().take(12).find(|(_, c)| *c == ';').map(|(i, _)| i);
        let decoded = end.and_then(|end| entity(&rest[1..end]).map(|c| (c, end)));
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<char> {
    if let Some(num) = name.strip_prefix('#') {
        let code = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse().ok()?,
        };
        return char::from_u32(code);
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "laquo" => '«',
        "raquo" => '»',
        "bull" => '•',
        "middot" => '·',
        "times" => '×',
        "rarr" => '→',
        "larr" => '←',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_a_page_into_text() {
        let html = r#"<!DOCTYPE html><html><head><title>AWS &amp; Terraform</title>
            <style>body { color: red }</style><script>var x = "<p>no</p>";</script></head>
            <body><!-- hidden --><h1>Provider</h1><p>Use the <a href="https://x.io/doc">docs</a>
            wisely.</p><ul><li>one</li><li>two &lt;3&gt;</li></ul>
            <pre>  indented
    code</pre><p>caf&#233; &#x263A;</p></body></html>"#;
        let text = to_text(html);
        let expected = "# AWS & Terraform\n\n# Provider\n\nUse the docs (https://x.io/doc) wisely.\n\n- one\n- two <3>\n\n  indented\n    code\n\ncafé ☺";
        assert_eq!(text, expected);
    }

    #[test]
    fn many_skipped_elements_stay_linear() {
        let page = "<SVG></svg>x".repeat(200_000);
        assert_eq!(to_text(&page).len(), 200_000);
    }

    #[test]
    fn tolerates_broken_markup() {
        assert_eq!(to_text("a < b and <b>bold"), "a < b and bold");
        assert_eq!(to_text("<p>x<script>never closed"), "x");
        assert_eq!(decode_entities("&bogus; & &amp"), "&bogus; & &amp");
    }
}
