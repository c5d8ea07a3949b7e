//! Tests of journal records: round trips, rebuilding a context, and repairs.

use super::*;
use crate::history::fixtures::{calls, result, user};

#[test]
fn damage_is_mended() {
    let mut rebuilt = Rebuilt {
        context: vec![
            user("u"),
            calls(&["a"]),
            user("lost the result of a"),
            result("zz", "ok"),
            calls(&["b"]),
            result("b", "ok"),
        ],
        ..Rebuilt::default()
    };
    rebuilt.mend();
    assert_eq!(rebuilt.context.len(), 6);
    assert!(
        matches!(&rebuilt.context[2], ChatMessage::ToolResult { call_id, is_error: true, .. } if call_id == "a")
    );
    assert!(
        matches!(&rebuilt.context[5], ChatMessage::ToolResult { call_id, .. } if call_id == "b")
    );
}

#[test]
fn records_round_trip_and_rebuild() {
    let records = vec![
        Record::Start { cwd: "/p".into(), created_at: "t".into(), forked_from: None },
        Record::User { text: "plan".into(), images: Vec::new() },
        Record::Assistant {
            text: "reading".into(),
            thinking: String::new(),
            signed: Vec::new(),
            tool_calls: vec![CallRecord {
                id: "c1".into(),
                name: "read_file".into(),
                arguments: "{}".into(),
            }],
        },
        Record::ToolResult {
            call_id: "c1".into(),
            content: "x".into(),
            is_error: false,
            images: Vec::new(),
        },
        Record::Compact { summary: "S".into(), keep: 0, before: 10, after: 2 },
        Record::Title { title: "T".into() },
        Record::User { text: "again".into(), images: Vec::new() },
        Record::Assistant {
            text: String::new(),
            thinking: "t".into(),
            signed: Vec::new(),
            tool_calls: vec![CallRecord {
                id: "c2".into(),
                name: "bash".into(),
                arguments: "{}".into(),
            }],
        },
    ];
    let mut rebuilt = Rebuilt::default();
    for record in &records {
        let line = Line { v: VERSION, ts: "t".into(), record: record.clone() };
        let text = serde_json::to_string(&line).expect("ok");
        let back: Line = serde_json::from_str(&text).expect("ok");
        assert_eq!(&back.record, record, "{text}");
        rebuilt.apply(&back.record);
    }
    assert_eq!(rebuilt.all.len(), 5);
    assert_eq!(rebuilt.context.len(), 3, "summary, user, assistant");
    assert_eq!(rebuilt.context[0], user("S"));
    assert_eq!(rebuilt.title.as_deref(), Some("T"));
    let repairs = rebuilt.repairs();
    assert_eq!(
        repairs,
        [Record::ToolResult {
            call_id: "c2".into(),
            content: INTERRUPTED.into(),
            is_error: true,
            images: Vec::new(),
        }]
    );
}
