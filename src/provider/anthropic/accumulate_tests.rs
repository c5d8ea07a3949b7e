//! Tests of the Anthropic event accumulator: every event type, signatures, usage, errors.

use serde_json::json;

use super::*;

fn event(data: Value) -> String {
    data.to_string()
}

#[test]
fn assembles_text_thinking_signatures_and_tool_use() {
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 12, "cache_read_input_tokens": 3, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Need the file."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig-1"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Reading."}}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "tu_1", "name": "read_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"path\":"}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "\"main.tf\"}"}}),
        json!({"type": "content_block_start", "index": 3, "content_block": {"type": "redacted_thinking", "data": "opaque=="}}),
        json!({"type": "content_block_start", "index": 4, "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 4, "delta": {"type": "thinking_delta", "thinking": "Then plan."}}),
        json!({"type": "content_block_delta", "index": 4, "delta": {"type": "signature_delta", "signature": "sig-"}}),
        json!({"type": "content_block_delta", "index": 4, "delta": {"type": "signature_delta", "signature": "4"}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"input_tokens": 0, "output_tokens": 40}}),
        json!({"type": "message_stop"}),
    ];
    let mut acc = Acc::default();
    let mut deltas = Vec::new();
    let mut streamed = false;
    let mut done = false;
    for e in events {
        done = matches!(
            acc.event(&event(e), &mut |d| deltas.push(d.into_owned()), &mut streamed),
            Ok(Flow::Done)
        );
    }
    assert!(done);
    let completion = acc.finish();
    assert_eq!(
        deltas,
        [
            Delta::Thought("Need the file.".into()),
            Delta::Text("Reading.".into()),
            Delta::Thought("Then plan.".into())
        ]
    );
    let signed = |thinking: &str, signature: &str, redacted| SignedThinking {
        thinking: thinking.into(),
        signature: signature.into(),
        redacted,
    };
    assert_eq!(
        completion.signed,
        [
            signed("Need the file.", "sig-1", false),
            signed("opaque==", "", true),
            signed("Then plan.", "sig-4", false)
        ],
        "every block keeps its own signature, in order"
    );
    assert_eq!(completion.finish, Finish::ToolCalls);
    assert_eq!(
        completion.usage,
        Some(Usage { input: 15, output: 40, cached_read: 3, ..Usage::default() }),
        "cache reads count as input; a zero in message_delta does not erase it"
    );
    assert_eq!(completion.tool_calls[0].arguments, r#"{"path":"main.tf"}"#);
    assert_eq!(finish_of("refusal"), Finish::Refusal);
    assert_eq!(finish_of("max_tokens"), Finish::Length);
}

#[test]
fn errors_mid_stream_are_reported_and_retried_only_before_output() {
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let mut acc = Acc::default();
    let mut streamed = false;
    assert!(matches!(
        acc.event(&event(overloaded.clone()), &mut |_| {}, &mut streamed),
        Err(AttemptError::Retryable { .. })
    ));
    streamed = true;
    assert!(
        matches!(acc.event(&event(overloaded), &mut |_| {}, &mut streamed), Err(AttemptError::Fatal(_, m)) if m.contains("Overloaded"))
    );
}

/// Text and thinking deltas take a borrowing fast path; escaped text, extra fields and
/// shapes it does not fit must come out exactly as the general reading gives them.
#[test]
fn deltas_read_the_same_on_the_fast_path() {
    let raw = |data: &str| data.to_string();
    let events = [
        raw(
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
        ),
        raw(
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"a\nb"}}"#,
        ),
        raw(
            r#"{"index":1,"delta":{"text":"x\"y\u00e9","type":"text_delta"},"type":"content_block_delta","extra":[1]}"#,
        ),
        raw(
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"plain"}}"#,
        ),
        // Not text: a tool's JSON goes the general way; so does a delta without its text.
        raw(r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta"}}"#),
        raw(
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"mystery_delta","text":"no"}}"#,
        ),
    ];
    let mut acc = Acc::default();
    let mut deltas = Vec::new();
    let mut streamed = false;
    for e in events {
        assert!(matches!(
            acc.event(&e, &mut |d| deltas.push(d.into_owned()), &mut streamed),
            Ok(Flow::More)
        ));
    }
    assert!(streamed);
    assert_eq!(
        deltas,
        [
            Delta::Thought("a\nb".into()),
            Delta::Text("x\"y\u{e9}".into()),
            Delta::Text("plain".into())
        ]
    );
    let completion = acc.finish();
    assert_eq!(completion.signed[0].thinking, "a\nb", "the thinking block keeps its text");
    let malformed = Acc::default().event(
        &raw(r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"#),
        &mut |_| {},
        &mut false,
    );
    assert!(matches!(malformed, Err(AttemptError::Fatal(FailureKind::BadReply, _))));
}
