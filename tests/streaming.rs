//! Bursts of streamed pieces: however the server batches them on their way out, the client
//! sees one schema-valid `session/update` per piece, in order, text and thoughts apart, with
//! every character as the model sent it (over both wire APIs).

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, updates};
use crate::support::fake_llm::{Event, FakeLlm, Reply};
use crate::support::workspace::Workspace;

/// Pieces that stress the encoding: quotes, backslashes, control characters, non-ASCII,
/// newlines, JSON-looking text and the text of an update itself.
fn piece(i: usize) -> String {
    match i % 7 {
        0 => format!("plain {i} "),
        1 => format!("\"quoted\\{i}\"\n"),
        2 => format!("tab\tbell\u{7}nul-free \u{1}{i}\u{1f}"),
        3 => format!("ñandú €{i} 🦀 "),
        4 => format!("{{\"sessionUpdate\":\"agent_message_chunk\",\"n\":{i}}}"),
        5 => format!("\u{1}iac-code:hole\u{1} {i}"),
        _ => format!("</script>\r\n{i}"),
    }
}

/// The script: `n` pieces, every fifth one reasoning, then the end of the reply.
fn burst(n: usize) -> (Vec<(String, String)>, Reply) {
    let mut expected = Vec::new();
    let mut events = Vec::new();
    for i in 0..n {
        let text = piece(i);
        if i % 5 == 4 {
            expected.push(("agent_thought_chunk".to_string(), text.clone()));
            events.push(Event::Reasoning(text));
        } else {
            expected.push(("agent_message_chunk".to_string(), text.clone()));
            events.push(Event::Text(text));
        }
    }
    events.extend([Event::Finish("stop"), Event::Usage { prompt: 3, completion: 4 }, Event::Done]);
    (expected, Reply::Stream(events))
}

fn pieces_seen(msgs: &[Value]) -> Vec<(String, String)> {
    updates(msgs)
        .iter()
        .filter(|u| {
            matches!(
                u["sessionUpdate"].as_str(),
                Some("agent_message_chunk" | "agent_thought_chunk")
            )
        })
        .map(|u| {
            let kind = u["sessionUpdate"].as_str().unwrap_or_default().to_string();
            (kind, u["content"]["text"].as_str().unwrap_or_default().to_string())
        })
        .collect()
}

fn check_burst(name: &str, provider: &[(&str, &str)]) {
    let ws = Workspace::new(name);
    let (expected, reply) = burst(3_000);
    let llm = FakeLlm::start(vec![reply]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, provider);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    let (msgs, response) = acp.prompt(&session, "go");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let seen = pieces_seen(&msgs);
    assert_eq!(seen.len(), expected.len(), "one update per piece");
    for (i, (got, want)) in seen.iter().zip(&expected).enumerate() {
        assert_eq!(got, want, "piece {i}");
    }
    for msg in &msgs {
        assert_eq!(msg["params"]["sessionId"], session.as_str());
    }
    // What the client saw is what was kept: the journal has the whole reply.
    let text: String = expected
        .iter()
        .filter(|(k, _)| k == "agent_message_chunk")
        .map(|(_, t)| t.as_str())
        .collect();
    drop(acp);
    let mut second = AcpProcess::spawn_with_llm(&ws, &llm, provider);
    second.initialize();
    let (replayed, response) = second.open_session("session/load", &session, &ws.project());
    assert!(response.get("result").is_some(), "{response}");
    let replayed_text: String = updates(&replayed)
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert_eq!(replayed_text, text);
}

#[test]
fn a_burst_of_openai_pieces_arrives_whole_and_in_order() {
    check_burst("burst-openai", &[]);
}

#[test]
fn a_burst_of_anthropic_pieces_arrives_whole_and_in_order() {
    check_burst("burst-anthropic", &[("IAC_CODE_PROVIDER", "anthropic_compatible")]);
}

/// A piece already received is passed on even when the same read brought half of the next
/// event, whose rest may take long (here: never comes).
#[test]
fn a_piece_is_not_held_back_by_half_of_the_next_event() {
    let ws = Workspace::new("half-event");
    let half = r#"data: {"choices":[{"index":0,"delta":{"content":"sec"#.to_string();
    let llm =
        FakeLlm::start(vec![Reply::Hang(vec![Event::Text("first".into()), Event::Raw(half)])]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    let id = acp.start_prompt(&session, "go");
    loop {
        let msg = acp.recv();
        assert_ne!(msg.get("id"), Some(&id), "the turn ended before the piece came: {msg}");
        if msg["params"]["update"]["content"]["text"] == "first" {
            break;
        }
    }
    acp.notify("session/cancel", json!({"sessionId": session}));
    let (_, response) = acp.until_response(&id);
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
}

#[test]
fn paced_replies_of_the_fake_llm_arrive_whole_in_order_and_paced() {
    // The load benches' fake LLM: one pacer thread writes every paced stream.
    let ws = Workspace::new("paced");
    let (chunks, every_ms) = (20usize, 3u64);
    let llm = FakeLlm::start(vec![Reply::Paced { chunks, every_ms }; 2]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    for _ in 0..2 {
        let session = acp.new_session(&ws.project());
        let started = std::time::Instant::now();
        let (msgs, response) = acp.prompt(&session, "go");
        assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
        let stamps: Vec<u128> = updates(&msgs)
            .iter()
            .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
            .map(|u| {
                u["content"]["text"].as_str().unwrap().strip_prefix("t=").unwrap().parse().unwrap()
            })
            .collect();
        assert_eq!(stamps.len(), chunks);
        assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "in order: {stamps:?}");
        let paced = std::time::Duration::from_millis((chunks as u64 - 1) * every_ms);
        assert!(started.elapsed() >= paced, "{:?} for {chunks} pieces", started.elapsed());
    }
}
