//! The client's state machine over a real in-memory connection, with the agent's side
//! played by the test: what the client sends, and what it does with the answers.

use serde_json::{Value, json};

use super::App;
use crate::jsonrpc::{Message, memory};
use crate::tui::Options;
use crate::tui::input::History;
use crate::tui::rpc::Rpc;

/// A client with a session `s`, and the agent's end of its connection.
fn client() -> (App, memory::Server) {
    let (client, server) = memory::memory();
    let mut app = App::new(Options::default(), Rpc::new(client), History::open(None));
    app.session = Some("s".into());
    (app, server)
}

/// The next request the client sent: its id, method and params.
fn sent(server: &memory::Server) -> (Value, String, Value) {
    match server.inbox.try_recv() {
        Ok(Ok(Message::Request(r))) => {
            (serde_json::to_value(&r.id).expect("an id"), r.method, r.params)
        }
        other => panic!("expected a request from the client, got {other:?}"),
    }
}

fn answer(app: &mut App, id: &Value, result: Value) {
    app.frame(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
}

fn echoes(app: &App, text: &str) -> usize {
    app.out.iter().filter(|l| l.spans.iter().any(|s| s.content == text)).count()
}

#[test]
fn a_steering_message_the_ended_turn_did_not_take_becomes_one_prompt_echoed_once() {
    let (mut app, server) = client();
    app.prompt("first");
    let (prompt_id, method, _) = sent(&server);
    assert_eq!(method, "session/prompt");
    app.queued.push("second".into());
    app.steer();
    let (steer_id, method, params) = sent(&server);
    assert_eq!(method, "_session/steering");
    // Never a turn started behind the client's back.
    assert_eq!(params["_meta"]["steering"]["idleBehavior"], "promptRequired");
    // The turn ends before the steering message is answered.
    answer(&mut app, &prompt_id, json!({"stopReason": "end_turn"}));
    assert!(!app.turn);
    answer(&mut app, &steer_id, json!({"outcome": "promptRequired"}));
    let (_, method, params) = sent(&server);
    assert_eq!(method, "session/prompt");
    assert_eq!(params["prompt"][0]["text"], "second");
    assert!(app.turn, "the client follows the turn it started");
    assert_eq!(echoes(&app, "second"), 1);
}

#[test]
fn a_steering_message_refused_while_the_turn_still_runs_waits_first_in_the_queue() {
    let (mut app, server) = client();
    app.prompt("first");
    let (prompt_id, ..) = sent(&server);
    app.queued.push("second".into());
    app.steer();
    let (steer_id, ..) = sent(&server);
    app.queued.push("third".into());
    answer(&mut app, &steer_id, json!({"outcome": "failed", "reason": "finishing"}));
    assert!(server.inbox.try_recv().is_err(), "nothing is sent while the turn runs");
    assert_eq!(app.queued, ["second", "third"]);
    answer(&mut app, &prompt_id, json!({"stopReason": "end_turn"}));
    let (_, method, params) = sent(&server);
    assert_eq!(method, "session/prompt");
    assert_eq!(params["prompt"][0]["text"], "second");
}

#[test]
fn a_steering_error_keeps_the_turn_running_and_the_message() {
    let (mut app, server) = client();
    app.prompt("first");
    let _ = sent(&server);
    app.queued.push("second".into());
    app.steer();
    let (steer_id, ..) = sent(&server);
    let error = json!({"code": -32603, "message": "boom"});
    app.frame(&json!({"jsonrpc": "2.0", "id": steer_id, "error": error}));
    assert!(app.turn, "the prompt still runs");
    assert_eq!(app.queued, ["second"]);
}
