//! Slash commands: `/compact`, `/clear`, `/rename <title>`, `/mcp`, `/memory`, `/skills`,
//! `/help`, and each usable skill's `/name` (expanded into the turn's prompt by
//! `skills.rs`). They arrive as prompt
//! text, run on the prompt thread like a turn (so they queue behind nothing and can be
//! cancelled), and answer with a message. Anything else starting with `/` is a prompt.

use super::record::Record;
use super::{PromptFailure, Services, Session};
use crate::agent::event::{AgentEvent, EventSink};
use crate::agent::{Outcome, StopReason, Turn, TurnFailure, TurnUsage, compact};
use crate::history::ChatMessage;

/// Every command: name, description, input hint.
pub const COMMANDS: &[(&str, &str, Option<&str>)] = &[
    ("compact", "Summarise the older conversation to free context", None),
    ("clear", "Start the model afresh (the conversation stays in the session)", None),
    ("rename", "Set the session's title", Some("new title")),
    ("mcp", "Show the MCP servers: transport, status, tools, last error", None),
    ("memory", "Show what is remembered about this project, and where", None),
    ("skills", "List the skills, where each came from, and the problems found", None),
    ("help", "List the commands", None),
];

/// A parsed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Command {
    Compact,
    Clear,
    Rename(String),
    Mcp,
    Memory,
    Skills,
    Help,
}

impl Command {
    /// Whether it calls the LLM.
    pub fn needs_llm(&self) -> bool {
        matches!(self, Command::Compact)
    }
}

/// The command in a prompt, if the prompt is one.
pub(super) fn parse(text: &str) -> Option<Command> {
    let rest = text.trim().strip_prefix('/')?;
    let (name, arg) = match rest.split_once(char::is_whitespace) {
        Some((name, arg)) => (name, arg.trim()),
        None => (rest, ""),
    };
    match name {
        "compact" => Some(Command::Compact),
        "clear" => Some(Command::Clear),
        "rename" => Some(Command::Rename(arg.to_string())),
        "help" => Some(Command::Help),
        "mcp" => Some(Command::Mcp),
        "memory" => Some(Command::Memory),
        "skills" => Some(Command::Skills),
        _ => None,
    }
}

/// Every command of `session` for the client: the built-in ones, then its skills'.
pub fn available(services: &Services, session: &Session) -> Vec<(String, String, Option<String>)> {
    let builtin =
        COMMANDS.iter().map(|(n, d, h)| (n.to_string(), d.to_string(), h.map(str::to_string)));
    let skills = super::skills::commands(services, session).into_iter();
    let skills = skills.filter(|(name, _)| !COMMANDS.iter().any(|(n, _, _)| n == name));
    builtin.chain(skills.map(|(n, d)| (n, d, Some("arguments".to_string())))).collect()
}

/// Runs a command. `turn` is there when an LLM is configured.
pub(super) fn run(
    command: Command,
    services: &Services,
    session: &Session,
    turn: Option<&Turn>,
    history: &mut Vec<ChatMessage>,
    sink: &dyn EventSink,
) -> Result<Outcome, PromptFailure> {
    let say = |text: String| sink.emit(AgentEvent::Notice(text));
    match command {
        Command::Help => {
            let mut text = String::from("Commands:\n");
            for (name, description, hint) in available(services, session) {
                let arg = hint.map(|h| format!(" <{h}>")).unwrap_or_default();
                text.push_str(&format!("- `/{name}{arg}`: {description}\n"));
            }
            say(text);
        }
        Command::Mcp => say(mcp_status(session)),
        Command::Memory => say(memory_status(&services.config.config_dir, &session.root)),
        Command::Skills => say(super::skills::listing(services, session)),
        Command::Rename(title) if title.is_empty() => say("Usage: `/rename <title>`".to_string()),
        Command::Rename(title) => {
            let title = crate::text::title(&title);
            session.record(&Record::Title { title: title.clone() });
            session.touch(|m| m.title = Some(title.clone()));
            sink.emit(AgentEvent::SessionInfo { title: Some(title.clone()), updated_at: None });
            say(format!("Session renamed to \"{title}\"."));
        }
        Command::Clear => {
            history.clear();
            session.record(&Record::Clear);
            say("Context cleared: the model starts afresh; the conversation stays in the session's history.".to_string());
        }
        Command::Compact => {
            let Some(turn) = turn else {
                return Err(PromptFailure::Internal("no LLM provider".to_string()));
            };
            // Keep only the latest exchange whole; summarise the rest.
            match compact::compact(turn, history, 0) {
                Ok(Some(_)) => {
                    // The summary's call is what the command used.
                    let usage = std::mem::take(&mut *crate::sync::lock(turn.record.sub_usage));
                    return Ok(Outcome { stop: StopReason::EndTurn, usage });
                }
                Ok(None) => say("Nothing to compact yet: the conversation is short.".to_string()),
                Err(_) if turn.cancel.is_cancelled() => {
                    return Ok(Outcome {
                        stop: StopReason::Cancelled,
                        usage: TurnUsage::default(),
                    });
                }
                Err(failure) => {
                    return Err(PromptFailure::Provider(TurnFailure {
                        kind: failure.kind,
                        message: failure.message,
                        usage: TurnUsage::default(),
                    }));
                }
            }
        }
    }
    done_without_llm()
}

/// `/mcp`: one line per server.
fn mcp_status(session: &Session) -> String {
    let servers = session.mcp.status();
    if servers.is_empty() {
        return "No MCP servers in this session. Add them in the client, with `iac-code mcp \
                add`, or in the project's .mcp.json."
            .to_string();
    }
    let mut text = String::from("MCP servers:\n");
    for s in servers {
        let transport = s.transport.map_or("?", |t| t.id());
        text.push_str(&format!(
            "- `{}` ({transport}, from {}): {}, {} tool{}",
            s.name,
            s.origin.map_or("?", |o| o.id()),
            s.state.id(),
            s.tools,
            if s.tools == 1 { "" } else { "s" }
        ));
        if let Some(error) = s.error {
            text.push_str(&format!("; last error: {error}"));
        }
        for why in &s.left_out {
            text.push_str(&format!("; left out: {why}"));
        }
        text.push('\n');
    }
    text
}

/// `/memory`: the project's memory index and the directory it lives in.
fn memory_status(config_dir: &std::path::Path, cwd: &std::path::Path) -> String {
    let store = crate::memory::Store::of(config_dir, cwd);
    let dir = store.dir();
    match store.index() {
        Ok(Some(index)) => {
            format!("Memory of this project, in `{}`:\n\n{}", dir.display(), index.trim_end())
        }
        Ok(None) => format!(
            "Nothing is remembered for this project yet. The model saves topics with \
             write_memory; they will live in `{}`.",
            dir.display()
        ),
        Err(err) => format!("The memory in `{}` cannot be read: {err}", dir.display()),
    }
}

/// An empty outcome for commands that make no LLM request.
fn done_without_llm() -> std::result::Result<Outcome, PromptFailure> {
    Ok(Outcome { stop: StopReason::EndTurn, usage: TurnUsage::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_known_commands_are_commands() {
        assert_eq!(parse(" /rename  Prod VPC \n"), Some(Command::Rename("Prod VPC".into())));
        assert_eq!(parse("/compact"), Some(Command::Compact));
        assert_eq!(parse("/etc/hosts looks wrong"), None);
        assert_eq!(parse("please /clear"), None);
        assert!(Command::Compact.needs_llm() && !Command::Clear.needs_llm());
    }
}
