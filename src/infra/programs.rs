//! Whether terraform code can start programs of its own or bring code from elsewhere: a
//! `data "external"` source, a `local-exec` or `remote-exec` provisioner, a provider
//! outside HashiCorp's namespace, a module from anywhere but a local path. In bypass mode
//! the gate lets terraform run code nobody reviewed with the user's credentials only when
//! none of that is in it (`gate/pass.rs`).

use std::path::{Path, PathBuf};

/// Files looked at, at most, and bytes read from each.
const MAX_FILES: usize = 512;
const MAX_BYTES: u64 = 1 << 20;
/// Directory levels walked below each directory.
const MAX_DEPTH: usize = 4;

/// Why the terraform code in `files` (or, when `None`, in every `.tf` and `.tf.json` file
/// below `dirs`) can run programs or fetch code, if it can: the first construct found,
/// with its file.
pub fn runs_programs(dirs: &[PathBuf], files: Option<&[PathBuf]>) -> Option<String> {
    let mut list = Vec::new();
    match files {
        Some(files) => list.extend(files.iter().filter(|f| is_tf(f)).cloned()),
        None => dirs.iter().for_each(|d| walk(d, 0, &mut list)),
    }
    // A file that cannot be read is not known to be harmless.
    for file in list.iter().take(MAX_FILES) {
        let text = match std::fs::metadata(file) {
            Ok(m) if m.is_file() && m.len() <= MAX_BYTES => std::fs::read_to_string(file).ok(),
            Ok(m) if !m.is_file() => continue,
            _ => None,
        };
        let Some(text) = text else {
            return Some(format!("{} cannot be read", file.display()));
        };
        if let Some(what) = construct(&text) {
            return Some(format!("{} has {what}", file.display()));
        }
    }
    (list.len() > MAX_FILES).then(|| format!("more than {MAX_FILES} terraform files"))
}

/// Terraform's and OpenTofu's code files.
fn is_tf(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    [".tf", ".tf.json", ".tofu", ".tofu.json"].iter().any(|ext| name.ends_with(ext))
}

/// The code files below `dir`, links followed and hidden directories too; a tree deeper
/// than `MAX_DEPTH` counts as more than `MAX_FILES` (not known to be harmless).
fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::metadata(&path) else { continue };
        if meta.is_dir() && entry.file_name() != ".git" {
            if depth >= MAX_DEPTH {
                out.resize(MAX_FILES + 1, path.clone());
                return;
            }
            walk(&path, depth + 1, out);
        } else if meta.is_file() && is_tf(&path) {
            out.push(path);
        }
        if out.len() > MAX_FILES {
            return;
        }
    }
}

/// The first construct of `text` that runs a program or brings code, in words. Comments
/// are taken out first, and an escape (`\u0065`) is taken for a hidden word.
fn construct(text: &str) -> Option<String> {
    if text.contains("\\u") || text.contains("\\U") {
        return Some("an escaped character (it may spell anything)".into());
    }
    let text = &uncommented(text);
    static PATTERNS: std::sync::OnceLock<Vec<(regex::Regex, &'static str)>> =
        std::sync::OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        [
            (r#""external"\s*[{:]|data\s+"?external"?\s"#, "an external data source"),
            (r#""?(local|remote)-exec"?"#, "a local-exec or remote-exec provisioner"),
            // A provider that runs a program for its credentials (kubernetes, helm).
            (r#"(?m)^\s*"?exec"?\s*[{:=]"#, "a provider's exec block"),
            (
                r#"credential_process|shared_config_files|shared_credentials_files|config_path"#,
                "a provider reading its credentials from a file",
            ),
        ]
        .into_iter()
        .filter_map(|(p, what)| regex::Regex::new(p).ok().map(|r| (r, what)))
        .collect()
    });
    for (pattern, what) in patterns {
        if pattern.is_match(text) {
            return Some((*what).to_string());
        }
    }
    static SOURCE: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let source = SOURCE.get_or_init(|| regex::Regex::new(r#""?source"?\s*[=:]\s*"([^"]*)""#).ok());
    for caps in source.iter().flat_map(|r| r.captures_iter(text)) {
        let value = caps.get(1).map_or("", |m| m.as_str());
        if let Some(why) = foreign(value) {
            return Some(why);
        }
    }
    None
}

/// `text` without its comments (`#` and `//` to the end of the line, `/* … */`), strings
/// kept as they are.
fn uncommented(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut string = false;
    while let Some(c) = chars.next() {
        if string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                string = true;
                out.push(c);
            }
            ('#', _) | ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// Why a `source` (a provider's or a module's) brings code from elsewhere, if it does.
fn foreign(source: &str) -> Option<String> {
    if source.starts_with("./") || source.starts_with("../") {
        return None;
    }
    // A provider address: [host/]namespace/type; HashiCorp's own are trusted.
    let parts: Vec<&str> = source.split('/').collect();
    let official = match parts.as_slice() {
        [namespace, _] => namespace.eq_ignore_ascii_case("hashicorp"),
        [host, namespace, _] => {
            let registry = host.eq_ignore_ascii_case("registry.terraform.io")
                || host.eq_ignore_ascii_case("registry.opentofu.org");
            registry && namespace.eq_ignore_ascii_case("hashicorp")
        }
        _ => false,
    };
    (!official).then(|| format!("code from elsewhere (source \"{source}\")"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_and_foreign_code_are_found_and_plain_resources_are_not() {
        for (text, found) in [
            ("data \"external\" \"x\" { program = [\"sh\"] }", true),
            (
                "resource \"null_resource\" \"x\" {\n provisioner \"local-exec\" { command = \"id\" } }",
                true,
            ),
            ("{\"data\": {\"external\": {\"x\": {}}}}", true),
            ("terraform { required_providers { evil = { source = \"attacker/evil\" } } }", true),
            ("module \"m\" { source = \"git::https://example.com/m.git\" }", true),
            ("terraform { required_providers { aws = { source = \"hashicorp/aws\" } } }", false),
            ("module \"net\" { source = \"./modules/net\" }", false),
            ("resource \"terraform_data\" \"a\" { input = \"external\" }", false),
            ("data /**/ \"external\" \"x\" {}", true),
            ("data \"\\u0065xternal\" \"x\" {}", true),
            ("terraform { required_providers { e = { source /**/ = \"attacker/evil\" } } }", true),
            ("provider \"kubernetes\" {\n  exec {\n    command = \"sh\"\n  }\n}", true),
            ("provider \"aws\" { shared_config_files = [\"x\"] }", true),
            ("# data \"external\" \"x\" {}\nresource \"terraform_data\" \"a\" {}", false),
            ("resource \"terraform_data\" \"a\" { input = \"# not a comment\" }", false),
        ] {
            assert_eq!(construct(text).is_some(), found, "{text}");
        }
    }
}
