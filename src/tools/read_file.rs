//! `read_file`: numbered lines of a text file, with a line window and size caps; binary
//! files are refused, invalid UTF-8 is replaced.

use std::io::Read;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Access, Invocation, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use super::{describe_path, parse_args, paths};

/// Bytes read from one file at most.
const MAX_READ_BYTES: u64 = 10 << 20;
/// Lines returned by one call when no `end_line` narrows it.
const DEFAULT_MAX_LINES: usize = 2000;
/// Characters of one line shown at most (minified JSON, bundled scripts).
const MAX_LINE_CHARS: usize = 2000;
/// Bytes sniffed for NUL to call a file binary.
const BINARY_SNIFF: usize = 8192;

pub struct ReadFile;

#[derive(Deserialize)]
struct Args {
    #[serde(alias = "file_path")]
    path: String,
    start_line: Option<i64>,
    end_line: Option<i64>,
}

impl Tool for ReadFile {
    fn name(&self) -> &'static str {
        "read_file"
    }
    fn description(&self) -> &'static str {
        "Read the contents of a file. You can optionally specify a line range to read only a \
         portion of the file. Use start_line and end_line for large files to read specific \
         sections. Lines are returned numbered; long files are cut at 2000 lines per call."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The path to the file to read. Can be absolute or relative to working directory."},
                "start_line": {"type": "integer", "description": "The starting line number to read from (1-based, inclusive). Optional."},
                "end_line": {"type": "integer", "description": "The ending line number to read to (1-based, inclusive). Optional."}
            },
            "required": ["path"]
        })
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }
    fn access(&self) -> Access {
        Access::Read
    }
    fn describe(&self, args: &Value, ctx: &ToolContext) -> Invocation {
        let line = args.get("start_line").and_then(Value::as_u64).map(|n| n as u32);
        describe_path("Read", args, ctx, line.or(Some(1)))
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        let path = paths::resolve(ctx.cwd, &args.path);
        let shown = path.display();
        if ctx.files.reads() {
            return from_client(ctx, &path, args.start_line, args.end_line);
        }
        let (file, meta) = super::open::read(ctx, &path)?;
        if meta.is_dir() {
            return Err(ToolError::Model(format!("{shown} is a directory; use list_files")));
        }
        if !meta.is_file() {
            return Err(ToolError::Model(format!("{shown} is not a regular file; not read")));
        }
        let mut bytes = Vec::new();
        file.take(MAX_READ_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|err| ToolError::Model(format!("cannot read {shown}: {err}")))?;
        if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
            return Err(ToolError::Model(format!(
                "{shown} is a binary file ({} bytes); read_file only shows text",
                meta.len()
            )));
        }
        let size_cut = meta.len() > MAX_READ_BYTES;
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.lines().collect();
        let total = lines.len();
        let start = match args.start_line {
            None => 1,
            Some(n) if n >= 1 => n as usize,
            Some(n) => return Err(ToolError::Model(format!("start_line must be >= 1, got {n}"))),
        };
        let end = match args.end_line {
            None => total.min(start.saturating_add(DEFAULT_MAX_LINES - 1)),
            Some(n) if n >= start as i64 => (n as usize).min(total),
            Some(n) => {
                return Err(ToolError::Model(format!(
                    "end_line ({n}) must be >= start_line ({start})"
                )));
            }
        };
        let mut out = format!("File: {shown} ({total} lines)\n\n");
        if start > total && total > 0 {
            return Err(ToolError::Model(format!(
                "start_line {start} is past the end of {shown} ({total} lines)"
            )));
        }
        let mut long_lines = 0;
        for (idx, line) in lines.iter().enumerate().take(end).skip(start - 1) {
            match line.char_indices().nth(MAX_LINE_CHARS) {
                None => out.push_str(&format!("{:>6}\t{line}\n", idx + 1)),
                Some((cut, _)) => {
                    long_lines += 1;
                    let rest = line[cut..].chars().count();
                    out.push_str(&format!(
                        "{:>6}\t{} [... line truncated, {rest} more characters]\n",
                        idx + 1,
                        &line[..cut]
                    ));
                }
            }
        }
        let window_cut = end < total && args.end_line.is_none();
        if window_cut {
            out.push_str(&format!(
                "\n[truncated: showed lines {start}-{end} of {total}; use start_line/end_line \
                 to read more]\n"
            ));
        }
        if size_cut {
            out.push_str(&format!(
                "\n[truncated: only the first {MAX_READ_BYTES} of {} bytes were read]\n",
                meta.len()
            ));
        }
        let raw = json!({
            "path": path, "totalLines": total, "startLine": start, "endLine": end,
            "truncated": window_cut || size_cut || long_lines > 0,
        });
        Ok(ToolOutput { text: out, raw, diff: None, ..ToolOutput::default() })
    }
}

/// `read_file` through the client's `fs/read_text_file`: what the editor has, unsaved
/// changes included, the window asked for numbered as on disk.
fn from_client(
    ctx: &ToolContext,
    path: &std::path::Path,
    start_line: Option<i64>,
    end_line: Option<i64>,
) -> Result<ToolOutput, ToolError> {
    let shown = path.display();
    let real = super::open::judged_real(ctx, path)?;
    let start = match start_line {
        None => 1,
        Some(n) if n >= 1 => n as usize,
        Some(n) => return Err(ToolError::Model(format!("start_line must be >= 1, got {n}"))),
    };
    let limit = match end_line {
        None => DEFAULT_MAX_LINES,
        Some(n) if n >= start as i64 => n as usize - start + 1,
        Some(n) => {
            return Err(ToolError::Model(format!(
                "end_line ({n}) must be >= start_line ({start})"
            )));
        }
    };
    let text = ctx
        .files
        .read(&real, Some(clamp(start)), Some(clamp(limit)), ctx.cancel)
        .map_err(|err| ToolError::Model(format!("cannot read {shown}: {err}")))?;
    if text.contains('\0') {
        return Err(ToolError::Model(format!(
            "{shown} is a binary file; read_file only shows text"
        )));
    }
    let lines: Vec<&str> = text.lines().collect();
    let end = start + lines.len().saturating_sub(1);
    let mut out = format!("File: {shown} (lines {start}-{end}, as the editor has it)\n\n");
    for (i, line) in lines.iter().enumerate() {
        match line.char_indices().nth(MAX_LINE_CHARS) {
            None => out.push_str(&format!("{:>6}\t{line}\n", start + i)),
            Some((cut, _)) => out.push_str(&format!(
                "{:>6}\t{} [... line truncated, {} more characters]\n",
                start + i,
                &line[..cut],
                line[cut..].chars().count()
            )),
        }
    }
    let window_full = end_line.is_none() && lines.len() >= limit;
    if window_full {
        out.push_str(&format!(
            "\n[showed lines {start}-{end}; there may be more: use start_line/end_line]\n"
        ));
    }
    let raw = json!({"path": path, "startLine": start, "endLine": end, "source": "editor",
        "truncated": window_full});
    Ok(ToolOutput { text: out, raw, ..ToolOutput::default() })
}

fn clamp(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
