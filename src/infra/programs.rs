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

fn is_tf(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.ends_with(".tf") || name.ends_with(".tf.json")
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        let hidden = entry.file_name().to_str().is_none_or(|n| n.starts_with('.'));
        if kind.is_dir() && !hidden && depth < MAX_DEPTH {
            walk(&path, depth + 1, out);
        } else if kind.is_file() && is_tf(&path) {
            out.push(path);
        }
        if out.len() > MAX_FILES {
            return;
        }
    }
}

/// The first construct of `text` that runs a program or brings code, in words.
fn construct(text: &str) -> Option<String> {
    static PATTERNS: std::sync::OnceLock<Vec<(regex::Regex, &'static str)>> =
        std::sync::OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        [
            (r#""external"\s*[{:]|data\s+"?external"?\s"#, "an external data source"),
            (r#""?(local|remote)-exec"?"#, "a local-exec or remote-exec provisioner"),
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
        ] {
            assert_eq!(construct(text).is_some(), found, "{text}");
        }
    }
}
