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
mod tests {
    //! The verdict table: events × ends × what the hook printed.

    use super::*;

    use Event::UserPromptSubmit as Prompt;
    use Event::{PostToolUse as Post, PreToolUse as Pre, SessionStart as Start, Stop};

    fn go(context: Option<&str>) -> Outcome {
        Outcome::Go { context: context.map(str::to_string) }
    }

    fn block(reason: &str) -> Outcome {
        Outcome::Block { reason: reason.to_string() }
    }

    fn decide(verdict: Verdict, reason: Option<&str>) -> Outcome {
        Outcome::Decide { verdict, reason: reason.map(str::to_string) }
    }

    fn warns(outcome: &Outcome, part: &str) -> bool {
        matches!(outcome, Outcome::Warn { warning } if warning.contains(part))
    }

    #[test]
    fn exit_codes_decide_what_comes_next() {
        let table: &[(Event, End, &str, &str, Outcome)] = &[
            (Pre, End::Code(0), "", "", go(None)),
            (Pre, End::Code(0), "ignored text", "", go(None)),
            (Stop, End::Code(0), "ignored text", "", go(None)),
            (Post, End::Code(0), "formatted main.tf\n", "", go(Some("formatted main.tf"))),
            (Start, End::Code(0), "branch: main", "", go(Some("branch: main"))),
            (Prompt, End::Code(0), " ticket ABC-1 ", "", go(Some("ticket ABC-1"))),
            (Post, End::Code(0), "  \n", "", go(None)),
            (Pre, End::Code(2), "", "apply only in CI\n", block("apply only in CI")),
            (Post, End::Code(2), "out", "lint failed", block("lint failed")),
            (Prompt, End::Code(2), "", "no secrets in prompts", block("no secrets in prompts")),
            (Stop, End::Code(2), "", "run the tests first", block("run the tests first")),
            (Pre, End::Code(2), "", "  ", block("the hook gave no reason")),
            (Pre, End::Cancelled, "", "", Outcome::Cancelled),
        ];
        for (event, end, out, err, expected) in table {
            let got = judge(*event, end, out.as_bytes(), err.as_bytes());
            assert_eq!(&got, expected, "{event:?} {end:?} out={out:?} err={err:?}");
        }
    }

    #[test]
    fn other_ends_warn_and_go_on() {
        let table: &[(Event, End, &str, &str)] = &[
            (Pre, End::Code(1), "oops\nmore", "exit 1: oops ⏎ more"),
            (Post, End::Code(127), "bash: x: command not found", "exit 127: bash: x"),
            (Pre, End::Code(3), "", "exit 3"),
            (Pre, End::Signal(9), "", "ended by signal 9"),
            (Stop, End::TimedOut(Duration::from_millis(1500)), "", "timed out after 1.5 s"),
            (Pre, End::TimedOut(Duration::from_secs(60)), "", "timed out after 60 s"),
            (Pre, End::Failed("no such file".into()), "", "could not start: no such file"),
            (Start, End::Code(2), "nope", "exit 2 (a SessionStart hook blocks nothing): nope"),
        ];
        for (event, end, err, part) in table {
            let got = judge(*event, end, b"", err.as_bytes());
            assert!(warns(&got, part), "{event:?} {end:?}: {got:?}");
            assert!(!got.stops());
        }
        let long = "x".repeat(5_000);
        let Outcome::Warn { warning } = judge(Pre, &End::Code(1), b"", long.as_bytes()) else {
            panic!("a warning")
        };
        assert!(warning.chars().count() < 320, "stderr quoted on one bounded line");
    }

    #[test]
    fn json_answers_decide_for_pre_tool_use() {
        let table: &[(&str, Outcome)] = &[
            (
                r#"{"decision":"deny","reason":"prod is frozen"}"#,
                decide(Verdict::Deny, Some("prod is frozen")),
            ),
            (r#"{"decision":"block","reason":"no"}"#, decide(Verdict::Deny, Some("no"))),
            (
                r#"{"decision":"ask","reason":"touches prod"}"#,
                decide(Verdict::Ask, Some("touches prod")),
            ),
            (r#"{"decision":"allow"}"#, decide(Verdict::Allow, None)),
            (r#"{"decision":"approve","reason":" "}"#, decide(Verdict::Allow, None)),
            (
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",
                "permissionDecisionReason":"use the pipeline"}}"#,
                decide(Verdict::Deny, Some("use the pipeline")),
            ),
            (
                r#"{"decision":"allow","hookSpecificOutput":{"permissionDecision":"ask"}}"#,
                decide(Verdict::Ask, None),
            ),
            (r#"{"continue":false,"stopReason":"halt"}"#, block("halt")),
            (r#"{"suppressOutput":true}"#, go(None)),
            (r#"{"decision":"deny""#, go(None)),
        ];
        for (out, expected) in table {
            let got = judge(Pre, &End::Code(0), out.as_bytes(), b"");
            assert_eq!(&got, expected, "{out}");
        }
        assert!(decide(Verdict::Deny, None).stops() && !decide(Verdict::Ask, None).stops());
        let got = judge(Pre, &End::Code(0), br#"{"decision":"maybe"}"#, b"");
        assert!(warns(&got, "unknown decision 'maybe'"), "{got:?}");
    }

    #[test]
    fn json_answers_for_the_other_events() {
        let table: &[(Event, &str, Outcome)] = &[
            (Post, r#"{"decision":"block","reason":"fmt failed"}"#, block("fmt failed")),
            (Stop, r#"{"decision":"block","reason":"tests fail"}"#, block("tests fail")),
            (Stop, r#"{"continue":false}"#, go(None)),
            (Prompt, r#"{"decision":"block"}"#, block("the hook gave no reason")),
            (Prompt, r#"{"decision":"deny","reason":"x"}"#, block("x")),
            (Post, r#"{"decision":"allow"}"#, go(None)),
            (
                Prompt,
                r#"{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit",
                "additionalContext":"env: staging"}}"#,
                go(Some("env: staging")),
            ),
            (
                Post,
                r#"{"hookSpecificOutput":{"permissionDecision":"deny","additionalContext":"ok"}}"#,
                go(Some("ok")),
            ),
            (Stop, r#"{"hookSpecificOutput":{"additionalContext":"x"}}"#, go(None)),
        ];
        for (event, out, expected) in table {
            let got = judge(*event, &End::Code(0), out.as_bytes(), b"");
            assert_eq!(&got, expected, "{event:?} {out}");
        }
        let got = judge(Start, &End::Code(0), br#"{"decision":"block"}"#, b"");
        assert!(warns(&got, "blocks nothing"), "{got:?}");
    }

    #[test]
    fn context_and_reasons_are_capped() {
        let long = "y".repeat(MAX_CONTEXT_CHARS * 3);
        let Outcome::Go { context: Some(context) } =
            judge(Post, &End::Code(0), long.as_bytes(), b"")
        else {
            panic!("context")
        };
        assert!(context.chars().count() <= MAX_CONTEXT_CHARS);
        assert!(context.contains("characters"), "says what was left out");
        let Outcome::Block { reason } = judge(Pre, &End::Code(2), b"", long.as_bytes()) else {
            panic!("a block")
        };
        assert!(reason.chars().count() <= MAX_REASON_CHARS);
        let bytes = [0xff, 0xfe, b'o', b'k'];
        assert_eq!(judge(Post, &End::Code(0), &bytes, b""), go(Some("\u{fffd}\u{fffd}ok")));
    }

    #[test]
    fn durations_read_as_seconds() {
        assert_eq!(seconds(Duration::from_secs(60)), "60 s");
        assert_eq!(seconds(Duration::from_millis(500)), "0.5 s");
    }
}
