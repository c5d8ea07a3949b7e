//! Tests of the OpenAI chunk accumulator: tool calls by index, finish reasons, the first
//! completion only, borrowed text, and learned chunk shapes reading like the general way.

use super::*;

fn chunk(json: &str) -> Chunk<'_> {
    serde_json::from_str(json).expect("a chunk")
}

#[test]
fn assembles_tool_calls_by_index_and_forwards_text() {
    let mut acc = Accumulator::default();
    let mut deltas = Vec::new();
    let mut streamed = false;
    let chunks = [
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi","reasoning_content":"hm"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read_file","arguments":""}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"list_files","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}"#,
    ];
    for c in chunks {
        assert!(acc.apply(chunk(c), &mut |d| deltas.push(d.into_owned()), &mut streamed).is_ok());
    }
    let done = acc.finish();
    assert_eq!(deltas, [Delta::Thought("hm".into()), Delta::Text("Hi".into())]);
    assert_eq!(done.finish, Finish::ToolCalls);
    assert_eq!(done.usage, Some(Usage { input: 7, output: 3, ..Usage::default() }));
    assert_eq!(done.tool_calls.len(), 2);
    assert_eq!(done.tool_calls[0].arguments, r#"{"path":"a"}"#);
    assert_eq!(done.tool_calls[1].name, "list_files");
}

#[test]
fn maps_finish_reasons() {
    assert_eq!(finish_of("length"), Finish::Length);
    assert_eq!(finish_of("content_filter"), Finish::Refusal);
    assert_eq!(finish_of("weird"), Finish::Other("weird".into()));
}

#[test]
fn only_the_first_completion_is_read_and_text_is_borrowed() {
    let mut acc = Accumulator::default();
    let mut seen = Vec::new();
    let mut streamed = false;
    let raw = r#"{"id":"x","choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"mine"}},{"delta":{"content":" too"}}]}"#;
    let parsed = chunk(raw);
    assert!(
        acc.apply(
            parsed,
            &mut |d| {
                if let Delta::Text(text) = &d {
                    seen.push((text.to_string(), matches!(text, std::borrow::Cow::Borrowed(_))));
                }
            },
            &mut streamed
        )
        .is_ok()
    );
    assert_eq!(seen, [("mine".to_string(), true), (" too".to_string(), true)]);
    // Escaped text is unescaped into its own string; null and missing choices are none.
    let escaped = chunk(r#"{"choices":[{"index":0,"delta":{"content":"a\nb"}}]}"#);
    let mut texts = Vec::new();
    assert!(acc.apply(escaped, &mut |d| texts.push(d.into_owned()), &mut streamed).is_ok());
    assert_eq!(texts, [Delta::Text("a\nb".into())]);
    for empty in [r#"{"choices":null}"#, r#"{}"#, r#"{"choices":[]}"#] {
        let mut any = false;
        assert!(acc.apply(chunk(empty), &mut |_| any = true, &mut streamed).is_ok());
        assert!(!any, "{empty}");
    }
    assert_eq!(acc.finish().text, "mine tooa\nb");
}

#[test]
fn a_stream_reads_the_same_with_learned_shapes() {
    let chunk = |delta: &str, finish: &str| {
        format!(
            r#"{{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{delta},"finish_reason":{finish}}}]}}"#
        )
    };
    let events = [
        chunk(r#"{"role":"assistant","content":""}"#, "null"),
        chunk(r#"{"reasoning_content":"think "}"#, "null"),
        chunk(r#"{"reasoning_content":"more"}"#, "null"),
        chunk(r#"{"content":"Hel"}"#, "null"),
        chunk(r#"{"content":"lo \"x\"\n"}"#, "null"),
        chunk(r#"{"content":""}"#, "null"),
        chunk(r#"{"reasoning_content":"late"}"#, "null"),
        chunk(r#"{"content":"!"}"#, "null"),
        chunk(
            r#"{"tool_calls":[{"index":0,"id":"t1","function":{"name":"glob","arguments":"{}"}}]}"#,
            "null",
        ),
        chunk(r#"{"content":"end"}"#, r#""tool_calls""#),
        r#"{"id":"c","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":6}}"#.to_string(),
    ];
    let mut acc = Accumulator::default();
    let mut deltas = Vec::new();
    let mut streamed = false;
    for event in &events {
        let flow = acc.event(event, &mut |d| deltas.push(d.into_owned()), &mut streamed);
        assert!(matches!(flow, Ok(Flow::More)), "{event}");
    }
    assert_eq!(acc.shapes.len(), 2, "a shape for text and one for reasoning");
    assert_eq!(
        deltas,
        [
            Delta::Thought("think ".into()),
            Delta::Thought("more".into()),
            Delta::Text("Hel".into()),
            Delta::Text("lo \"x\"\n".into()),
            Delta::Thought("late".into()),
            Delta::Text("!".into()),
            Delta::Text("end".into()),
        ]
    );
    let done = acc.finish();
    assert_eq!(done.text, "Hello \"x\"\n!end");
    assert_eq!(done.thinking, "think morelate");
    assert_eq!(done.finish, Finish::ToolCalls);
    assert_eq!(done.tool_calls.len(), 1);
    assert_eq!(done.usage, Some(Usage { input: 5, output: 6, ..Usage::default() }));
}
