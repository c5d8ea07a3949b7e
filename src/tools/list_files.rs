//! `list_files`: the entries of one directory, sorted, directories marked, sizes shown,
//! capped.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Access, Invocation, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use super::{describe_path, parse_args, paths};

/// Entries listed at most.
const MAX_ENTRIES: usize = 1000;

pub struct ListFiles;

#[derive(Deserialize)]
struct Args {
    #[serde(default, alias = "file_path")]
    path: Option<String>,
}

impl Tool for ListFiles {
    fn name(&self) -> &'static str {
        "list_files"
    }
    fn description(&self) -> &'static str {
        "List the contents of a directory. Returns file and directory names with indicators \
         for type (directories end with '/') and file sizes. Useful for exploring project \
         structure."
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The directory path to list. Defaults to current working directory."}
            },
            "required": []
        })
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }
    fn access(&self) -> Access {
        Access::Read
    }
    fn describe(&self, args: &Value, ctx: &ToolContext) -> Invocation {
        if super::path_arg(args).is_none() {
            return describe_path("List", &json!({"path": "."}), ctx, None);
        }
        describe_path("List", args, ctx, None)
    }
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args)?;
        let dir = paths::resolve(ctx.cwd, args.path.as_deref().unwrap_or("."));
        let shown = dir.display();
        let target = super::open::target(ctx, &dir)?;
        let fd = super::open::open(ctx, &target, libc::O_RDONLY | libc::O_DIRECTORY, 0)
            .map_err(|err| ToolError::Model(format!("cannot list {shown}: {err}")))?;
        // Listed through the descriptor: the directory judged, wherever its path leads now.
        let reader = std::fs::read_dir(super::open::fd_path(&fd))
            .map_err(|err| ToolError::Model(format!("cannot list {shown}: {err}")))?;
        let mut entries: Vec<(String, String)> = Vec::new();
        for entry in reader.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let line = match entry.file_type() {
                Ok(t) if t.is_dir() => format!("{name}/"),
                Ok(t) if t.is_symlink() => match std::fs::read_link(entry.path()) {
                    Ok(target) => format!("{name} -> {}", target.display()),
                    Err(_) => format!("{name} ->"),
                },
                _ => {
                    let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                    format!("{name} ({})", human_size(size))
                }
            };
            entries.push((name, line));
        }
        entries.sort();
        let total = entries.len();
        let mut out = format!("Directory: {shown} ({total} entries)\n");
        for (_, line) in entries.iter().take(MAX_ENTRIES) {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
        if total > MAX_ENTRIES {
            out.push_str(&format!("  [... and {} more entries]\n", total - MAX_ENTRIES));
        }
        if total == 0 {
            out.push_str("  (empty)\n");
        }
        let raw = json!({"path": dir, "entries": total, "truncated": total > MAX_ENTRIES});
        Ok(ToolOutput { text: out, raw, diff: None, ..ToolOutput::default() })
    }
}

fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_well() {
        assert_eq!(super::human_size(5), "5 B");
        assert_eq!(super::human_size(1536), "1.5 KB");
        assert_eq!(super::human_size(3 << 20), "3.0 MB");
    }
}
