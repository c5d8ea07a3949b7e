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
    let Outcome::Go { context: Some(context) } = judge(Post, &End::Code(0), long.as_bytes(), b"")
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
