//! The names MCP tools get for the model: `mcp__<server>__<tool>`, both parts reduced to
//! `[A-Za-z0-9_-]`, at most 64 characters (what the provider APIs accept). A longer name is
//! cut and given a stable hash of the original pair; a clash gets the hash too, then a
//! counter, so two tools never share a name and a name never changes between runs.

use std::collections::HashSet;

/// The longest tool name the provider APIs accept.
pub const MAX_NAME: usize = 64;

/// `s` with every character outside `[A-Za-z0-9_-]` replaced by `_`.
pub fn sanitize(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect();
    if out.is_empty() { "_".to_string() } else { out }
}

/// FNV-1a (32 bits) as eight hex digits: stable across runs and builds.
fn hash8(server: &str, tool: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in server.bytes().chain([0u8]).chain(tool.bytes()) {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

/// The model's name for `tool` of `server`, not one of `taken`.
pub fn tool_name(server: &str, tool: &str, taken: &HashSet<String>) -> String {
    let plain = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
    if plain.len() <= MAX_NAME && !taken.contains(&plain) {
        return plain;
    }
    let hash = hash8(server, tool);
    // ASCII only after `sanitize`, so any byte index is a char boundary.
    let keep = MAX_NAME - hash.len() - 1;
    let hashed = format!("{}_{hash}", &plain[..plain.len().min(keep)]);
    if !taken.contains(&hashed) {
        return hashed;
    }
    (2u32..)
        .map(|n| {
            let tail = format!("_{hash}_{n}");
            format!("{}{tail}", &plain[..plain.len().min(MAX_NAME - tail.len())])
        })
        .find(|name| !taken.contains(name))
        .unwrap_or(hashed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_clean_bounded_stable_and_unique() {
        let none = HashSet::new();
        assert_eq!(tool_name("git hub", "create.issue", &none), "mcp__git_hub__create_issue");
        let long = "x".repeat(100);
        let a = tool_name("srv", &long, &none);
        assert_eq!(a.len(), MAX_NAME);
        assert_eq!(a, tool_name("srv", &long, &none), "stable");
        assert_ne!(a, tool_name("srv", &format!("{long}y"), &none), "the hash tells them apart");
        let mut taken = HashSet::new();
        let first = tool_name("a.b", "t", &taken);
        taken.insert(first.clone());
        let second = tool_name("a b", "t", &taken);
        assert_ne!(first, second);
        assert!(second.len() <= MAX_NAME);
        taken.insert(second.clone());
        let third = tool_name("a b", "t", &taken);
        assert!(!taken.contains(&third) && third.len() <= MAX_NAME);
        for name in [&a, &first, &second, &third] {
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
        }
    }
}
