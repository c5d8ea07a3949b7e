//! `iac-code mcp`: the MCP servers of `settings.json` (listed, shown with secrets masked,
//! added, removed: through the same locked, checked, atomic path as `iac-code config`) and
//! of the current directory's `.mcp.json` (`approve` approves it as it is now); `test`
//! connects to one and lists its tools.

use std::io::{Read, Write};

use serde_json::{Map, Value, json};

use crate::cli::McpCommand;
use crate::config::manage;
use crate::config::settings::MCP_SERVERS;
use crate::config::{Config, ProcessEnv};
use crate::error::{Error, Result};
use crate::mcp::project::ProjectFile;
use crate::mcp::spec::{parse_entry, parse_servers, to_file_entry};
use crate::mcp::{Origin, ServerSpec, Transport, TransportKind};
use crate::sys;

/// Runs the command; returns the exit code.
pub fn run(command: &McpCommand) -> Result<u8> {
    match run_inner(command) {
        Err(Error::Stream(err)) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        other => other,
    }
}

/// A server entry found in the configuration, and where.
struct Found {
    spec: std::result::Result<ServerSpec, String>,
    name: String,
    origin: &'static str,
    /// For the project file: whether it is approved.
    approved: bool,
}

fn configured(config: &Config) -> Vec<Found> {
    let mut out: Vec<Found> = parse_servers(&config.mcp.servers, Origin::Settings)
        .into_iter()
        .map(|entry| found(entry, "settings", true))
        .collect();
    let cwd = std::env::current_dir().ok();
    if let Some(file) = cwd.as_deref().and_then(ProjectFile::find) {
        let approved = file.approved(&config.config_dir);
        out.extend(file.servers().into_iter().map(|e| found(e, "project", approved)));
    }
    out
}

fn found(
    entry: std::result::Result<ServerSpec, crate::mcp::BadEntry>,
    origin: &'static str,
    approved: bool,
) -> Found {
    match entry {
        Ok(spec) => Found { name: spec.name.clone(), spec: Ok(spec), origin, approved },
        Err(bad) => Found { name: bad.name, spec: Err(bad.reason), origin, approved },
    }
}

#[expect(clippy::too_many_lines, reason = "one arm per `mcp` subcommand")]
fn run_inner(command: &McpCommand) -> Result<u8> {
    let env = ProcessEnv;
    let mut out = sys::stdout().lock();
    let print = |out: &mut dyn Write, line: String| writeln!(out, "{line}").map_err(Error::Stream);
    match command {
        McpCommand::List { json } => {
            let config = Config::from_env(&env)?;
            let all = configured(&config);
            if *json {
                let list: Vec<Value> = all.iter().map(shown).collect();
                print(&mut out, Value::Array(list).to_string())?;
            } else if all.is_empty() {
                crate::logging::stderr_line(
                    "no MCP servers configured (add one with: iac-code mcp add)",
                );
            } else {
                for f in &all {
                    let (kind, target) = match &f.spec {
                        Ok(spec) => (spec.transport.kind().id(), spec.transport.describe()),
                        Err(why) => ("invalid", why.clone()),
                    };
                    let origin = if f.approved {
                        f.origin.to_string()
                    } else {
                        format!("{} (not approved)", f.origin)
                    };
                    print(&mut out, format!("{}\t{kind}\t{target}\t{origin}", f.name))?;
                }
            }
        }
        McpCommand::Get { name, json } => {
            let config = Config::from_env(&env)?;
            let all = configured(&config);
            let f = all.iter().find(|f| f.name == *name).ok_or_else(|| unknown(name))?;
            let entry = shown(f);
            if *json {
                print(&mut out, entry.to_string())?;
            } else {
                for (key, value) in entry.as_object().into_iter().flatten() {
                    let value = match value {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    print(&mut out, format!("{key}: {value}"))?;
                }
            }
        }
        McpCommand::Add { name, transport, target, args, env: vars, headers } => {
            let transport = match transport {
                TransportKind::Stdio => Transport::Stdio {
                    command: target.clone(),
                    args: args.clone(),
                    env: vars.clone(),
                },
                TransportKind::Http => {
                    Transport::Http { url: target.clone(), headers: headers.clone() }
                }
                TransportKind::Sse => {
                    Transport::Sse { url: target.clone(), headers: headers.clone() }
                }
            };
            add(&env, name, to_file_entry(&transport))?;
        }
        McpCommand::AddJson { name, json } => {
            let text = if json == "-" { read_stdin()? } else { json.clone() };
            let entry: Value = serde_json::from_str(&text)
                .map_err(|err| Error::Usage(format!("the entry is not valid JSON: {err}")))?;
            add(&env, name, entry)?;
        }
        McpCommand::Approve => {
            let config = Config::from_env(&env)?;
            let cwd = std::env::current_dir().map_err(Error::Stream)?;
            let Some(file) = ProjectFile::find(&cwd) else {
                return Err(Error::Usage(format!("no .mcp.json in {}", cwd.display())));
            };
            file.approve(&config.config_dir)
                .map_err(|source| Error::Io { path: config.config_dir.clone(), source })?;
            for name in file.names() {
                print(&mut out, name)?;
            }
            crate::logging::stderr_line(&format!(
                "approved {}: its servers start with the next session here (a change to the \
                 file, or to a program it runs, asks again)",
                file.path.display()
            ));
        }
        McpCommand::Remove { name } => {
            manage::edit_root(&env, |root, _| {
                let servers = servers_object(root)?;
                if servers.remove(name).is_none() {
                    return Err(unknown(name));
                }
                if servers.is_empty() {
                    root.remove(MCP_SERVERS);
                }
                Ok(None)
            })?;
        }
        McpCommand::Test { name, json } => {
            let config = Config::from_env(&env)?;
            let all = configured(&config);
            let f = all.iter().find(|f| f.name == *name).ok_or_else(|| unknown(name))?;
            if !f.approved {
                return Err(Error::Usage(format!(
                    "MCP server '{name}' comes from this directory's .mcp.json, which is not \
                     approved: look at it, then run 'iac-code mcp approve'"
                )));
            }
            let spec = f
                .spec
                .clone()
                .map_err(|why| Error::Usage(format!("MCP server '{name}': {why}")))?;
            let cwd = std::env::current_dir().map_err(Error::Stream)?;
            let c = &config.mcp;
            let setup = crate::mcp::setup(&cwd, c.connect_timeout, c.call_timeout, c.tls.as_ref());
            let started = std::time::Instant::now();
            match crate::mcp::connect(&spec, &setup) {
                Ok((conn, tools)) => {
                    let ms = started.elapsed().as_millis();
                    if *json {
                        let tools: Vec<Value> = tools
                            .iter()
                            .map(|t| {
                                json!({"name": t.name, "description": t.description,
                                            "readOnly": t.read_only, "inputSchema": t.schema})
                            })
                            .collect();
                        let report = json!({"name": name, "ok": true, "server": conn.server_info,
                            "protocolVersion": conn.version, "millis": ms, "tools": tools});
                        print(&mut out, report.to_string())?;
                    } else {
                        crate::logging::stderr_line(&format!(
                            "{name}: connected to {} (MCP {}) in {ms} ms; {} tools",
                            conn.server_info,
                            conn.version,
                            tools.len()
                        ));
                        for tool in &tools {
                            let about = crate::text::one_line(&tool.description, " ", 100);
                            print(&mut out, format!("{}\t{about}", tool.name))?;
                        }
                    }
                    conn.close();
                    // This process ends now: the server must not outlive it (a stdio
                    // server's SIGKILL would otherwise come from a thread that dies first).
                    crate::child::kill_descendants();
                }
                Err(why) => {
                    crate::child::kill_descendants();
                    if *json {
                        print(
                            &mut out,
                            json!({"name": name, "ok": false, "error": why}).to_string(),
                        )?;
                    }
                    crate::logging::stderr_line(&format!(
                        "iac-code: error: MCP server '{name}' does not work: {why}"
                    ));
                    out.flush().map_err(Error::Stream)?;
                    return Ok(1);
                }
            }
        }
    }
    out.flush().map_err(Error::Stream)?;
    Ok(0)
}

fn unknown(name: &str) -> Error {
    Error::Usage(format!("no MCP server named '{name}' (see: iac-code mcp list)"))
}

/// An entry as shown: its transport and target, env and header names with values masked.
fn shown(f: &Found) -> Value {
    let mut entry = json!({"name": f.name, "origin": f.origin, "approved": f.approved});
    match &f.spec {
        Err(why) => entry["error"] = Value::String(why.clone()),
        Ok(spec) => {
            let masked = |pairs: &[(String, String)]| -> Value {
                pairs
                    .iter()
                    .map(|(k, _)| (k.clone(), Value::String("***".into())))
                    .collect::<Map<_, _>>()
                    .into()
            };
            entry["transport"] = spec.transport.kind().id().into();
            match &spec.transport {
                Transport::Stdio { command, args, env } => {
                    entry["command"] = command.clone().into();
                    entry["args"] = args.clone().into();
                    entry["env"] = masked(env);
                }
                Transport::Http { url, headers } | Transport::Sse { url, headers } => {
                    entry["url"] = url.clone().into();
                    entry["headers"] = masked(headers);
                }
            }
        }
    }
    entry
}

/// Adds `entry` under `name`, after checking it reads as a server.
fn add(env: &ProcessEnv, name: &str, entry: Value) -> Result<()> {
    parse_entry(name, &entry, Origin::Settings)
        .map_err(|bad| Error::Usage(format!("MCP server '{name}': {}", bad.reason)))?;
    manage::edit_root(env, |root, _| {
        let servers = servers_object(root)?;
        if servers.contains_key(name) {
            return Err(Error::Usage(format!(
                "an MCP server named '{name}' exists already (remove it first: iac-code mcp \
                 remove {name})"
            )));
        }
        servers.insert(name.to_string(), entry);
        Ok(None)
    })?;
    Ok(())
}

/// `mcpServers` as an object keyed by name (a list of ACP-style entries is converted).
fn servers_object(root: &mut Map<String, Value>) -> Result<&mut Map<String, Value>> {
    let value = root.entry(MCP_SERVERS).or_insert_with(|| Value::Object(Map::new()));
    if let Value::Array(list) = value {
        let mut object = Map::new();
        for entry in list.iter() {
            let Some(name) = entry.get("name").and_then(Value::as_str) else {
                return Err(Error::Config("settings.json: an mcpServers entry has no name".into()));
            };
            let mut entry = entry.clone();
            if let Some(map) = entry.as_object_mut() {
                map.remove("name");
            }
            object.insert(name.to_string(), entry);
        }
        *value = Value::Object(object);
    }
    value
        .as_object_mut()
        .ok_or_else(|| Error::Config("settings.json: mcpServers must be an object".into()))
}

fn read_stdin() -> Result<String> {
    let mut text = String::new();
    std::io::stdin().lock().read_to_string(&mut text).map_err(Error::Stream)?;
    Ok(text)
}
