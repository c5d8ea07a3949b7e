//! One-shot mode for scripts (`iac-code -p`): one turn in the current directory through
//! the same session manager and agent loop as ACP, its answer on stdout as it streams (or
//! as JSON), questions refused (nobody can answer them), and an exit code per outcome.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::agent::event::{AgentEvent, EventSink};
use crate::agent::{Outcome, StopReason};
use crate::cancel::CancelToken;
use crate::cli::{AcpArgs, OutputFormat, PermissionMode, PromptArgs};
use crate::config::{Config, ProcessEnv};
use crate::error::{Error, Result};
use crate::permission::{Answer, Asker, Mode, Question};
use crate::session::{Manager, PromptFailure, PromptIo, Services};
use crate::{lock, logging, sys};

/// Exit codes of one-shot mode (documented in the man page).
pub mod exit {
    /// The model finished.
    pub const END_TURN: u8 = 0;
    /// The provider or the agent failed.
    pub const FAILURE: u8 = 1;
    /// Too many LLM requests in the turn.
    pub const MAX_TURN_REQUESTS: u8 = 3;
    /// The reply hit max_tokens.
    pub const MAX_TOKENS: u8 = 4;
    /// The model refused.
    pub const REFUSAL: u8 = 5;
    /// Cancelled by SIGINT or SIGTERM.
    pub const CANCELLED: u8 = 130;
}

/// Runs the prompt; returns the exit code.
pub fn run(args: &PromptArgs) -> Result<u8> {
    logging::init_quiet(args.debug, args.log_file.as_deref())?;
    let config = Config::from_env(&AcpArgs::default(), &ProcessEnv)?;
    if let Err(reason) = &config.provider {
        return Err(Error::Config(reason.clone()));
    }
    let text = if args.prompt == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map_err(Error::Stream)?;
        if text.trim().is_empty() {
            return Err(Error::Usage("the prompt read from stdin is empty".to_string()));
        }
        text
    } else {
        args.prompt.clone()
    };
    sys::block_termination_signals().map_err(Error::Stream)?;
    let services = Arc::new(Services::new(config));
    let manager = Arc::new(Manager::new(Arc::clone(&services)));
    let cwd = std::env::current_dir().map_err(Error::Stream)?.display().to_string();
    let session = match (&args.resume, args.continue_last) {
        (Some(id), _) => manager.resume(id, &cwd)?,
        (None, true) => {
            let newest = manager.list(Some(&cwd)).into_iter().next().ok_or_else(|| {
                Error::Usage(format!("no session to continue in {cwd}; run without --continue"))
            })?;
            manager.resume(&newest.id, &cwd)?
        }
        (None, false) => manager.create(&cwd)?,
    };
    session.set_mode(match args.permission {
        PermissionMode::Default | PermissionMode::DontAsk => Mode::Default,
        PermissionMode::AcceptEdits => Mode::AcceptEdits,
        PermissionMode::BypassPermissions => Mode::BypassPermissions,
    });
    let watcher = Arc::clone(&manager);
    let id = session.id.clone();
    let _ = std::thread::Builder::new().name("signals".into()).spawn(move || {
        if sys::wait_for_termination().is_ok() {
            watcher.cancel(&id);
        }
    });
    let printer = Arc::new(Printer { format: args.format, text: Mutex::new(String::new()) });
    let (done_tx, done) = crossbeam_channel::bounded(1);
    let io = PromptIo {
        sink: Arc::clone(&printer) as Arc<dyn EventSink>,
        asker: Arc::new(Refuse),
        done: Box::new(move |result| {
            let _ = done_tx.send(result);
        }),
    };
    manager.prompt(&session.id, text, io)?;
    let result = done.recv().map_err(|_| Error::Internal("the prompt never answered".into()))?;
    let code = printer.finish(&session.id, &result);
    manager.shutdown(std::time::Duration::from_secs(5));
    Ok(code)
}

/// Refuses every question: in one-shot mode nobody can answer.
struct Refuse;

impl Asker for Refuse {
    fn ask(&self, question: &Question, _cancel: &CancelToken) -> Answer {
        log::warn!(
            "refused '{}': nobody can answer a question with -p; use --permission-mode \
             accept_edits or bypass_permissions to let it run",
            question.title
        );
        Answer::RejectOnce
    }
}

/// Writes events to stdout in the chosen format.
struct Printer {
    format: OutputFormat,
    text: Mutex<String>,
}

impl Printer {
    fn line(&self, value: &Value) {
        let mut out = sys::stdout().lock();
        let _ = writeln!(out, "{value}");
        let _ = out.flush();
    }

    /// Prints the result and returns the exit code.
    fn finish(&self, session: &str, result: &std::result::Result<Outcome, PromptFailure>) -> u8 {
        let (stop, code, usage, error) = match result {
            Ok(outcome) => {
                let (stop, code) = match outcome.stop {
                    StopReason::EndTurn => ("end_turn", exit::END_TURN),
                    StopReason::MaxTurnRequests => ("max_turn_requests", exit::MAX_TURN_REQUESTS),
                    StopReason::MaxTokens => ("max_tokens", exit::MAX_TOKENS),
                    StopReason::Refusal => ("refusal", exit::REFUSAL),
                    StopReason::Cancelled => ("cancelled", exit::CANCELLED),
                };
                (Some(stop), code, Some(outcome.usage), None)
            }
            Err(PromptFailure::Provider(failure)) => {
                (None, exit::FAILURE, Some(failure.usage), Some(failure.message.clone()))
            }
            Err(PromptFailure::Internal(what)) => (None, exit::FAILURE, None, Some(what.clone())),
        };
        let usage = usage.map(|u| {
            json!({"inputTokens": u.input, "outputTokens": u.output, "totalTokens": u.input + u.output})
        });
        let result = json!({
            "type": "result",
            "sessionId": session,
            "stopReason": stop,
            "isError": error.is_some(),
            "error": error,
            "text": *lock(&self.text),
            "usage": usage,
        });
        match self.format {
            OutputFormat::Text => {
                let mut out = sys::stdout().lock();
                let text = lock(&self.text);
                if !text.is_empty() && !text.ends_with('\n') {
                    let _ = writeln!(out);
                }
                let _ = out.flush();
            }
            OutputFormat::Json | OutputFormat::StreamJson => self.line(&result),
        }
        if let Some(error) = error {
            crate::logging::stderr_line(&format!("iac-code: error: {error}"));
        }
        code
    }
}

impl EventSink for Printer {
    fn emit(&self, event: AgentEvent) {
        let stream = self.format == OutputFormat::StreamJson;
        match event {
            AgentEvent::Text(text) => {
                lock(&self.text).push_str(&text);
                match self.format {
                    OutputFormat::Text => {
                        let mut out = sys::stdout().lock();
                        let _ = out.write_all(text.as_bytes());
                        let _ = out.flush();
                    }
                    OutputFormat::StreamJson => self.line(&json!({"type": "text", "text": text})),
                    OutputFormat::Json => {}
                }
            }
            AgentEvent::Thought(text) if stream => {
                self.line(&json!({"type": "thought", "text": text}));
            }
            AgentEvent::Notice(text) => {
                if stream {
                    self.line(&json!({"type": "notice", "text": text}));
                } else {
                    crate::logging::stderr_line(text.trim_end());
                }
            }
            AgentEvent::ToolCall(call) => {
                if stream {
                    self.line(&json!({"type": "tool_call", "id": call.id, "title": call.title, "input": call.input}));
                } else {
                    crate::logging::stderr_line(&format!("> {}", call.title));
                }
            }
            AgentEvent::ToolDone(end) if stream => {
                let status = if end.ok { "completed" } else { "failed" };
                self.line(&json!({"type": "tool_result", "id": end.id, "status": status, "output": end.text}));
            }
            AgentEvent::Usage(usage) if stream => {
                self.line(&json!({"type": "usage", "used": usage.used, "size": usage.size}));
            }
            _ => {}
        }
    }
}
