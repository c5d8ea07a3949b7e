//! One-shot mode for scripts (`iac-code -p`): one turn in the current directory through
//! the same session manager and agent loop as ACP, its answer on stdout as it streams (or
//! as JSON), questions refused (nobody can answer them), and an exit code per outcome.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::agent::event::{AgentEvent, EventSink};
use crate::agent::{Outcome, StopReason};
use crate::cancel::CancelToken;
use crate::cli::{OutputFormat, PermissionMode, PromptArgs};
use crate::config::{Config, ProcessEnv};
use crate::error::{Error, Result};
use crate::gate::{Answer, Asker, Mode, Question};
use crate::session::{Manager, PromptFailure, PromptIo, Services, SessionId};
use crate::sync::lock;
use crate::{logging, sys};

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
    /// Standard output was closed (e.g. `| head -1`): the turn was cancelled.
    pub const BROKEN_PIPE: u8 = 141;
}

/// Runs the prompt; returns the exit code. With a JSON output format, an error before the
/// turn still prints a `result` object (with `isError`), so `jq` always gets one.
pub fn run(args: &PromptArgs) -> Result<u8> {
    let outcome = run_turn(args);
    if let Err(err) = &outcome
        && args.format != OutputFormat::Text
    {
        let result = json!({"type": "result", "sessionId": null, "stopReason": null,
            "isError": true, "error": err.to_string(), "text": "", "usage": null});
        let mut out = sys::stdout().lock();
        let _ = writeln!(out, "{result}");
    }
    outcome
}

fn run_turn(args: &PromptArgs) -> Result<u8> {
    // Before any other thread starts: descendants that daemonise come back to us.
    crate::child::init();
    logging::init_quiet(args.debug, args.log_file.as_deref())?;
    let mut config = Config::from_env(&ProcessEnv)?;
    config.with_rule_flags(&args.allowed_tools, &args.disallowed_tools)?;
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
    let interrupted = Arc::new(AtomicBool::new(false));
    let services = Arc::new(Services::new(config)?);
    let manager = Arc::new(Manager::new(Arc::clone(&services)));
    let cwd = std::env::current_dir().map_err(Error::Stream)?.display().to_string();
    let opened = match (&args.resume, args.continue_last) {
        (Some(id), _) => SessionId::parse(id).and_then(|id| manager.resume(&id, &cwd)),
        (None, true) => match manager.list(Some(&cwd))?.into_iter().next() {
            Some(newest) => SessionId::parse(&newest.id).and_then(|id| manager.resume(&id, &cwd)),
            None => {
                return Err(Error::Usage(format!(
                    "no session to continue in {cwd}; run without --continue"
                )));
            }
        },
        (None, false) => manager.create(&cwd),
    };
    let session = opened.map_err(|err| match err {
        Error::InvalidParams(why) => Error::Usage(why),
        other => other,
    })?;
    // The servers of settings.json and of an approved .mcp.json (bounded wait).
    manager.attach_mcp(&session, &[]);
    // For this run only: the mode stays out of the journal, so a resumed editor session
    // keeps its own.
    lock(&session.settings).mode = match args.permission {
        PermissionMode::Default | PermissionMode::DontAsk => Mode::Default,
        PermissionMode::AcceptEdits => Mode::AcceptEdits,
        PermissionMode::BypassPermissions => Mode::BypassPermissions,
    };
    // The first SIGINT/SIGTERM cancels the turn; a second one exits at once.
    let (watcher, flag, id) = (Arc::clone(&manager), Arc::clone(&interrupted), session.id.clone());
    let _ = std::thread::Builder::new().name("signals".into()).spawn(move || {
        while sys::wait_for_termination().is_ok() {
            if flag.swap(true, Ordering::SeqCst) {
                std::process::exit(i32::from(exit::CANCELLED));
            }
            watcher.cancel(&id);
        }
    });
    let (cancel_manager, cancel_id) = (Arc::clone(&manager), session.id.clone());
    let printer = Arc::new(Printer {
        format: args.format,
        state: Mutex::new(Shown::default()),
        broken: AtomicBool::new(false),
        on_broken: Box::new(move || cancel_manager.cancel(&cancel_id)),
    });
    let (done_tx, done) = crossbeam_channel::bounded(1);
    let io = PromptIo {
        sink: Arc::clone(&printer) as Arc<dyn EventSink>,
        asker: Arc::new(Refuse),
        files: Arc::new(crate::tools::NoClientTools),
        done: Box::new(move |result| {
            let _ = done_tx.send(result);
        }),
    };
    manager.prompt(&session.id, text, Vec::new(), io)?;
    if interrupted.load(Ordering::SeqCst) {
        // A signal that came before the turn was running.
        manager.cancel(&session.id);
    }
    let result = done.recv().map_err(|_| Error::Internal("the prompt never answered".into()))?;
    let code = printer.finish(session.id.as_str(), &result);
    manager.shutdown(std::time::Duration::from_secs(5));
    // Closed, not just dropped (other threads hold the manager): a shared store's lease
    // is let go now, so the next run can open the session at once.
    let _ = manager.close(&session.id);
    drop(session);
    drop(manager);
    crate::child::kill_descendants();
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

/// What was shown so far.
#[derive(Default)]
struct Shown {
    /// The answer's text, steps separated by a blank line.
    text: String,
    /// A tool call came after the last text: the next text starts a new paragraph.
    after_tool: bool,
}

/// Writes events to stdout in the chosen format. A closed stdout cancels the turn.
struct Printer {
    format: OutputFormat,
    state: Mutex<Shown>,
    broken: AtomicBool,
    on_broken: Box<dyn Fn() + Send + Sync>,
}

impl Printer {
    fn write(&self, bytes: &[u8]) {
        if self.broken.load(Ordering::SeqCst) {
            return;
        }
        let mut out = sys::stdout().lock();
        if out.write_all(bytes).and_then(|()| out.flush()).is_err() {
            self.broken.store(true, Ordering::SeqCst);
            log::warn!("standard output was closed; cancelling the turn");
            (self.on_broken)();
        }
    }

    fn line(&self, value: &Value) {
        self.write(format!("{value}\n").as_bytes());
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
            Err(PromptFailure::Internal(what) | PromptFailure::Store { message: what, .. }) => {
                (None, exit::FAILURE, None, Some(what.clone()))
            }
        };
        let usage = usage.map(|u| {
            json!({"inputTokens": u.full_input(), "outputTokens": u.output,
                "totalTokens": u.input + u.output, "cachedReadTokens": u.cached_read,
                "cachedWriteTokens": u.cached_write, "thoughtTokens": u.thought,
                "cost": cost_json(u.cost)})
        });
        let result = json!({
            "type": "result",
            "sessionId": session,
            "stopReason": stop,
            "isError": error.is_some(),
            "error": error,
            "text": lock(&self.state).text,
            "usage": usage,
        });
        match self.format {
            OutputFormat::Text => {
                let needs_newline = {
                    let state = lock(&self.state);
                    !state.text.is_empty() && !state.text.ends_with('\n')
                };
                if needs_newline {
                    self.write(b"\n");
                }
            }
            OutputFormat::Json | OutputFormat::StreamJson => self.line(&result),
        }
        if let Some(error) = error {
            crate::logging::stderr_line(&format!("iac-code: error: {error}"));
        }
        if self.broken.load(Ordering::SeqCst) { exit::BROKEN_PIPE } else { code }
    }
}

/// A cost as ACP writes it (`{amount, currency}`), `null` when it is not known.
fn cost_json(cost: crate::agent::Cost) -> Value {
    match cost.amount() {
        Some((amount, currency)) => json!({"amount": amount, "currency": currency.as_str()}),
        None => Value::Null,
    }
}

impl EventSink for Printer {
    fn emit(&self, event: AgentEvent) {
        let stream = self.format == OutputFormat::StreamJson;
        match event {
            AgentEvent::Text(text) => {
                let shown = {
                    let mut state = lock(&self.state);
                    let separator = if state.after_tool && !state.text.is_empty() {
                        if state.text.ends_with('\n') { "\n" } else { "\n\n" }
                    } else {
                        ""
                    };
                    state.after_tool = false;
                    let shown = format!("{separator}{text}");
                    state.text.push_str(&shown);
                    shown
                };
                match self.format {
                    OutputFormat::Text => self.write(shown.as_bytes()),
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
                lock(&self.state).after_tool = true;
                if stream {
                    let tier = call.tier.map(|t| t.id());
                    self.line(&json!({"type": "tool_call", "id": call.id, "title": call.title, "input": call.input, "tier": tier}));
                } else {
                    crate::logging::stderr_line(&format!("> {}", call.title));
                }
            }
            AgentEvent::ToolDone(end) if stream => {
                let status = if end.ok { "completed" } else { "failed" };
                self.line(&json!({"type": "tool_result", "id": end.id, "status": status, "output": end.text}));
            }
            AgentEvent::Usage(usage) if stream => {
                let cost = cost_json(usage.cost);
                self.line(
                    &json!({"type": "usage", "used": usage.used, "size": usage.size, "cost": cost}),
                );
            }
            _ => {}
        }
    }
}
