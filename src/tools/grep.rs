//! `grep`: a regex search over file contents, gitignore-aware, binary files skipped.
//! The walk is parallel and keeps only line numbers; the few files that are shown are read
//! again to print their lines, so memory stays small however many lines match.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use globset::{GlobBuilder, GlobMatcher};
use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Access, Invocation, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use super::{judged, parse_args, paths, walk};

/// Results shown when the call does not say.
const DEFAULT_MAX_RESULTS: usize = 100;
/// Files larger than this are not searched.
const MAX_FILE_BYTES: u64 = 64 << 20;
/// Bytes checked for NUL to call a file binary.
const BINARY_SNIFF: usize = 8192;
/// Characters of one line shown at most.
const MAX_LINE_CHARS: usize = 400;
/// Context lines allowed at most.
const MAX_CONTEXT: usize = 20;

pub struct Grep;

#[derive(Deserialize)]
struct Args {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default, alias = "-i", alias = "ignore_case")]
    case_insensitive: Option<bool>,
    #[serde(default)]
    output_mode: Option<String>,
    #[serde(default, alias = "-C", alias = "context_lines")]
    context: Option<usize>,
    #[serde(default, alias = "head_limit", alias = "limit")]
    max_results: Option<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Files,
    Content,
    Count,
}

impl Tool for Grep {
    fn name(&self) -> &'static str {
        "grep"
    }
    fn description(&self) -> &'static str {
        "Search for a regex pattern (Rust regex syntax) across file contents. Returns matching \
         file paths, matching lines with line numbers, or match counts depending on \
         output_mode. Respects .gitignore and skips binary files."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The regular expression pattern to search for."},
                "path": {"type": "string", "description": "The file or directory to search in. Defaults to current working directory."},
                "glob": {"type": "string", "description": "Glob pattern to filter files, e.g. '*.tf' or '*.{yaml,yml}'. Without '/', it matches file names; with '/', paths relative to the searched directory."},
                "case_insensitive": {"type": "boolean", "description": "Perform a case-insensitive search. Defaults to false."},
                "output_mode": {"type": "string", "enum": ["files_with_matches", "content", "count"], "description": "'files_with_matches' (default) returns only the paths of matching files. 'content' returns each matching line with its file path and line number. 'count' returns the number of matching lines per file."},
                "context": {"type": "integer", "description": "Lines of context to show before and after each match (content mode only). Defaults to 0."},
                "max_results": {"type": "integer", "description": "Maximum number of results (files, lines or counts) to return. Defaults to 100."}
            },
            "required": ["pattern"]
        })
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Search
    }
    fn access(&self) -> Access {
        Access::Read
    }
    fn describe(&self, args: &Value, ctx: &ToolContext) -> Invocation {
        let pattern = args.get("pattern").and_then(Value::as_str).unwrap_or("");
        let base = paths::resolve(ctx.cwd, super::path_arg(args).unwrap_or("."));
        let shown = paths::display_relative(&base, ctx.cwd);
        judged(format!("Grep '{pattern}' in {shown}"), base, None, ctx)
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        let mode = match args.output_mode.as_deref() {
            None | Some("files_with_matches") | Some("files") => Mode::Files,
            Some("content") => Mode::Content,
            Some("count") => Mode::Count,
            Some(other) => {
                return Err(ToolError::Model(format!(
                    "output_mode must be files_with_matches, content or count, not '{other}'"
                )));
            }
        };
        let max_results = args.max_results.unwrap_or(DEFAULT_MAX_RESULTS);
        if max_results == 0 {
            return Err(ToolError::Model("max_results must be at least 1".to_string()));
        }
        let context = args.context.unwrap_or(0).min(MAX_CONTEXT);
        let regex = RegexBuilder::new(&args.pattern)
            .case_insensitive(args.case_insensitive.unwrap_or(false))
            .multi_line(true)
            .build()
            .map_err(|err| ToolError::Model(format!("invalid regex: {err}")))?;
        let filter = match args.glob.as_deref().map(str::trim).filter(|g| !g.is_empty()) {
            None => None,
            Some(glob) => Some(Filter {
                on_path: glob.contains('/'),
                matcher: GlobBuilder::new(glob)
                    .literal_separator(true)
                    .build()
                    .map_err(|err| ToolError::Model(format!("invalid glob: {err}")))?
                    .compile_matcher(),
            }),
        };
        let base = paths::resolve(ctx.cwd, args.path.as_deref().unwrap_or("."));
        if !base.exists() {
            return Err(ToolError::Model(format!("path not found: {}", base.display())));
        }
        let root = walk::Root::open(ctx, &base)?;
        let hits: Mutex<Vec<Hit>> = Mutex::new(Vec::new());
        let skipped = AtomicUsize::new(0);
        let counted = filter.clone();
        let counted_base = base.clone();
        let counts = Box::new(move |path: &Path| {
            counted.as_ref().is_none_or(|f| f.accepts(path, &counted_base))
        });
        let walked = root.files(
            ctx,
            &|path| {
                if let Some(filter) = &filter
                    && !filter.accepts(path, &base)
                {
                    return;
                }
                match search_file(&regex, &root, path, mode) {
                    Searched::Hit(lines) => {
                        crate::sync::lock(&hits).push(Hit { path: path.to_path_buf(), lines })
                    }
                    Searched::Skipped => {
                        skipped.fetch_add(1, Ordering::Relaxed);
                    }
                    Searched::NoMatch => {}
                }
            },
            counts,
        );
        if !walked.complete {
            return Err(ToolError::Model("Search cancelled.".to_string()));
        }
        let mut hits = hits.into_inner().unwrap_or_else(|e| e.into_inner());
        hits.sort_by(|a, b| a.path.cmp(&b.path));
        let skipped = skipped.into_inner();
        let mut text = render(
            &hits,
            mode,
            context,
            max_results,
            &args.pattern,
            (&root, &base),
            ctx.cwd,
            skipped,
        );
        text.push_str(&super::glob::sensitive_note(walked.sensitive_skipped));
        let lines: usize = hits.iter().map(|h| h.lines.len()).sum();
        let raw = json!({"files": hits.len(), "matchingLines": lines, "skippedFiles": skipped});
        Ok(ToolOutput { text, raw, diff: None, ..ToolOutput::default() })
    }
}

#[derive(Clone)]
struct Filter {
    on_path: bool,
    matcher: GlobMatcher,
}

impl Filter {
    fn accepts(&self, path: &Path, base: &Path) -> bool {
        if self.on_path {
            path.strip_prefix(base).is_ok_and(|rel| self.matcher.is_match(rel))
        } else {
            path.file_name().is_some_and(|name| self.matcher.is_match(name))
        }
    }
}

struct Hit {
    path: PathBuf,
    /// Matching line numbers (1-based); empty in files mode.
    lines: Vec<u32>,
}

enum Searched {
    Hit(Vec<u32>),
    NoMatch,
    Skipped,
}

fn search_file(regex: &Regex, root: &walk::Root, path: &Path, mode: Mode) -> Searched {
    let Ok(bytes) = read_below(root, path) else { return Searched::Skipped };
    if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0)
        || crate::secret::is_private_key_header(&bytes)
    {
        return Searched::NoMatch;
    }
    if mode == Mode::Files {
        return if regex.is_match(&bytes) { Searched::Hit(Vec::new()) } else { Searched::NoMatch };
    }
    let lines = matching_lines(regex, &bytes);
    if lines.is_empty() { Searched::NoMatch } else { Searched::Hit(lines) }
}

/// The content of a regular file the walk found, opened beneath its root without following
/// symlinks; anything else (a FIFO, a device, an oversized file) is an error.
fn read_below(root: &walk::Root, path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = root.open_file(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return Err(std::io::Error::other("not a regular file of a searchable size"));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_FILE_BYTES).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Line numbers where a match starts, each line once.
fn matching_lines(regex: &Regex, bytes: &[u8]) -> Vec<u32> {
    let mut lines = Vec::new();
    if bytes.is_empty() {
        return lines;
    }
    let (mut pos, mut line, mut counted_to) = (0usize, 1u32, 0usize);
    while pos <= bytes.len() {
        let Some(m) = regex.find_at(bytes, pos) else { break };
        if m.start() == bytes.len() && bytes.ends_with(b"\n") {
            break; // the empty "line" after a final newline is not a line
        }
        line += bytes[counted_to..m.start()].iter().filter(|b| **b == b'\n').count() as u32;
        counted_to = m.start();
        lines.push(line);
        let from = m.start().max(m.end().saturating_sub(1));
        match bytes[from..].iter().position(|b| *b == b'\n') {
            Some(offset) => pos = from + offset + 1,
            None => break,
        }
    }
    lines
}

#[allow(clippy::too_many_arguments)]
fn render(
    hits: &[Hit],
    mode: Mode,
    context: usize,
    max_results: usize,
    pattern: &str,
    (root, base): (&walk::Root, &Path),
    cwd: &Path,
    skipped: usize,
) -> String {
    let shown_base = paths::display_relative(base, cwd);
    if hits.is_empty() {
        let mut text = format!("No matches found for '{pattern}' in {shown_base}");
        if skipped > 0 {
            text.push_str(&format!(" ({skipped} unreadable or oversized files skipped)"));
        }
        return text;
    }
    let total_lines: usize = hits.iter().map(|h| h.lines.len()).sum();
    let mut out = String::new();
    let mut shown = 0usize;
    let total = match mode {
        Mode::Files => {
            out.push_str(&format!("Found {} files\n", hits.len()));
            for hit in hits.iter().take(max_results) {
                out.push_str(&walk::shown(&hit.path, cwd));
                out.push('\n');
                shown += 1;
            }
            hits.len()
        }
        Mode::Count => {
            out.push_str(&format!("{total_lines} matching lines in {} files\n", hits.len()));
            for hit in hits.iter().take(max_results) {
                out.push_str(&format!("{}:{}\n", walk::shown(&hit.path, cwd), hit.lines.len()));
                shown += 1;
            }
            hits.len()
        }
        Mode::Content => {
            for hit in hits {
                if shown >= max_results {
                    break;
                }
                let take = (max_results - shown).min(hit.lines.len());
                render_lines(&mut out, root, hit, &hit.lines[..take], context, cwd);
                shown += take;
            }
            total_lines
        }
    };
    if total > shown {
        out.push_str(&format!(
            "[showing {shown} of {total} results; narrow the search or raise max_results]\n"
        ));
    }
    if skipped > 0 {
        out.push_str(&format!("[{skipped} unreadable or oversized files were not searched]\n"));
    }
    out
}

/// `path:line:text` for matches and `path-line-text` for context, groups split by `--`.
fn render_lines(
    out: &mut String,
    root: &walk::Root,
    hit: &Hit,
    lines: &[u32],
    context: usize,
    cwd: &Path,
) {
    let name = walk::shown(&hit.path, cwd);
    let Ok(bytes) = read_below(root, &hit.path) else {
        out.push_str(&format!("{name}: (changed or removed while searching)\n"));
        return;
    };
    let mut text: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    if bytes.ends_with(b"\n") {
        text.pop();
    }
    let mut last_printed = 0usize;
    for (i, &line) in lines.iter().enumerate() {
        let line = line as usize;
        let first = line.saturating_sub(context).max(1).max(last_printed + 1);
        if context > 0 && last_printed > 0 && first > last_printed + 1 {
            out.push_str("--\n");
        }
        let next_match = lines.get(i + 1).map_or(usize::MAX, |n| *n as usize);
        let last = (line + context).min(text.len()).min(next_match.saturating_sub(1).max(line));
        for n in first..=last {
            let sep = if n == line { ':' } else { '-' };
            let content = String::from_utf8_lossy(text.get(n - 1).copied().unwrap_or_default());
            let content = content.trim_end_matches('\r');
            let cut: String = content.chars().take(MAX_LINE_CHARS).collect();
            let more = if cut.len() < content.len() { " […]" } else { "" };
            out.push_str(&format!("{name}{sep}{n}{sep}{cut}{more}\n"));
        }
        last_printed = last;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(pattern: &str, text: &str) -> Vec<u32> {
        let re = RegexBuilder::new(pattern).multi_line(true).build().expect("regex");
        matching_lines(&re, text.as_bytes())
    }

    #[test]
    fn each_matching_line_once() {
        assert_eq!(lines_of("a", "a a\nb\na\n"), vec![1, 3]);
        assert_eq!(lines_of("^", "x\ny\n"), vec![1, 2]);
        assert!(lines_of("^", "").is_empty());
        assert_eq!(lines_of("b$", "ab\ncd\nb"), vec![1, 3]);
        assert_eq!(lines_of("x\n", "x\nx\n"), vec![1, 2]);
        assert!(lines_of("z", "abc").is_empty());
    }

    #[test]
    fn context_groups_are_split() {
        let dir = std::env::temp_dir().join(format!("iac-grep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("f.txt");
        let body: String = (1..=20).map(|n| format!("l{n}\n")).collect();
        std::fs::write(&file, body).expect("write");
        let hit = Hit { path: file, lines: vec![3, 4, 12] };
        let mut out = String::new();
        let root = walk::Root::at(&dir).expect("root");
        render_lines(&mut out, &root, &hit, &hit.lines, 1, &dir);
        let expect = "f.txt-2-l2\nf.txt:3:l3\nf.txt:4:l4\nf.txt-5-l5\n--\nf.txt-11-l11\nf.txt:12:l12\nf.txt-13-l13\n";
        assert_eq!(out, expect);
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
