//! Signing in: `iac-code login` driven through a real pseudo-terminal (the key typed with
//! echo off, tested with a one-token request to the fake LLM, stored 0600), the scripted
//! form, a refused key storing nothing, `logout`; and ACP's side: `authMethods`,
//! `authenticate`, `logout` (over HTTP only with `--allow-remote-logout`), and what a client
//! without a provider is told.

use std::os::unix::fs::PermissionsExt;
use std::process::Output;

use serde_json::{Value, json};

use crate::support::acp_client::AcpProcess;
use crate::support::command::{iac_code, run_with_input};
use crate::support::fake_llm::{FakeLlm, Reply, text_reply};
use crate::support::http_client::HttpServer;
use crate::support::pty::Pty;
use crate::support::workspace::Workspace;
use crate::support::ws_client;

fn settings(ws: &Workspace) -> Value {
    let text = std::fs::read_to_string(ws.config().join("settings.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn mode(ws: &Workspace) -> u32 {
    std::fs::metadata(ws.config().join("settings.json")).unwrap().permissions().mode() & 0o777
}

fn run(ws: &Workspace, args: &[&str], stdin: &str) -> Output {
    run_with_input(iac_code(ws).args(args), stdin)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The one output token the test request asks for, whichever field the API spells it in.
fn one_token(body: &Value) -> bool {
    body["max_tokens"] == 1 || body["max_completion_tokens"] == 1
}

#[test]
fn login_in_a_terminal_tests_the_key_stores_it_0600_and_never_shows_it() {
    let ws = Workspace::new("login-pty");
    let llm = FakeLlm::start(vec![text_reply("OK")]);
    let mut command = iac_code(&ws);
    command.arg("login").env("TERM", "dumb");
    let mut pty = Pty::spawn(command);
    pty.expect("Provider presets:");
    pty.expect("anthropic_compatible");
    pty.expect("Preset (1-11 or a name): ");
    pty.send("nonsense\n");
    pty.expect("no preset has that name");
    pty.send("openai\n");
    pty.expect("Base URL [https://api.openai.com/v1]: ");
    pty.send(&format!("{}\n", llm.base_url()));
    pty.expect("Model [gpt-4.1]: ");
    pty.send("\n");
    pty.expect("API key (not shown): ");
    // A typo erased with Backspace, as in any terminal.
    pty.send("sk-pty-secret-4242X\x7f\n");
    let (status, shown, echo) = pty.wait_with_echo();
    assert_eq!(status.code(), Some(0), "{shown}");
    assert!(echo, "the terminal was left without echo");
    assert!(shown.contains("the provider answered"), "{shown}");
    assert!(shown.contains("signed in: openai at"), "{shown}");
    assert!(!shown.contains("sk-pty-secret"), "the key was shown:\n{shown}");
    // Echo is back on after the key: the line discipline echoed the earlier answers.
    assert!(shown.contains(&llm.base_url()), "{shown}");

    let requests = llm.requests();
    assert_eq!(requests.len(), 1, "one test request");
    assert!(one_token(&requests[0].body), "{}", requests[0].body);
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-pty-secret-4242"));
    let stored = settings(&ws);
    assert_eq!(stored["provider"], "openai");
    assert_eq!(stored["providers"]["openai"]["apiKey"], "sk-pty-secret-4242");
    assert_eq!(stored["providers"]["openai"]["baseUrl"], llm.base_url());
    assert_eq!(stored["providers"]["openai"]["model"], "gpt-4.1");
    assert_eq!(mode(&ws), 0o600);
}

#[test]
fn ctrl_c_at_the_key_prompt_stores_nothing_and_restores_the_terminal() {
    let ws = Workspace::new("login-pty-cancel");
    let mut command = iac_code(&ws);
    command.args(["login", "--preset", "deepseek"]);
    let mut pty = Pty::spawn(command);
    pty.expect("Base URL [https://api.deepseek.com/v1]: ");
    pty.send("\n");
    pty.expect("Model [deepseek-chat]: ");
    pty.send("\n");
    pty.expect("API key (not shown): ");
    pty.send("sk-half\x03");
    let (status, shown, echo) = pty.wait_with_echo();
    assert_eq!(status.code(), Some(130), "{shown}");
    assert!(echo, "the terminal was left without echo");
    assert!(shown.contains("login cancelled; nothing was saved"), "{shown}");
    assert!(!shown.contains("sk-half"), "{shown}");
    assert!(!ws.config().join("settings.json").exists());
}

#[test]
fn a_scripted_login_reads_the_key_from_stdin_and_keeps_other_settings() {
    let ws = Workspace::new("login-script");
    let llm = FakeLlm::start(vec![text_reply("OK")]);
    let before = json!({"webFetch": "ask", "permissions": {"allow": ["read_file"]},
                        "providers": {"vllm": {"maxTokens": 4096}}});
    std::fs::write(ws.config().join("settings.json"), before.to_string()).unwrap();
    let url = llm.base_url();
    let args = [
        "login",
        "--preset",
        "vllm",
        "--base-url",
        &url,
        "--model",
        "fake-model",
        "--api-key-stdin",
    ];
    let out = run(&ws, &args, "sk-script-7\n");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("signed in: vllm at"), "{}", text(&out.stdout));
    assert!(!text(&out.stdout).contains("sk-script-7"));
    assert_eq!(llm.requests().len(), 1);
    assert_eq!(llm.requests()[0].body["model"], "fake-model");
    let stored = settings(&ws);
    assert_eq!(
        stored,
        json!({"webFetch": "ask", "permissions": {"allow": ["read_file"]}, "provider": "vllm",
               "providers": {"vllm": {"maxTokens": 4096, "baseUrl": url, "model": "fake-model",
                                      "apiKey": "sk-script-7"}}})
    );
    assert_eq!(mode(&ws), 0o600);

    // As an editor's terminal sign-in runs it, untested.
    let args = ["acp", "--login", "--preset", "ollama", "--model", "llama3", "--no-test"];
    let out = run(&ws, &args, "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(llm.requests().len(), 1, "--no-test sends nothing");
    let stored = settings(&ws);
    assert_eq!(stored["provider"], "ollama");
    assert_eq!(stored["providers"]["ollama"]["baseUrl"], "http://127.0.0.1:11434/v1");
    assert!(stored["providers"]["ollama"].get("apiKey").is_none());
}

#[test]
fn a_refused_test_request_stores_nothing_and_exits_1() {
    let ws = Workspace::new("login-refused");
    let refused = r#"{"error":{"message":"invalid api key"}}"#;
    let llm =
        FakeLlm::start(vec![Reply::Status { code: 401, body: refused.into(), retry_after: None }]);
    let url = llm.base_url();
    let args = ["login", "--preset", "openai", "--base-url", &url, "--api-key-stdin"];
    let out = run(&ws, &args, "sk-wrong\n");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("did not accept the test request (auth)"), "{err}");
    assert!(err.contains("nothing was saved"), "{err}");
    assert!(!ws.config().join("settings.json").exists(), "nothing may be stored");
    assert_eq!(llm.requests().len(), 1, "one attempt, no retries");
}

#[test]
fn login_usage_errors_exit_2_with_a_clear_line() {
    let ws = Workspace::new("login-usage");
    for (args, stdin, want) in [
        (&["login"][..], "", "stdin is not a terminal: for scripts pass --preset"),
        (&["login", "--preset", "nope"], "", "unknown preset 'nope'"),
        (&["login", "--preset", "openai"], "", "needs an API key: pass --api-key-stdin"),
        (&["login", "--preset", "vllm", "--api-key-stdin"], "\n", "stdin held no key"),
        (&["login", "--preset", "openai_compatible"], "", "needs --base-url"),
        (
            &["login", "--preset", "vllm", "--base-url", "ftp://x", "--model", "m"],
            "",
            "must start with http",
        ),
        (&["login", "--bogus"], "", "invalid option '--bogus'"),
        (&["logout", "x"], "", "takes no arguments"),
    ] {
        let out = run(&ws, args, stdin);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(want), "{args:?}: {}", text(&out.stderr));
    }
    assert!(!ws.config().join("settings.json").exists());
}

#[test]
fn logout_removes_the_credentials_and_keeps_every_other_setting() {
    let ws = Workspace::new("logout");
    let before = json!({
        "provider": "openai",
        "providers": {"openai": {"apiKey": "sk-1", "baseUrl": "http://127.0.0.1:9/v1",
                                 "model": "gpt-4.1", "maxTokens": 100},
                      "deepseek": {"apiKey": "sk-2"}},
        "hooks": {},
        "webFetch": "ask"
    });
    std::fs::write(ws.config().join("settings.json"), before.to_string()).unwrap();
    let out = run(&ws, &["logout"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("signed out: removed provider"), "{}", text(&out.stdout));
    assert_eq!(
        settings(&ws),
        json!({"providers": {"openai": {"maxTokens": 100}}, "hooks": {}, "webFetch": "ask"})
    );
    assert_eq!(mode(&ws), 0o600);
    let out = run(&ws, &["logout"], "");
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("no stored credentials"), "{}", text(&out.stdout));
}

/// A scripted login of `llm` into `ws`'s settings, untested.
fn signed_in(ws: &Workspace, llm: &FakeLlm) {
    let url = llm.base_url();
    let args = ["login", "--preset", "openai_compatible", "--base-url", &url, "--model", "m"];
    let mut args = args.to_vec();
    args.extend(["--api-key-stdin", "--no-test"]);
    let out = run(ws, &args, "sk-acp\n");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn acp_offers_the_provider_method_and_the_terminal_one_only_when_asked() {
    let ws = Workspace::new("acp-auth-methods");
    let llm = FakeLlm::start(vec![text_reply("OK")]);
    signed_in(&ws, &llm);
    let mut acp = AcpProcess::spawn(&ws, &[]);
    let init = acp.initialize();
    assert_eq!(init["agentCapabilities"]["auth"]["logout"], json!({}));
    let methods = init["authMethods"].as_array().unwrap();
    assert_eq!(methods.len(), 1, "{methods:?}");
    assert_eq!(methods[0]["id"], "iac-code-provider");
    assert!(methods[0].get("type").is_none(), "an agent method has no type");
    let description = methods[0]["description"].as_str().unwrap();
    assert!(description.contains("openai_compatible at http://127.0.0.1"), "{description}");

    let response = acp.call("authenticate", json!({"methodId": "iac-code-provider"}));
    assert_eq!(response["result"], json!({}), "{response}");
    let requests = llm.requests();
    assert_eq!(requests.len(), 1);
    assert!(one_token(&requests[0].body), "{}", requests[0].body);
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-acp"));

    let mut acp = AcpProcess::spawn(&ws, &[]);
    let init = acp.initialize_with(json!({"auth": {"terminal": true}}));
    let methods = init["authMethods"].as_array().unwrap();
    assert_eq!(methods.len(), 2, "{methods:?}");
    assert_eq!(methods[1]["id"], "iac-code-login");
    assert_eq!(methods[1]["type"], "terminal");
    assert_eq!(methods[1]["args"], json!(["--login"]));
    let response = acp.call("authenticate", json!({"methodId": "iac-code-login"}));
    assert_eq!(response["error"]["code"], -32602, "not passed to authenticate: {response}");
}

#[test]
fn acp_without_a_provider_says_exactly_how_to_sign_in() {
    let ws = Workspace::new("acp-unconfigured");
    let mut acp = AcpProcess::spawn(&ws, &[]);
    acp.initialize();
    let response = acp.call("authenticate", json!({"methodId": "iac-code-provider"}));
    assert_eq!(response["error"]["code"], -32000, "{response}");
    assert_eq!(response["error"]["data"]["reason"], "provider_not_configured");
    let message = response["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("iac-code login") && message.contains("IAC_CODE_PROVIDER"),
        "{message}"
    );

    let session = acp.new_session(&ws.project());
    let (_, response) = acp.prompt(&session, "plan the VPC");
    assert_eq!(response["error"]["code"], -32000, "{response}");
    let message = response["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("iac-code login") && message.contains("IAC_CODE_API_KEY"),
        "{message}"
    );
}

#[test]
fn acp_authenticate_reports_a_refused_key() {
    let ws = Workspace::new("acp-auth-refused");
    let body = r#"{"error":{"message":"bad key"}}"#;
    let llm =
        FakeLlm::start(vec![Reply::Status { code: 403, body: body.into(), retry_after: None }]);
    signed_in(&ws, &llm);
    let mut acp = AcpProcess::spawn(&ws, &[]);
    acp.initialize();
    let response = acp.call("authenticate", json!({"methodId": "iac-code-provider"}));
    assert_eq!(response["error"]["code"], -32000, "{response}");
    assert_eq!(response["error"]["data"], json!({"reason": "provider_error", "kind": "auth"}));
    let message = response["error"]["message"].as_str().unwrap();
    assert!(message.contains("did not accept a one-token request"), "{message}");
    let response = acp.call("authenticate", json!({"methodId": "other"}));
    assert_eq!(response["error"]["code"], -32602, "{response}");
}

#[test]
fn acp_logout_clears_the_credentials_and_new_sessions_need_a_sign_in() {
    let ws = Workspace::new("acp-logout");
    let llm = FakeLlm::start(vec![]);
    signed_in(&ws, &llm);
    let mut with_hooks = settings(&ws);
    with_hooks["webFetch"] = json!("ask");
    std::fs::write(ws.config().join("settings.json"), with_hooks.to_string()).unwrap();
    let mut acp = AcpProcess::spawn(&ws, &[]);
    acp.initialize();
    let response = acp.call("logout", json!({}));
    assert_eq!(response["result"], json!({}), "{response}");
    assert_eq!(settings(&ws), json!({"webFetch": "ask"}), "only the sign-in went");
    assert_eq!(mode(&ws), 0o600);
    let cwd = ws.project().to_string_lossy().into_owned();
    let response = acp.call("session/new", json!({"cwd": cwd, "mcpServers": []}));
    assert_eq!(response["error"]["code"], -32000, "{response}");
    assert_eq!(response["error"]["data"]["reason"], "signed_out");
    // Signing in again needs a provider: there is none now.
    let response = acp.call("authenticate", json!({"methodId": "iac-code-provider"}));
    assert_eq!(response["error"]["data"]["reason"], "provider_not_configured", "{response}");
}

/// The answer to the request `id` among SSE events.
fn sse_answer(sse: &crate::support::http_client::Sse, id: i64) -> Value {
    let events =
        sse.until(|e| e.data.get("id") == Some(&json!(id)) && e.data.get("method").is_none());
    events.last().unwrap().data.clone()
}

#[test]
fn http_logout_is_refused_without_the_flag_and_the_stored_key_stays() {
    let ws = Workspace::new("http-logout-refused");
    let llm = FakeLlm::start(vec![]);
    signed_in(&ws, &llm);
    let before = settings(&ws);
    assert_eq!(before["providers"]["openai_compatible"]["apiKey"], "sk-acp", "{before}");
    let server = HttpServer::spawn(&ws, None, &[], &[]);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"protocolVersion": 1, "clientCapabilities": {}}});
    let response = server.post(None, &init);
    assert_eq!(response.status, 200, "{response:?}");
    let capabilities = &response.json()["result"]["agentCapabilities"];
    assert!(capabilities["auth"].get("logout").is_none(), "not offered: {capabilities}");
    let conn = response.header("acp-connection-id").unwrap().to_string();
    let sse = server.stream(&conn, None, None);
    let logout = json!({"jsonrpc": "2.0", "id": 1, "method": "logout", "params": {}});
    assert_eq!(server.post(Some(&conn), &logout).status, 202);
    let answer = sse_answer(&sse, 1);
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    assert_eq!(answer["error"]["data"]["reason"], "logout_disabled", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("--allow-remote-logout"), "{message}");
    // The same over the WebSocket profile.
    let mut socket = ws_client::connect(&server.addr, &[]).unwrap();
    socket.initialize();
    let answer = socket.call(1, "logout", json!({})).pop().unwrap();
    assert_eq!(answer["error"]["data"]["reason"], "logout_disabled", "{answer}");
    assert_eq!(settings(&ws), before, "the stored key is still there");
    // Nobody was signed out: a new session still opens.
    let cwd = ws.project().to_string_lossy().into_owned();
    let new = json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                     "params": {"cwd": cwd, "mcpServers": []}});
    assert_eq!(server.post(Some(&conn), &new).status, 202);
    let answer = sse_answer(&sse, 2);
    assert!(answer["result"]["sessionId"].is_string(), "{answer}");
}

#[test]
fn http_logout_with_allow_remote_logout_clears_the_credentials() {
    let ws = Workspace::new("http-logout-allowed");
    let llm = FakeLlm::start(vec![]);
    signed_in(&ws, &llm);
    let server = HttpServer::spawn(&ws, None, &["--allow-remote-logout"], &[]);
    let mut socket = ws_client::connect(&server.addr, &[]).unwrap();
    let init = socket.initialize();
    assert_eq!(init["agentCapabilities"]["auth"]["logout"], json!({}), "{init}");
    let answer = socket.call(1, "logout", json!({})).pop().unwrap();
    assert_eq!(answer["result"], json!({}), "{answer}");
    let after = settings(&ws);
    assert!(after.get("provider").is_none() && after.get("providers").is_none(), "{after}");
    let cwd = ws.project().to_string_lossy().into_owned();
    let answer =
        socket.call(2, "session/new", json!({"cwd": cwd, "mcpServers": []})).pop().unwrap();
    assert_eq!(answer["error"]["data"]["reason"], "signed_out", "{answer}");
}
