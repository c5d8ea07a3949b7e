//! `glob`: files matching a glob pattern (`**` recursive, `*` within one directory),
//! gitignore-aware, newest first, relative paths, capped. Literal leading directories of the
//! pattern become the starting directory, so `modules/**/*.tf` walks only `modules/`, and
//! `../other/*.tf` is judged by where it points.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use globset::GlobBuilder;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Access, Invocation, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use super::{judged, parse_args, paths, walk};

/// Paths listed at most.
const MAX_RESULTS: usize = 500;

pub struct Glob;

#[derive(Deserialize)]
struct Args {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
}

impl Tool for Glob {
    fn name(&self) -> &'static str {
        "glob"
    }
    fn description(&self) -> &'static str {
        "Fast file pattern matching using glob patterns. Searches for files matching the given \
         pattern and returns matching file paths sorted by modification time (newest first). \
         Use ** for recursive matching ('**/*.tf'); '*' stays within one directory. Files \
         ignored by .gitignore are skipped."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The glob pattern to match files against, e.g. '**/*.tf' or 'modules/**/*.yaml'."},
                "path": {"type": "string", "description": "The directory to search in. Defaults to current working directory."}
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
        let Some(pattern) = args.get("pattern").and_then(Value::as_str).map(str::trim) else {
            return Invocation::plain("Glob");
        };
        let path = super::path_arg(args);
        let (base, _) = split(ctx.cwd, path, pattern);
        judged(format!("Glob {pattern}"), base, None, ctx)
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        if args.pattern.trim().is_empty() {
            return Err(ToolError::Model("pattern is empty".to_string()));
        }
        let (base, rest) = split(ctx.cwd, args.path.as_deref(), args.pattern.trim());
        let matcher = GlobBuilder::new(&rest)
            .literal_separator(true)
            .build()
            .map_err(|err| ToolError::Model(format!("invalid glob pattern: {err}")))?
            .compile_matcher();
        if !base.is_dir() {
            return Err(ToolError::Model(format!("directory not found: {}", base.display())));
        }
        let root = walk::Root::open(ctx, &base)?;
        let found: Mutex<Vec<(SystemTime, PathBuf)>> = Mutex::new(Vec::new());
        let (counted_base, counted) = (base.clone(), matcher.clone());
        let counts = Box::new(move |path: &Path| {
            path.strip_prefix(&counted_base).is_ok_and(|rel| counted.is_match(rel))
        });
        let walked = root.files(
            ctx,
            &|path| {
                let Ok(rel) = path.strip_prefix(&base) else { return };
                if !matcher.is_match(rel) {
                    return;
                }
                // Reported only if it is, beneath the judged root, a regular file.
                let Ok(entry) = root.stat_file(path) else { return };
                if entry.regular {
                    crate::sync::lock(&found).push((entry.modified, path.to_path_buf()));
                }
            },
            counts,
        );
        if !walked.complete {
            return Err(ToolError::Model("Search cancelled.".to_string()));
        }
        let mut found = found.into_inner().unwrap_or_else(|e| e.into_inner());
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let total = found.len();
        let raw = json!({"base": base, "matches": total, "truncated": total > MAX_RESULTS});
        if total == 0 {
            let mut text =
                format!("No files found matching '{}' in {}", args.pattern, base.display());
            if !args.pattern.contains('/') {
                text.push_str(&format!(
                    " ('{}' only looks in that directory; use '**/{}' to search below it)",
                    args.pattern, args.pattern
                ));
            }
            return Ok(ToolOutput { text, raw, diff: None, ..ToolOutput::default() });
        }
        let mut text = format!("Found {total} files matching '{}' (newest first):\n", args.pattern);
        for (_, path) in found.iter().take(MAX_RESULTS) {
            text.push_str(&walk::shown(path, ctx.cwd));
            text.push('\n');
        }
        if total > MAX_RESULTS {
            text.push_str(&format!(
                "[... {} more files not shown; narrow the pattern or the path]\n",
                total - MAX_RESULTS
            ));
        }
        text.push_str(&sensitive_note(walked.sensitive_skipped));
        Ok(ToolOutput { text, raw, diff: None, ..ToolOutput::default() })
    }
}

/// Says that sensitive entries were left out of a walk, if some were.
pub(super) fn sensitive_note(skipped: usize) -> String {
    if skipped == 0 {
        return String::new();
    }
    format!(
        "[{skipped} sensitive files (credentials, keys, Terraform state or variables) were \
         left out; read one with read_file, which asks the user]\n"
    )
}

/// Splits a pattern into the directory to walk and the pattern relative to it.
fn split(cwd: &Path, path: Option<&str>, pattern: &str) -> (PathBuf, String) {
    let (mut base, pattern) = if let Some(rest) = pattern.strip_prefix('/') {
        (PathBuf::from("/"), rest)
    } else if let Some(rest) = pattern.strip_prefix("~/") {
        (paths::resolve(cwd, "~/"), rest)
    } else {
        (paths::resolve(cwd, path.unwrap_or(".")), pattern)
    };
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let mut i = 0;
    while i + 1 < parts.len() && !parts[i].contains(['*', '?', '[', '{']) {
        base.push(parts[i]);
        i += 1;
    }
    (paths::normalize(&base), parts[i..].join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_prefixes_move_into_the_base() {
        let cwd = Path::new("/w/p");
        let s = |path, pat| split(cwd, path, pat);
        assert_eq!(s(None, "**/*.tf"), (PathBuf::from("/w/p"), "**/*.tf".into()));
        assert_eq!(s(None, "modules/**/*.tf"), (PathBuf::from("/w/p/modules"), "**/*.tf".into()));
        assert_eq!(s(None, "../q/*.tf"), (PathBuf::from("/w/q"), "*.tf".into()));
        assert_eq!(s(None, "/etc/*.conf"), (PathBuf::from("/etc"), "*.conf".into()));
        assert_eq!(s(Some("env"), "./main.tf"), (PathBuf::from("/w/p/env"), "main.tf".into()));
        assert_eq!(s(None, "a/{b,c}/x.tf"), (PathBuf::from("/w/p/a"), "{b,c}/x.tf".into()));
    }
}
