//! The official Rust ACP client (`agent-client-protocol-http` 5, feature `client`) drives
//! the real binary over `http://` (POST + SSE, a session's stream opened before its load)
//! and over `ws://`: initialize, new, a streamed prompt, a permission answered, cancel,
//! list, close, load, and the two errors that used to kill the client's whole connection:
//! `session/load` of an unknown session and of one held by another connection.

use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, CloseSessionRequest, ContentBlock, InitializeRequest, ListSessionsRequest,
    LoadSessionRequest, NewSessionRequest, PermissionOptionKind, PromptRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionNotification, SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::{Agent, Client};
use agent_client_protocol_http::HttpClient;
use serde_json::json;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use crate::support::fake_llm::{Event as LlmEvent, FakeLlm, Reply, text_reply, tool_reply};
use crate::support::http_client::HttpServer;
use crate::support::workspace::Workspace;

const WAIT: Duration = Duration::from_secs(30);

#[test]
fn the_official_client_over_http() {
    drive("http");
}

#[test]
fn the_official_client_over_websocket() {
    drive("ws");
}

/// The text of the agent message chunks received until one contains `last`.
async fn text_until(updates: &mut UnboundedReceiver<SessionNotification>, last: &str) -> String {
    let mut text = String::new();
    while !text.contains(last) {
        let note = tokio::time::timeout(WAIT, updates.recv()).await.ok().flatten();
        let note = note.unwrap_or_else(|| panic!("no update with {last:?}; got {text:?}"));
        if let SessionUpdate::AgentMessageChunk(chunk) = note.update
            && let ContentBlock::Text(piece) = chunk.content
        {
            text.push_str(&piece.text);
        }
    }
    text
}

fn drive(scheme: &str) {
    let ws = Workspace::new(&format!("interop-{scheme}"));
    let llm = FakeLlm::start(vec![
        text_reply("Hello from the agent"),
        tool_reply("w1", "write_file", json!({"path": "main.tf", "content": "terraform {}\n"})),
        text_reply("written"),
        Reply::Hang(vec![LlmEvent::Text("thinking".into())]),
    ]);
    let server = HttpServer::spawn(&ws, Some(&llm), &[], &[]);
    // A session held by another connection (raw HTTP, kept open to the end).
    let other = server.initialize();
    let held = {
        let sse = server.stream(&other, None, None);
        let new = json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": ws.project(), "mcpServers": []}});
        assert_eq!(server.post(Some(&other), &new).status, 202);
        let answer = sse.until(|e| e.data["id"] == 1);
        answer.last().unwrap().data["result"]["sessionId"].as_str().unwrap().to_string()
    };
    let url = format!("{scheme}://{}", server.addr);
    let project = ws.project();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let outcome = runtime.block_on(async move {
        let transport = HttpClient::builder(&url)
            .configure_http(|http| http.no_proxy())
            .build()
            .expect("client");
        let (tx, mut updates) = unbounded_channel::<SessionNotification>();
        Client
            .v1()
            .on_receive_notification(
                async move |note: SessionNotification, _cx| {
                    let _ = tx.send(note);
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .on_receive_request(
                async move |asked: RequestPermissionRequest, responder, _cx| {
                    let once =
                        asked.options.iter().find(|o| o.kind == PermissionOptionKind::AllowOnce);
                    let id = once.expect("an allow_once option").option_id.clone();
                    let chosen = SelectedPermissionOutcome::new(id);
                    responder.respond(RequestPermissionResponse::new(
                        RequestPermissionOutcome::Selected(chosen),
                    ))
                },
                agent_client_protocol::on_receive_request!(),
            )
            .connect_with(transport, async move |agent: ConnectionTo<Agent>| {
                let init = agent.send_request(InitializeRequest::new(ProtocolVersion::V1));
                let init = init.block_task().await?;
                assert_eq!(init.protocol_version, ProtocolVersion::V1);
                let new = agent.send_request(NewSessionRequest::new(project.clone()));
                let session = new.block_task().await?.session_id;
                let ask = |text: &str| {
                    let block = ContentBlock::Text(TextContent::new(text.to_string()));
                    PromptRequest::new(session.clone(), vec![block])
                };

                let answer = agent.send_request(ask("hello")).block_task().await?;
                assert_eq!(answer.stop_reason, StopReason::EndTurn);
                let text = text_until(&mut updates, "agent").await;
                assert_eq!(text, "Hello from the agent");

                let answer = agent.send_request(ask("write it")).block_task().await?;
                assert_eq!(answer.stop_reason, StopReason::EndTurn, "the permission answered");

                let running = agent.send_request(ask("think"));
                text_until(&mut updates, "thinking").await;
                agent.send_notification(CancelNotification::new(session.clone()))?;
                let answer = running.block_task().await?;
                assert_eq!(answer.stop_reason, StopReason::Cancelled);

                let list = agent.send_request(ListSessionsRequest::new()).block_task().await?;
                assert!(list.sessions.iter().any(|s| s.session_id == session), "listed");
                agent.send_request(CloseSessionRequest::new(session.clone())).block_task().await?;
                let load = LoadSessionRequest::new(session.clone(), project.clone());
                agent.send_request(load).block_task().await?;

                // The two errors: each answers its request, and the connection lives on.
                let unknown = "00000000-0000-4000-8000-00000000dead";
                let load = LoadSessionRequest::new(unknown.to_string(), project.clone());
                let error = agent.send_request(load).block_task().await.expect_err("unknown");
                assert_eq!(i32::from(error.code), -32602, "{error:?}");
                let load = LoadSessionRequest::new(held.clone(), project.clone());
                let error = agent.send_request(load).block_task().await.expect_err("held");
                assert_eq!(i32::from(error.code), -32001, "{error:?}");
                let list = agent.send_request(ListSessionsRequest::new()).block_task().await?;
                assert!(list.sessions.iter().any(|s| s.session_id == session), "still alive");
                Ok(())
            })
            .await
    });
    outcome.expect("the client's connection survived every step");
    assert_eq!(ws.read("main.tf"), "terraform {}\n");
    assert!(llm.wait_hang_dropped(Duration::from_secs(20)), "cancel dropped the LLM request");
}
