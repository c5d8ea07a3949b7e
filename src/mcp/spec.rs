//! MCP server entries: how to reach one server, read from an ACP `mcpServers` entry, from
//! `settings.json` or from a project's `.mcp.json`. Both shapes are accepted everywhere:
//! ACP's (a list of entries with `name`, `env`/`headers` as `[{name, value}]`) and the
//! common file shape (an object keyed by name, `env`/`headers` as objects). An entry that
//! cannot be used (an unknown `type`, no `command`, a bad URL) is an error for that entry
//! alone: it is reported, never launched as something else.

use serde_json::{Map, Value};

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking newline-delimited JSON-RPC on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Added to the secret-free environment.
        env: Vec<(String, String)>,
    },
    /// Streamable HTTP: every message POSTed to `url`.
    Http { url: String, headers: Vec<(String, String)> },
    /// The older HTTP+SSE transport: an event stream at `url` names where to POST.
    Sse { url: String, headers: Vec<(String, String)> },
}

/// Which of the three transports an entry uses: `type` in the files and in ACP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    Stdio,
    Http,
    Sse,
}

impl TransportKind {
    /// `stdio`, `http` or `sse`.
    pub fn id(self) -> &'static str {
        match self {
            TransportKind::Stdio => "stdio",
            TransportKind::Http => "http",
            TransportKind::Sse => "sse",
        }
    }
}

impl Transport {
    /// Which transport it is.
    pub fn kind(&self) -> TransportKind {
        match self {
            Transport::Stdio { .. } => TransportKind::Stdio,
            Transport::Http { .. } => TransportKind::Http,
            Transport::Sse { .. } => TransportKind::Sse,
        }
    }

    /// A one-line description (no secrets: header values and env values are left out).
    pub fn describe(&self) -> String {
        match self {
            Transport::Stdio { command, args, .. } => {
                let mut line = command.clone();
                for arg in args {
                    line.push(' ');
                    line.push_str(arg);
                }
                line
            }
            Transport::Http { url, .. } | Transport::Sse { url, .. } => without_userinfo(url),
        }
    }
}

/// `url` with any `user:password@` masked.
fn without_userinfo(url: &str) -> String {
    let Some(start) = url.find("://").map(|i| i + 3) else { return url.to_string() };
    let host_end = url[start..].find(['/', '?', '#']).map_or(url.len(), |i| start + i);
    match url[start..host_end].rfind('@') {
        Some(at) => format!("{}***@{}", &url[..start], &url[start + at + 1..]),
        None => url.to_string(),
    }
}

/// Where an entry came from (a client's entry wins over the files on a name clash).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The ACP client's `mcpServers`.
    Client,
    /// `settings.json`.
    Settings,
    /// The project's `.mcp.json` (approved).
    Project,
}

impl Origin {
    /// The name shown to users.
    pub fn id(self) -> &'static str {
        match self {
            Origin::Client => "client",
            Origin::Settings => "settings",
            Origin::Project => "project",
        }
    }
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// The name the user gave it (tools are `mcp__<name>__<tool>`).
    pub name: String,
    pub transport: Transport,
    pub origin: Origin,
}

/// An entry that cannot be used: its name (or a placeholder) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadEntry {
    pub name: String,
    pub reason: String,
}

/// Reads a list of entries: an array of entries with `name`, or an object keyed by name.
pub fn parse_servers(value: &Value, origin: Origin) -> Vec<Result<ServerSpec, BadEntry>> {
    match value {
        Value::Array(entries) => entries
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                let name = entry.get("name").and_then(Value::as_str).map(str::to_string);
                let name = name.unwrap_or_else(|| format!("#{}", i + 1));
                parse_entry(&name, entry, origin)
            })
            .collect(),
        Value::Object(map) => {
            map.iter().map(|(name, entry)| parse_entry(name, entry, origin)).collect()
        }
        Value::Null => Vec::new(),
        _ => vec![Err(BadEntry {
            name: "mcpServers".to_string(),
            reason: "expected a list of servers or an object keyed by name".to_string(),
        })],
    }
}

/// Reads one entry named `name`.
pub fn parse_entry(name: &str, entry: &Value, origin: Origin) -> Result<ServerSpec, BadEntry> {
    let bad = |reason: String| BadEntry { name: name.to_string(), reason };
    let Some(object) = entry.as_object() else {
        return Err(bad("an entry must be a JSON object".to_string()));
    };
    if name.trim().is_empty() {
        return Err(bad("an entry needs a non-empty name".to_string()));
    }
    let kind = match object.get("type") {
        None | Some(Value::Null) => None,
        Some(Value::String(kind)) => Some(kind.as_str()),
        Some(_) => return Err(bad("type must be a string".to_string())),
    };
    let transport = match kind {
        None | Some("stdio") => {
            let command = match object.get("command").and_then(Value::as_str) {
                Some(command) if !command.trim().is_empty() => command.to_string(),
                _ if kind.is_none() && object.contains_key("url") => {
                    return Err(bad("an entry with a url needs a type: http or sse".to_string()));
                }
                _ => return Err(bad("a stdio server needs a command".to_string())),
            };
            let args = match object.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(args)) => args
                    .iter()
                    .map(|a| a.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| bad("args must be a list of strings".to_string()))?,
                Some(_) => return Err(bad("args must be a list of strings".to_string())),
            };
            let env = pairs(object, "env").map_err(bad)?;
            Transport::Stdio { command, args, env }
        }
        Some(kind @ ("http" | "streamable-http" | "streamableHttp" | "sse")) => {
            let url = match object.get("url").and_then(Value::as_str) {
                Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
                    url.to_string()
                }
                Some(url) => {
                    return Err(bad(format!("url '{url}' must start with http:// or https://")));
                }
                None => return Err(bad(format!("an {kind} server needs a url"))),
            };
            let headers = pairs(object, "headers").map_err(bad)?;
            if kind == "sse" {
                Transport::Sse { url, headers }
            } else {
                Transport::Http { url, headers }
            }
        }
        Some(other) => {
            return Err(bad(format!(
                "unknown transport type '{other}' (expected stdio, http, sse)"
            )));
        }
    };
    Ok(ServerSpec { name: name.to_string(), transport, origin })
}

/// `env` or `headers`: `[{name, value}]` (ACP) or `{"NAME": "value"}`.
fn pairs(object: &Map<String, Value>, key: &str) -> Result<Vec<(String, String)>, String> {
    let wrong = || format!("{key} must be a list of {{name, value}} or an object of strings");
    match object.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                let name = item.get("name").and_then(Value::as_str);
                let value = item.get("value").and_then(Value::as_str);
                match (name, value) {
                    (Some(n), Some(v)) if !n.is_empty() => Ok((n.to_string(), v.to_string())),
                    _ => Err(wrong()),
                }
            })
            .collect(),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(n, v)| v.as_str().map(|v| (n.clone(), v.to_string())).ok_or_else(wrong))
            .collect(),
        Some(_) => Err(wrong()),
    }
}

/// The entry as written to `settings.json` (the file shape, keyed by name outside).
pub fn to_file_entry(transport: &Transport) -> Value {
    let object = |pairs: &[(String, String)]| {
        Value::Object(pairs.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect())
    };
    match transport {
        Transport::Stdio { command, args, env } => {
            let mut entry = serde_json::json!({ "command": command, "args": args });
            if !env.is_empty() {
                entry["env"] = object(env);
            }
            entry
        }
        Transport::Http { url, headers } | Transport::Sse { url, headers } => {
            let mut entry = serde_json::json!({ "type": transport.kind().id(), "url": url });
            if !headers.is_empty() {
                entry["headers"] = object(headers);
            }
            entry
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_shapes_read_the_same() {
        let acp = json!([{"name": "fs", "command": "/bin/srv", "args": ["-v"],
                          "env": [{"name": "K", "value": "V"}]},
                         {"type": "http", "name": "web", "url": "https://h/mcp",
                          "headers": [{"name": "Authorization", "value": "Bearer t"}]}]);
        let file = json!({"fs": {"command": "/bin/srv", "args": ["-v"], "env": {"K": "V"}},
                          "web": {"type": "http", "url": "https://h/mcp",
                                  "headers": {"Authorization": "Bearer t"}}});
        let a: Vec<_> =
            parse_servers(&acp, Origin::Client).into_iter().map(|r| r.unwrap()).collect();
        let f: Vec<_> =
            parse_servers(&file, Origin::Client).into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(a, f);
        assert_eq!(a[0].transport.kind(), TransportKind::Stdio);
        assert_eq!(a[1].transport.kind(), TransportKind::Http);
        let secret = Transport::Http { url: "https://u:p@h/x?k=1".into(), headers: Vec::new() };
        assert_eq!(secret.describe(), "https://***@h/x?k=1");
        let round = to_file_entry(&a[1].transport);
        assert_eq!(parse_entry("web", &round, Origin::Client).unwrap(), a[1]);
    }

    #[test]
    fn bad_entries_are_reported_alone_and_never_run_as_stdio() {
        let list = json!([{"name": "odd", "type": "websocket", "command": "/bin/true"},
                          {"name": "nourl", "type": "sse"},
                          {"name": "ftp", "type": "http", "url": "ftp://x"},
                          {"name": "urlonly", "url": "http://x"},
                          {"name": "ok", "command": "srv"}]);
        let out = parse_servers(&list, Origin::Client);
        let reasons: Vec<String> = out
            .iter()
            .map(|r| match r {
                Ok(s) => format!("ok {}", s.name),
                Err(b) => format!("{}: {}", b.name, b.reason),
            })
            .collect();
        assert!(reasons[0].contains("unknown transport type 'websocket'"), "{reasons:?}");
        assert!(reasons[1].contains("needs a url"), "{reasons:?}");
        assert!(reasons[2].contains("must start with http"), "{reasons:?}");
        assert!(reasons[3].contains("needs a type"), "{reasons:?}");
        assert_eq!(reasons[4], "ok ok");
    }
}
