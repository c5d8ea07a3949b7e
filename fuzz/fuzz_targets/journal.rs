//! The journal reader (file store; the Redis store reads each entry the same way): any
//! bytes, a corrupted or truncated journal included, rebuild a session without panicking;
//! a torn last line is ignored; and once mended and repaired, the context the model sees
//! is well formed: every tool result answers a call of the assistant message before it,
//! and every call has its result.
//!
//! Input: the journal's bytes.

#![no_main]

use iac_code::history::ChatMessage;
use iac_code::session::record::Rebuilt;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let rebuilt = Rebuilt::from_journal(data, &"journal.jsonl");
    let mut torn = data.to_vec();
    torn.extend_from_slice(b"{\"v\":1,\"ts\":\"\",\"type\":\"clear\"}");
    let with_torn_line = Rebuilt::from_journal(&torn, &"journal.jsonl");
    assert_eq!((&rebuilt.all, &rebuilt.context), (&with_torn_line.all, &with_torn_line.context));

    let mut context = rebuilt.context.clone();
    for repair in rebuilt.repairs() {
        let mut again = Rebuilt::default();
        again.apply(&repair);
        context.extend(again.all);
    }
    // The calls of the last assistant message, and whether each has its result yet (a
    // model may repeat an id: one result answers them all).
    let mut open: Option<Vec<(String, bool)>> = None;
    for message in &context {
        match message {
            ChatMessage::ToolResult { call_id, .. } => {
                let calls = open.as_mut().expect("a tool result after its call");
                let mut found = false;
                for (_, answered) in calls.iter_mut().filter(|(id, _)| id == call_id) {
                    (*answered, found) = (true, true);
                }
                assert!(found, "a tool result answers a call of its message: {call_id}");
            }
            ChatMessage::User { .. } | ChatMessage::Assistant { .. } => {
                check_answered(&open);
                open = match message {
                    ChatMessage::Assistant { tool_calls, .. } => {
                        Some(tool_calls.iter().map(|c| (c.id.clone(), false)).collect())
                    }
                    _ => None,
                };
            }
        }
    }
    check_answered(&open);
});

fn check_answered(open: &Option<Vec<(String, bool)>>) {
    let left: Vec<&String> =
        open.iter().flatten().filter(|(_, answered)| !answered).map(|(id, _)| id).collect();
    assert!(left.is_empty(), "calls left without a result: {left:?}");
}
