//! The turn loop: ask the LLM, stream its reply as events, run the tool calls it asks for
//! (after the gate, `crate::gate`), repeat until it stops or a limit is hit. Plain blocking
//! code on the prompt thread. Never imports `acp`.

pub mod compact;
mod completion;
mod estimate;
pub mod event;
mod hooks;
mod host;
pub mod prompt;
mod steering;
mod sub_agent;
mod tool_call;
mod turn;
pub mod usage;

use std::borrow::Cow;
use std::sync::Arc;

use crate::gate::{Always, Mode, Unreviewed};
use crate::history::{self, ChatMessage, close_unanswered};
use crate::provider::{ChatRequest, FailureKind, Finish, ToolDef};
use crate::sync::lock;
use crate::tools::{Registry, Tool};
use completion::{Step, request_completion};
pub use steering::{NoSteering, Steering};
pub use turn::{Calls, Client, Model, Place, Record, Team, Turn};
pub use usage::{Cost, TurnUsage};

/// Keeps a durable copy of the history as it grows; the session journal implements it.
pub trait Recorder: Send + Sync {
    /// A message was added to the history.
    fn message(&self, message: &ChatMessage);
    /// A message whose chunks streamed with the message id `id` was added (by default, as
    /// `message`).
    fn message_as(&self, message: &ChatMessage, _id: &str) {
        self.message(message);
    }
    /// The context was cut back to its first `len` messages.
    fn rewind(&self, len: usize);
    /// The context was compacted: `summary` replaced all but the last `keep` messages.
    fn compacted(&self, summary: &str, keep: usize, before: u64, after: u64);
    /// The permission mode changed during the turn (`exit_plan_mode`).
    fn mode(&self, _mode: &str) {}
    /// A model call with `model` used `call`; returns what the session used so far (by
    /// default, this call alone).
    fn usage(&self, _model: &str, call: &TurnUsage) -> TurnUsage {
        *call
    }
    /// A request offers `tools` (where they change, the provider's prompt cache starts
    /// again: the session logs why).
    fn offered(&self, _tools: &[ToolDef]) {}
}

/// Records nothing (sub-agents, whose history is their own).
pub struct NoRecorder;

impl Recorder for NoRecorder {
    fn message(&self, _: &ChatMessage) {}
    fn rewind(&self, _: usize) {}
    fn compacted(&self, _: &str, _: usize, _: u64, _: u64) {}
}

/// The tools offered in `mode`: `exit_plan_mode` (last in the registry) only in plan mode.
fn offered_tools(defs: &[ToolDef], mode: Mode) -> &[ToolDef] {
    match defs.split_last() {
        Some((last, rest)) if last.name == "exit_plan_mode" && mode != Mode::Plan => rest,
        _ => defs,
    }
}

/// A cancelled turn's outcome: its usage is flagged as estimated when no provider reported
/// any (a cancel before the first reply must not look like a real zero).
fn cancelled(mut usage: TurnUsage) -> Outcome {
    if usage.input + usage.output == 0 {
        usage.estimated = true;
    }
    Outcome { stop: StopReason::Cancelled, usage }
}

/// Adds a message to the history and the record.
fn push(turn: &Turn, history: &mut Vec<ChatMessage>, mut message: ChatMessage) {
    if let ChatMessage::User { text, .. } = &mut message {
        *text = turn.record.vault.redact(text).0; // a prompt and its resources, steering, hooks
    }
    turn.record.recorder.message(&message);
    history.push(message);
}

/// Adds a message that streamed as the message `id` to the history and the record.
fn push_as(turn: &Turn, history: &mut Vec<ChatMessage>, message: ChatMessage, id: &str) {
    turn.record.recorder.message_as(&message, id);
    history.push(message);
}

/// Answers unanswered tool calls with `reason`, in the history and the record.
pub fn close(recorder: &dyn Recorder, history: &mut Vec<ChatMessage>, reason: &str) {
    let added = close_unanswered(history, reason);
    for message in &history[history.len() - added..] {
        recorder.message(message);
    }
}

/// Per-session settings the client can change at any time (read at each step).
#[derive(Debug, Clone)]
pub struct Settings {
    /// Permission mode.
    pub mode: Mode,
    /// Model for the next LLM request.
    pub model: String,
    /// "Always" answers.
    pub always: Always,
    /// Files written without a person's answer.
    pub unreviewed: Unreviewed,
    /// Whether the model is asked to reason (the session's `thinking` option; default on).
    pub thinking: bool,
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The model finished.
    EndTurn,
    /// The reply hit max_tokens.
    MaxTokens,
    /// Too many LLM requests in one turn.
    MaxTurnRequests,
    /// The model refused.
    Refusal,
    Cancelled,
}

/// A finished turn.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    /// Why it stopped.
    pub stop: StopReason,
    /// Tokens used.
    pub usage: TurnUsage,
}

/// A turn that failed (the provider, or a broken tool).
#[derive(Debug, Clone)]
pub struct TurnFailure {
    /// What kind of failure (a tool's fatal error is `Internal`).
    pub kind: FailureKind,
    /// For the user.
    pub message: String,
    /// Tokens used before the failure.
    pub usage: TurnUsage,
}

impl<'a> Turn<'a> {
    /// The request this turn sends for `messages`, with `model` (the session's model now)
    /// and `tools` (from `offered`).
    fn request<'r>(
        &'r self,
        model: &'r str,
        messages: &'r [ChatMessage],
        tools: &'r [ToolDef],
    ) -> ChatRequest<'r> {
        ChatRequest {
            model,
            system: self.model.system_prompt,
            messages,
            tools,
            max_tokens: self.limits.max_tokens,
            cache_key: self.model.cache_key,
            thinking: lock(self.settings).thinking,
        }
    }

    /// The tools offered to the model now: the built-in ones for the mode, with the
    /// external ones before `exit_plan_mode` (which must stay last).
    fn offered(&self) -> Cow<'_, [ToolDef]> {
        let mode = lock(self.settings).mode;
        let builtin = offered_tools(self.model.tool_defs, mode);
        let external = self.calls.external.current();
        if external.is_empty() {
            return Cow::Borrowed(builtin);
        }
        let (head, tail) = match builtin.split_last() {
            Some((last, rest)) if last.name == "exit_plan_mode" => (rest, Some(last)),
            _ => (builtin, None),
        };
        let mut defs = head.to_vec();
        defs.extend(external.iter().map(|t| def_of(t.as_ref())));
        defs.extend(tail.cloned());
        Cow::Owned(defs)
    }

    /// A tool by the name the model used: built-in, else external (as offered now).
    fn tool(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.calls
            .tools
            .get_arc(name)
            .or_else(|| self.calls.external.current().into_iter().find(|t| t.name() == name))
    }
}

fn def_of(tool: &dyn Tool) -> ToolDef {
    ToolDef {
        name: tool.name().to_string(),
        description: tool.description().to_string(),
        parameters: tool.schema(),
    }
}

/// The definitions sent to the model for `tools`.
pub fn tool_defs(tools: &Registry) -> Vec<ToolDef> {
    tools.iter().map(def_of).collect()
}

pub use crate::gate::CANCELLED_RESULT;

/// Runs one prompt turn to its end. `history` gains the user message, the replies and the
/// tool results; it is left well formed (every tool call answered) however the turn ends.
pub fn run_turn(
    turn: &Turn,
    history: &mut Vec<ChatMessage>,
    user_text: String,
    images: Vec<history::Image>,
) -> Result<Outcome, TurnFailure> {
    let result = run_steps(turn, history, user_text, images);
    let spent = std::mem::take(&mut *lock(turn.record.sub_usage));
    match result {
        Ok(mut outcome) => {
            outcome.usage.add(spent);
            Ok(outcome)
        }
        Err(mut failure) => {
            failure.usage.add(spent);
            Err(failure)
        }
    }
}

fn run_steps(
    turn: &Turn,
    history: &mut Vec<ChatMessage>,
    user_text: String,
    images: Vec<history::Image>,
) -> Result<Outcome, TurnFailure> {
    let mut turn_start = history.len();
    push(turn, history, ChatMessage::User { text: user_text, images });
    let mut usage = TurnUsage::default();
    let mut continued = 0;
    for _ in 0..turn.limits.max_turn_requests {
        if turn.cancel.is_cancelled() {
            return Ok(cancelled(usage));
        }
        steering::inject(turn, history, false);
        if let Err(failure) = compact::if_needed(turn, history, &mut turn_start) {
            if turn.cancel.is_cancelled() {
                return Ok(cancelled(usage));
            }
            return Err(TurnFailure { kind: failure.kind, message: failure.message, usage });
        }
        let message_id = event::new_message_id();
        let completion = match request_completion(turn, history, &mut usage, &message_id) {
            Ok(completion) => completion,
            Err(Step::Cancelled) => return Ok(cancelled(usage)),
            // A failure racing a cancel is still a cancel: the client asked to stop.
            Err(Step::Failed(_)) if turn.cancel.is_cancelled() => {
                return Ok(cancelled(usage));
            }
            Err(Step::Failed(failure)) => {
                return Err(TurnFailure { kind: failure.kind, message: failure.message, usage });
            }
        };
        let finish = completion.finish.clone();
        let calls = completion.tool_calls.clone();
        let reply = ChatMessage::Assistant {
            text: completion.text,
            thinking: completion.thinking,
            signed: completion.signed,
            tool_calls: completion.tool_calls,
        };
        push_as(turn, history, reply, &message_id);
        if turn.cancel.is_cancelled() {
            close(turn.record.recorder, history, CANCELLED_RESULT);
            return Ok(cancelled(usage));
        }
        let stop = match finish {
            Finish::Length => Some(StopReason::MaxTokens),
            Finish::Refusal => Some(StopReason::Refusal),
            Finish::Stop | Finish::ToolCalls | Finish::Other(_) => None,
        };
        if stop == Some(StopReason::Refusal) {
            // ACP: after a refusal the prompt and what follows leave the next context.
            history.truncate(turn_start);
            turn.record.recorder.rewind(turn_start);
        }
        if let Some(stop) = stop {
            close(
                turn.record.recorder,
                history,
                "Not run: the reply was cut off before the call was complete.",
            );
            return Ok(Outcome { stop, usage });
        }
        if calls.is_empty() {
            // A Stop hook may send the model back to work, with why.
            if let Some(instruction) = hooks::stop(turn, &mut continued) {
                push(turn, history, ChatMessage::User { text: instruction, images: Vec::new() });
                continue;
            }
            if turn.cancel.is_cancelled() {
                return Ok(cancelled(usage));
            }
            // What the user sent while the model finished is answered first.
            if steering::inject(turn, history, true) {
                continue;
            }
            return Ok(Outcome { stop: StopReason::EndTurn, usage });
        }
        let mut asked = Vec::new();
        for call in &calls {
            if turn.cancel.is_cancelled() {
                break;
            }
            let result = tool_call::run(turn, call, &mut asked).map_err(|message| TurnFailure {
                kind: FailureKind::Internal,
                message,
                usage,
            })?;
            // Already recorded by `tool_call::run`, before the client saw it.
            history.push(result);
        }
        if turn.cancel.is_cancelled() {
            close(turn.record.recorder, history, CANCELLED_RESULT);
            return Ok(cancelled(usage));
        }
        if !asked.is_empty() {
            // Questions nobody could answer now: the user answers in the next prompt.
            tool_call::show_questions(turn, history, asked);
            return Ok(Outcome { stop: StopReason::EndTurn, usage });
        }
    }
    Ok(Outcome { stop: StopReason::MaxTurnRequests, usage })
}
