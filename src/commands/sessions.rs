//! `iac-code sessions list|show|delete` for scripts: the sessions on disk, as tab-separated
//! lines or JSON.

use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};

use crate::agent::TurnUsage;
use crate::cli::SessionsCommand;
use crate::config::{Config, ProcessEnv};
use crate::error::{Error, Result};
use crate::history::ChatMessage;
use crate::session::SessionId;
use crate::session::store::{self, Meta};
use crate::sys;

/// Runs the command; returns the exit code. A reader that went away (`| head -1`) is
/// not an error.
pub fn run(command: &SessionsCommand) -> Result<u8> {
    match run_inner(command) {
        Err(Error::Stream(err)) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        other => other,
    }
}

fn run_inner(command: &SessionsCommand) -> Result<u8> {
    let config = Config::from_env(&ProcessEnv)?;
    let store = store::open(&config)?;
    let mut out = sys::stdout().lock();
    let write = |out: &mut dyn Write, text: &str| writeln!(out, "{text}").map_err(Error::Stream);
    match command {
        SessionsCommand::List { cwd, json } => {
            let canonical = cwd.as_ref().and_then(|c| Path::new(c).canonicalize().ok());
            let mut sessions: Vec<Meta> = store
                .list()?
                .into_iter()
                .filter(|m| match (cwd, &canonical) {
                    (None, _) => true,
                    (Some(given), canonical) => {
                        m.cwd == *given
                            || canonical.as_ref().is_some_and(|c| Path::new(&m.cwd) == c)
                    }
                })
                .collect();
            sessions.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));
            if *json {
                let list: Vec<Value> = sessions.iter().map(meta_json).collect();
                write(&mut out, &Value::Array(list).to_string())?;
            } else {
                // Tabs and newlines inside a field would break the columns.
                let field = |s: &str| s.replace(['\t', '\n', '\r'], " ");
                for m in &sessions {
                    let title = field(m.title.as_deref().unwrap_or(""));
                    let line = format!(
                        "{}\t{}\t{}\t{}\t{title}",
                        m.session_id,
                        m.updated_at,
                        m.messages,
                        field(&m.cwd)
                    );
                    write(&mut out, &line)?;
                }
            }
            Ok(0)
        }
        SessionsCommand::Show { id, json } => {
            let id = SessionId::parse(id).map_err(|e| Error::Usage(e.to_string()))?;
            let Some((meta, rebuilt)) = store.peek(&id)? else {
                return not_found(id.as_str());
            };
            if *json {
                let messages: Vec<Value> = rebuilt.all.iter().map(message_json).collect();
                let value = json!({"session": meta_json(&meta), "messages": messages,
                    "usage": usage_json(&rebuilt.usage)});
                write(&mut out, &value.to_string())?;
            } else {
                write(&mut out, &format!("session {}", meta.session_id))?;
                write(&mut out, &format!("cwd     {}", meta.cwd))?;
                write(&mut out, &format!("title   {}", meta.title.as_deref().unwrap_or("")))?;
                write(&mut out, &format!("updated {}", meta.updated_at))?;
                write(&mut out, &format!("usage   {}", usage_line(&rebuilt.usage)))?;
                for message in &rebuilt.all {
                    write(&mut out, &transcript_line(message))?;
                }
            }
            Ok(0)
        }
        SessionsCommand::Export { id } => super::transfer::export(store.as_ref(), id),
        SessionsCommand::Import { keep_mode } => {
            super::transfer::import(store.as_ref(), *keep_mode)
        }
        SessionsCommand::Migrate { to } => super::transfer::migrate(store.as_ref(), &config, to),
        SessionsCommand::Delete { id } => {
            let id = SessionId::parse(id).map_err(|e| Error::Usage(e.to_string()))?;
            if !store.exists(&id) {
                return not_found(id.as_str());
            }
            store.delete(&id)?;
            write(&mut out, &format!("deleted {id}"))?;
            Ok(0)
        }
    }
}

fn not_found(id: &str) -> Result<u8> {
    crate::logging::stderr_line(&format!("iac-code: error: session not found: {id}"));
    Ok(1)
}

fn meta_json(m: &Meta) -> Value {
    json!({
        "sessionId": m.session_id,
        "cwd": m.cwd,
        "title": m.title,
        "createdAt": m.created_at,
        "updatedAt": m.updated_at,
        "forkedFrom": m.forked_from,
        "messageCount": m.messages,
        "usage": m.usage.as_ref().map(|u| usage_json(&u.read())),
    })
}

/// A session's totals (`Record::Usage` summed) as JSON; `cost` null when not known.
fn usage_json(u: &TurnUsage) -> Value {
    let cost = u.cost.amount().map(|(amount, c)| json!({"amount": amount, "currency": c.as_str()}));
    json!({"inputTokens": u.full_input(), "outputTokens": u.output, "totalTokens": u.input + u.output,
        "cachedReadTokens": u.cached_read, "cachedWriteTokens": u.cached_write,
        "thoughtTokens": u.thought, "cost": cost})
}

/// A session's totals on one line.
fn usage_line(u: &TurnUsage) -> String {
    let cost = match u.cost.amount() {
        Some((amount, currency)) => format!("{amount:.6} {}", currency.as_str()),
        None if u.input + u.output == 0 => "none".to_string(),
        None => "unknown".to_string(),
    };
    format!(
        "{} in ({} at full price, {} read from cache, {} written to it), {} out, cost {cost}",
        u.input,
        u.full_input(),
        u.cached_read,
        u.cached_write,
        u.output
    )
}

fn message_json(message: &ChatMessage) -> Value {
    match message {
        ChatMessage::User { text, .. } => json!({"role": "user", "text": text}),
        ChatMessage::Assistant { text, thinking, tool_calls, .. } => json!({
            "role": "assistant",
            "text": text,
            "thinking": thinking,
            "toolCalls": tool_calls.iter().map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments})).collect::<Vec<_>>(),
        }),
        ChatMessage::ToolResult { call_id, content, is_error, .. } => {
            json!({"role": "tool", "callId": call_id, "content": content, "isError": is_error})
        }
    }
}

fn transcript_line(message: &ChatMessage) -> String {
    let one_line = |text: &str| crate::text::one_line(text, " ", 200);
    match message {
        ChatMessage::User { text, .. } => format!("user: {}", one_line(text)),
        ChatMessage::Assistant { text, tool_calls, .. } => {
            let calls: Vec<&str> = tool_calls.iter().map(|c| c.name.as_str()).collect();
            if calls.is_empty() {
                format!("assistant: {}", one_line(text))
            } else {
                format!("assistant: {} [calls: {}]", one_line(text), calls.join(", "))
            }
        }
        ChatMessage::ToolResult { content, is_error, .. } => {
            let tag = if *is_error { "tool error" } else { "tool" };
            format!("{tag}: {}", one_line(content))
        }
    }
}
