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
        Record::User { id: None, text: "plan".into(), images: Vec::new() },
        Record::Assistant {
            id: None,
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
        Record::User { id: None, text: "again".into(), images: Vec::new() },
        Record::Assistant {
            id: None,
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
        let line = Line { v: VERSION, ts: "t".into(), seal: None, record: record.clone() };
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

#[test]
fn a_mode_that_widens_counts_only_with_this_nodes_seal_for_its_place() {
    let dir = std::env::temp_dir().join(format!("iac-record-seal-{}", std::process::id()));
    let seal = Arc::new(Seal::new(&dir));
    let (id, other) = (SessionId::random(), SessionId::random());
    let mode = |m: &str| Record::Mode { mode: m.into() };
    let sealed = |m: &str, at: u64| Line::encode(&mode(m), &id, at, &seal).expect("encoded");
    let unsealed = |m: &str| Line::encode(&mode(m), &id, 0, &Seal::none()).expect("encoded");
    let read = |lines: &[Vec<u8>], trust: Rebuilt| {
        let mut rebuilt = trust;
        for line in lines {
            rebuilt.apply_line(line, &"test");
        }
        rebuilt.mode
    };
    let mine = || Rebuilt::trusting(&seal, &id);
    let bypass = "bypass_permissions";
    assert_eq!(read(&[sealed(bypass, 0)], mine()).as_deref(), Some(bypass));
    assert_eq!(read(&[unsealed(bypass)], mine()), None, "no seal");
    assert_eq!(read(&[sealed(bypass, 0)], Rebuilt::default()), None, "nobody's seal counts");
    assert_eq!(read(&[sealed(bypass, 0)], Rebuilt::trusting(&seal, &other)), None, "copied");
    let moved = [sealed("plan", 0), sealed(bypass, 0)];
    assert_eq!(read(&moved, mine()).as_deref(), Some("plan"), "replayed at another place");
    let lowered = [sealed(bypass, 0), unsealed("default")];
    assert_eq!(read(&lowered, mine()).as_deref(), Some("default"), "narrowing needs no seal");
    let forged = [sealed("plan", 0), unsealed("accept_edits")];
    assert_eq!(read(&forged, mine()).as_deref(), Some("plan"), "history only");
    // A reader's checks: one record per line, known types, a format it reads.
    assert!(Line::read(br#"{"v":1,"ts":"t","type":"clear"}"#).is_ok());
    for bad in [
        &br#"{"v":1,"ts":"t","type":"clear"}
{"v":1,"ts":"t","type":"clear"}"#[..],
        br#"{"v":1,"ts":"t","type":"shell","command":"x"}"#,
        br#"{"type":"mode","mode":"bypass_permissions"}"#,
        br#"{"v":9,"ts":"t","type":"clear"}"#,
        b"[]",
    ] {
        assert!(Line::read(bad).is_err(), "{}", String::from_utf8_lossy(bad));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn message_ids_are_kept_and_a_record_without_one_gets_its_place() {
    let user = |id: Option<&str>| Record::User {
        id: id.map(str::to_string),
        text: "hi".into(),
        images: Vec::new(),
    };
    let mut rebuilt = Rebuilt::default();
    rebuilt.apply(&user(None));
    rebuilt.apply(&user(Some("6a1c0e8e-0000-4000-8000-000000000042")));
    rebuilt.apply(&Record::Directories { dirs: vec!["/srv/shared".into()] });
    assert_eq!(rebuilt.ids, [super::message_id(0), "6a1c0e8e-0000-4000-8000-000000000042".into()]);
    assert_eq!(rebuilt.directories, Some(vec!["/srv/shared".to_string()]));
    let again = Record::of(&rebuilt.all[0]).with_id("x".into());
    assert_eq!(again, user(Some("x")));
    let line = serde_json::to_string(&user(Some("x"))).unwrap_or_default();
    assert!(line.contains(r#""id":"x""#), "{line}");
    assert!(!serde_json::to_string(&user(None)).unwrap_or_default().contains("\"id\""));
}

#[test]
fn a_usage_record_reads_back_as_the_usage_it_was_made_of() {
    let price = crate::config::pricing::Price::FREE;
    let usage =
        crate::provider::Usage { input: 9, output: 4, cached_read: 5, cached_write: 2, thought: 1 };
    for price in [Some(price), None] {
        let call = TurnUsage::of_call(&usage, false, price);
        let line = serde_json::to_string(&UsageRecord::of(&call)).unwrap_or_default();
        let back = serde_json::from_str::<UsageRecord>(&line).ok();
        assert_eq!(back.map(|back| back.read()), Some(call), "{line}");
    }
}
