//! What one hook's run means, as Claude Code reads it. Pure: how it ended, its stdout and
//! its stderr in, an `Outcome` out.
//!
//! - exit 0: go on; stdout (for `PostToolUse`, `SessionStart`, `UserPromptSubmit`) is
//!   context for the model, capped. A JSON object on stdout is read instead:
//!   `{"decision": "deny"|"ask"|"allow"|"block", "reason": …}`, Claude Code's
//!   `hookSpecificOutput.permissionDecision`/`permissionDecisionReason` (`PreToolUse`)
//!   and `additionalContext`, and `"continue": false` with its `stopReason`;
//! - exit 2: block, stderr the reason (for `SessionStart`, which blocks nothing, a
//!   warning);
//! - any other exit, a signal, a timeout, a hook that cannot start: a warning, go on.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::config::hooks::Event;
use crate::rules::Verdict;

/// Characters of a hook's context the model gets at most.
pub const MAX_CONTEXT_CHARS: usize = 10_000;
/// Characters of a hook's reason (a block, a decision) kept at most.
pub const MAX_REASON_CHARS: usize = 4_000;
/// Characters of stderr quoted in a warning.
const WARNING_CHARS: usize = 300;

/// How a hook's run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
    /// It ran past its timeout and was killed with everything it started.
    TimedOut(Duration),
    /// It could not be started, and why.
    Failed(String),
    /// The turn was cancelled while it ran; it was killed.
    Cancelled,
}

/// What a hook's run means for what comes next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Go on, with this context for the model (if the event takes one and there is).
    Go { context: Option<String> },
    /// Block (exit 2, `"decision": "block"`): the call does not run, the prompt is
    /// refused, the turn goes on, the model hears it after the call; `reason` says why.
    Block { reason: String },
    /// `PreToolUse`'s decision for the permission gate, with its reason if it gave one.
    Decide { verdict: Verdict, reason: Option<String> },
    /// Something went wrong with the hook itself: the client is warned, all goes on.
    Warn { warning: String },
    /// The turn was cancelled.
    Cancelled,
}

impl Outcome {
    /// Whether nothing after this hook needs to run (the call or the prompt is refused).
    pub fn stops(&self) -> bool {
        matches!(
            self,
            Outcome::Block { .. }
                | Outcome::Cancelled
                | Outcome::Decide { verdict: Verdict::Deny, .. }
        )
    }
}

/// What the run of a hook for `event` that ended as `end`, printing `stdout` and
/// `stderr`, means.
pub fn judge(event: Event, end: &End, stdout: &[u8], stderr: &[u8]) -> Outcome {
    let err = String::from_utf8_lossy(stderr);
    let warn = |what: String| Outcome::Warn { warning: what };
    match end {
        End::Cancelled => Outcome::Cancelled,
        End::Failed(why) => warn(format!("could not start: {why}")),
        End::TimedOut(after) => warn(format!(
            "timed out after {}; it was killed with every process it started",
            seconds(*after)
        )),
        End::Signal(signal) => warn(format!("ended by signal {signal}{}", quoted(&err))),
        End::Code(2) if event == Event::SessionStart => {
            warn(format!("exit 2 (a SessionStart hook blocks nothing){}", quoted(&err)))
        }
        End::Code(2) => Outcome::Block { reason: reason(&err) },
        End::Code(0) => exited_zero(event, &String::from_utf8_lossy(stdout)),
        End::Code(code) => warn(format!("exit {code}{}", quoted(&err))),
    }
}

/// Exit 0: a JSON object on stdout decides; otherwise stdout is context.
fn exited_zero(event: Event, out: &str) -> Outcome {
    let trimmed = out.trim();
    if trimmed.starts_with('{')
        && let Ok(Value::Object(answer)) = serde_json::from_str::<Value>(trimmed)
    {
        return answered(event, &answer);
    }
    Outcome::Go { context: context(event, trimmed) }
}

/// The outcome a hook's JSON answer asks for.
fn answered(event: Event, answer: &Map<String, Value>) -> Outcome {
    let specific = answer.get("hookSpecificOutput").and_then(Value::as_object);
    let field = |key: &str| {
        let in_specific = specific.and_then(|s| s.get(key)).and_then(Value::as_str);
        in_specific.filter(|_| event == Event::PreToolUse || key == "additionalContext")
    };
    let decision = field("permissionDecision").or_else(|| str_of(answer, "decision"));
    let why = field("permissionDecisionReason").or_else(|| str_of(answer, "reason"));
    let additional = field("additionalContext").unwrap_or("");
    let go = Outcome::Go { context: context(event, additional.trim()) };
    if answer.get("continue") == Some(&Value::Bool(false)) {
        // For a Stop hook, "do not continue" is what ending the turn already means.
        let stop_reason = str_of(answer, "stopReason").or(why);
        return match event {
            Event::Stop => go,
            Event::SessionStart => Outcome::Warn { warning: "\"continue\": false".into() },
            _ => Outcome::Block { reason: reason(stop_reason.unwrap_or("")) },
        };
    }
    let reason_of = |why: Option<&str>| why.filter(|w| !w.trim().is_empty()).map(reason);
    match (event, decision) {
        (_, None) => go,
        (Event::SessionStart, Some("block" | "deny")) => {
            Outcome::Warn { warning: "a SessionStart hook blocks nothing".to_string() }
        }
        (Event::PreToolUse, Some("deny" | "block")) => {
            Outcome::Decide { verdict: Verdict::Deny, reason: reason_of(why) }
        }
        (_, Some("deny" | "block")) => Outcome::Block { reason: reason(why.unwrap_or("")) },
        (Event::PreToolUse, Some("ask")) => {
            Outcome::Decide { verdict: Verdict::Ask, reason: reason_of(why) }
        }
        (Event::PreToolUse, Some("allow" | "approve")) => {
            Outcome::Decide { verdict: Verdict::Allow, reason: reason_of(why) }
        }
        (_, Some("allow" | "approve" | "ask")) => go,
        (_, Some(other)) => Outcome::Warn {
            warning: format!(
                "unknown decision '{}' (expected deny, ask, allow or block); ignored",
                crate::text::clip(other, 40)
            ),
        },
    }
}

fn str_of<'a>(answer: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    answer.get(key).and_then(Value::as_str)
}

/// Context for the model, for the events that take it; none when empty.
fn context(event: Event, text: &str) -> Option<String> {
    let takes = matches!(event, Event::PostToolUse | Event::SessionStart | Event::UserPromptSubmit);
    (takes && !text.is_empty()).then(|| crate::text::middle_cut(text, MAX_CONTEXT_CHARS))
}

/// A block's reason: stderr (or the JSON reason) trimmed and capped, or a placeholder.
fn reason(text: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        return "the hook gave no reason".to_string();
    }
    crate::text::middle_cut(text, MAX_REASON_CHARS)
}

/// `: <stderr on one line>` for a warning, or nothing.
fn quoted(stderr: &str) -> String {
    let line = crate::text::one_line(stderr, " ⏎ ", WARNING_CHARS);
    if line.is_empty() { String::new() } else { format!(": {line}") }
}

/// `1.5 s`, `60 s`.
pub fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 { format!("{secs:.0} s") } else { format!("{secs:.1} s") }
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
