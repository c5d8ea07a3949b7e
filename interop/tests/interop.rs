//! The official Rust ACP client (`agent-client-protocol-http` 5, feature `client`) drives
//! the real binary over `http://` (POST + SSE, a session's stream opened before its load)
//! and over `ws://`: initialize, new, a streamed prompt, a permission answered, cancel,
//! list, close, load, and the two errors that used to kill the client's whole connection:
//! `session/load` of an unknown session and of one held by another connection (a second
//! official client, which keeps it while the first tries).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../tests/support/fake_llm/mod.rs"]
#[allow(dead_code, unused_imports)]
mod fake_llm;
#[path = "../../tests/support/workspace.rs"]
#[allow(dead_code)]
mod workspace;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, CloseSessionRequest, ContentBlock, InitializeRequest, ListSessionsRequest,
    LoadSessionRequest, NewSessionRequest, PermissionOptionKind, PromptRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionId, SessionNotification, SessionUpdate, StopReason,
    TextContent,
};
use agent_client_protocol::{Agent, Client};
use agent_client_protocol_http::HttpClient;
use serde_json::json;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio::sync::oneshot;

use fake_llm::{Event as LlmEvent, FakeLlm, Reply, text_reply, tool_reply};
use workspace::Workspace;

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

/// The binary under test: IAC_CODE_BIN, else the debug build of the crate above (a target
/// directory shared with this crate's, as `CARGO_TARGET_DIR` makes it).
fn binary() -> PathBuf {
    if let Some(path) = std::env::var_os("IAC_CODE_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("test path");
    let guess = exe.parent().and_then(|deps| deps.parent()).map(|d| d.join("iac-code"));
    match guess {
        Some(path) if path.exists() => path,
        _ => panic!("no iac-code binary: build it (cargo build) and set IAC_CODE_BIN to it"),
    }
}

/// `iac-code acp --transport http --port 0` in the workspace, with the fake LLM.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn spawn(ws: &Workspace, llm: &FakeLlm) -> Server {
        let mut command = Command::new(binary());
        command.current_dir(ws.project()).env_clear();
        if let Some(path) = std::env::var_os("PATH") {
            command.env("PATH", path);
        }
        let mut child = command
            .env("HOME", ws.root())
            .env("IAC_CODE_CONFIG_DIR", ws.config())
            .env("IAC_CODE_PROVIDER", "openai_compatible")
            .env("IAC_CODE_BASE_URL", llm.base_url())
            .env("IAC_CODE_API_KEY", "sk-test")
            .env("IAC_CODE_MODEL", "fake-model")
            .args(["acp", "--transport", "http", "--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn iac-code");
        let mut line = String::new();
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        stdout.read_line(&mut line).expect("the address");
        let url = line.trim().strip_prefix("iac-code listening on ").expect("listening");
        let addr = url.trim_start_matches("http://").trim_end_matches("/acp").to_string();
        Server { child, addr }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn transport(url: &str) -> HttpClient {
    HttpClient::builder(url).configure_http(|http| http.no_proxy()).build().expect("client")
}

/// A second official client that opens a session and keeps it until `release`.
async fn hold_a_session(
    url: String,
    cwd: PathBuf,
    held: oneshot::Sender<SessionId>,
    release: oneshot::Receiver<()>,
) -> Result<(), agent_client_protocol::Error> {
    Client
        .v1()
        .on_receive_notification(
            async move |_: SessionNotification, _cx| Ok(()),
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(transport(&url), async move |agent: ConnectionTo<Agent>| {
            agent.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
            let new = agent.send_request(NewSessionRequest::new(cwd)).block_task().await?;
            let _ = held.send(new.session_id);
            let _ = release.await;
            Ok(())
        })
        .await
}

fn drive(scheme: &str) {
    let ws = Workspace::new(&format!("interop-{scheme}"));
    let llm = FakeLlm::start(vec![
        text_reply("Hello from the agent"),
        tool_reply("w1", "write_file", json!({"path": "main.tf", "content": "terraform {}\n"})),
        text_reply("written"),
        Reply::Hang(vec![LlmEvent::Text("thinking".into())]),
    ]);
    let server = Server::spawn(&ws, &llm);
    let url = format!("{scheme}://{}", server.addr);
    let project = ws.project();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (held_tx, held_rx) = oneshot::channel();
    let (release_tx, release_rx) = oneshot::channel();
    let holder = hold_a_session(url.clone(), project.clone(), held_tx, release_rx);
    let main = async move {
        let held = held_rx.await.expect("the other client holds a session");
        let (tx, mut updates) = unbounded_channel::<SessionNotification>();
        let outcome = Client
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
            .connect_with(transport(&url), async move |agent: ConnectionTo<Agent>| {
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
                let load = LoadSessionRequest::new(unknown, project.clone());
                let error = agent.send_request(load).block_task().await.expect_err("unknown");
                assert_eq!(i32::from(error.code), -32602, "{error:?}");
                let load = LoadSessionRequest::new(held, project.clone());
                let error = agent.send_request(load).block_task().await.expect_err("held");
                assert_eq!(i32::from(error.code), -32001, "{error:?}");
                let list = agent.send_request(ListSessionsRequest::new()).block_task().await?;
                assert!(list.sessions.iter().any(|s| s.session_id == session), "still alive");
                Ok(())
            })
            .await;
        let _ = release_tx.send(());
        outcome
    };
    let (held, outcome) = runtime.block_on(async { tokio::join!(holder, main) });
    outcome.expect("the client's connection survived every step");
    held.expect("the other client kept its connection");
    assert_eq!(ws.read("main.tf"), "terraform {}\n");
    assert!(llm.wait_hang_dropped(Duration::from_secs(20)), "cancel dropped the LLM request");
}
