//! What goes inside a rule's parentheses, compiled once: a command pattern (`*` only, over
//! a whole normalised command line), a path glob (globset, `*` stays within one directory)
//! and a domain. Pure; knows nothing of tools.

/// A pattern over one simple command, normalised (words joined by one space): `*` matches
/// any characters, spaces included; a final `:*` matches the words before it alone or
/// followed by a space and anything.
#[derive(Debug, Clone)]
pub struct CommandPattern {
    /// The literal runs between the `*`s (`git *` → `["git ", ""]`).
    parts: Vec<String>,
    /// For a final `:*`: the prefix, a space and anything (`npm run test:*` → `["npm run
    /// test ", ""]`), matched besides `parts`.
    words: Option<Vec<String>>,
}

impl CommandPattern {
    /// Compiles `spec` (already known to be non-empty).
    pub(super) fn new(spec: &str) -> CommandPattern {
        let spec = normalise(spec);
        let (body, words) = match spec.strip_suffix(":*") {
            Some(body) => (body.trim_end(), true),
            None => (spec.as_str(), false),
        };
        let parts: Vec<String> = body.split('*').map(str::to_string).collect();
        let words = words.then(|| {
            let mut words = parts.clone();
            if let Some(last) = words.last_mut() {
                last.push(' ');
            }
            words.push(String::new());
            words
        });
        CommandPattern { parts, words }
    }

    /// Whether the whole normalised `line` matches (anchored at both ends).
    pub fn matches(&self, line: &str) -> bool {
        wild(&self.parts, line) || self.words.as_ref().is_some_and(|words| wild(words, line))
    }

    /// Whether `raw` (a command that was not fully understood) may run what this pattern
    /// names: its first literal run (the text before the first `*`, or after it when the
    /// pattern starts with one) occurs in `raw` where a word starts (`rm ` is found in
    /// `x=$(rm -rf y)` and `/bin/rm -rf y`, not in `terraform plan`), whitespace runs
    /// counted as one space. A pattern of `*`s alone matches anything.
    pub fn occurs_in(&self, raw: &str) -> bool {
        let Some(literal) = self.parts.iter().find(|p| !p.is_empty()) else { return true };
        let raw = normalise_keep_edges(raw);
        let wordish = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
        let starts_word = literal.chars().next().is_some_and(wordish);
        raw.match_indices(literal.as_str())
            .any(|(at, _)| !starts_word || !raw[..at].chars().next_back().is_some_and(wordish))
    }
}

impl CommandPattern {
    /// Whether some command `line` may stand for matches this pattern: `line` is itself a
    /// pattern, each `*` a hidden part (any text, spaces included). Two patterns of `*`s
    /// alone meet when some text matches both. Too long a pair to compare is taken to meet:
    /// this serves deny and ask rules, which must hold.
    pub fn meets(&self, line: &str) -> bool {
        meet(&self.parts, line) || self.words.as_ref().is_some_and(|words| meet(words, line))
    }
}

/// How large a comparison of two patterns may be (characters × characters).
const MAX_MEET: usize = 4_000_000;

/// Whether the pattern `parts` (literal runs between `*`s) and the pattern `line` (`*` for
/// any text) have a text in common.
fn meet(parts: &[String], line: &str) -> bool {
    // `None` is a `*`.
    let mut a: Vec<Option<char>> = Vec::new();
    for (k, part) in parts.iter().enumerate() {
        if k > 0 {
            a.push(None);
        }
        a.extend(part.chars().map(Some));
    }
    let b: Vec<Option<char>> = line.chars().map(|c| (c != '*').then_some(c)).collect();
    if (a.len() + 1).saturating_mul(b.len() + 1) > MAX_MEET {
        return true;
    }
    // `next[j]`: whether a[i+1..] and b[j..] meet; `row[j]`: a[i..] and b[j..].
    let mut next = vec![false; b.len() + 1];
    let mut row = vec![false; b.len() + 1];
    for i in (0..=a.len()).rev() {
        for j in (0..=b.len()).rev() {
            row[j] = match (a.get(i), b.get(j)) {
                (None, None) => true,
                (Some(None), _) => next[j] || (j < b.len() && row[j + 1]),
                (_, Some(None)) => row[j + 1] || (i < a.len() && next[j]),
                (Some(Some(x)), Some(Some(y))) => x == y && next[j + 1],
                _ => false,
            };
        }
        std::mem::swap(&mut next, &mut row);
    }
    next[0]
}

/// A glob over a path relative to the cwd (or absolute outside it): globset's syntax, `*`
/// and `?` never cross a `/`, `**` does.
#[derive(Debug, Clone)]
pub struct PathPattern {
    glob: globset::GlobMatcher,
}

impl PathPattern {
    /// Compiles `spec`, or says why it cannot be.
    pub(super) fn new(spec: &str) -> Result<PathPattern, String> {
        let spec = spec.trim();
        if spec.starts_with('~') {
            return Err("'~' is not expanded in a path pattern: write the absolute path".into());
        }
        // Claude Code writes an absolute path with two slashes (`//etc/**`).
        let spec = match spec.strip_prefix("//") {
            Some(rest) => format!("/{rest}"),
            None => strip_dot(spec).to_string(),
        };
        let glob = globset::GlobBuilder::new(&spec)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|err| format!("bad path pattern: {}", err.kind()))?;
        Ok(PathPattern { glob: glob.compile_matcher() })
    }

    /// Whether `path` (relative to the cwd, or absolute) matches.
    pub fn matches(&self, path: &str) -> bool {
        self.glob.is_match(strip_dot(path))
    }
}

/// A host and its subdomains (`example.com` matches `example.com` and `api.example.com`,
/// never `badexample.com`).
#[derive(Debug, Clone)]
pub struct Domain {
    name: String,
}

impl Domain {
    /// The domain of `domain:NAME`, or why it is not one.
    pub(super) fn new(spec: &str) -> Result<Domain, String> {
        let Some(name) = spec.trim().strip_prefix("domain:") else {
            return Err(format!(
                "web_fetch takes a domain: write web_fetch(domain:{})",
                spec.trim()
            ));
        };
        let name = name.trim().trim_end_matches('.').to_ascii_lowercase();
        let valid = |label: &str| {
            !label.is_empty()
                && label.len() <= 63
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        };
        if name.is_empty() || name.len() > 253 || !name.split('.').all(valid) {
            return Err(format!(
                "'{name}' is not a host name (letters, digits, '-' and dots; no scheme, port, \
                 path or '*': a domain already covers its subdomains)"
            ));
        }
        Ok(Domain { name })
    }

    /// Whether `host` is this domain or one of its subdomains (case-insensitive).
    pub fn matches(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        host == self.name
            || host.strip_suffix(self.name.as_str()).is_some_and(|rest| rest.ends_with('.'))
    }
}

/// Whether `name` matches `pattern`, where `*` matches any characters (tool names).
pub(super) fn name_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<String> = pattern.split('*').map(str::to_string).collect();
    wild(&parts, name)
}

/// Whether `text` is `parts` joined by runs of any characters: the first part a prefix,
/// the last a suffix, the others found in order between them.
fn wild(parts: &[String], text: &str) -> bool {
    let (first, rest) = match parts.split_first() {
        Some(split) => split,
        None => return text.is_empty(),
    };
    let Some(mut text) = text.strip_prefix(first.as_str()) else { return false };
    let Some((last, middle)) = rest.split_last() else { return text.is_empty() };
    for part in middle {
        match text.find(part.as_str()) {
            Some(at) => text = &text[at + part.len()..],
            None => return false,
        }
    }
    text.len() >= last.len() && text.ends_with(last.as_str())
}

/// `text` trimmed, with every run of whitespace made one space.
pub(super) fn normalise(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` with every run of whitespace made one space, edges kept (so that a literal
/// `"git "` is found at the end of `"x; git\tpush"`).
fn normalise_keep_edges(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            if !space {
                out.push(' ');
            }
            space = true;
        } else {
            out.push(c);
            space = false;
        }
    }
    out
}

/// `path` without a leading `./`.
fn strip_dot(path: &str) -> &str {
    let mut path = path;
    while let Some(rest) = path.strip_prefix("./") {
        path = rest.trim_start_matches('/');
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(p: &str) -> Vec<String> {
        p.split('*').map(str::to_string).collect()
    }

    #[test]
    fn stars_match_any_run_of_characters() {
        for (pattern, text, want) in [
            ("a*c", "abc", true),
            ("a*c", "ac", true),
            ("a*c", "ab", false),
            ("*", "", true),
            ("a*b*c", "a-b-b-c", true),
            ("a*ab", "ab", false),
            ("ab*ba", "aba", false),
            ("x", "x", true),
            ("x", "xy", false),
        ] {
            assert_eq!(wild(&parts(pattern), text), want, "{pattern} vs {text}");
        }
    }

    #[test]
    fn whitespace_runs_are_one_space() {
        assert_eq!(normalise("  git \t status  "), "git status");
        assert_eq!(normalise_keep_edges("x;\tgit\n\npush"), "x; git push");
        assert_eq!(strip_dot("././a/b"), "a/b");
    }
}
