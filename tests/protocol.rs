//! JSON-RPC framing and errors, initialize, and the session methods that need no LLM.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::acp_client::AcpProcess;
use crate::support::workspace::Workspace;

fn started(name: &str) -> (Workspace, AcpProcess) {
    let ws = Workspace::new(name);
    let mut acp = AcpProcess::spawn(
        &ws,
        &[
            ("IAC_CODE_BASE_URL", "http://127.0.0.1:9/v1"),
            ("IAC_CODE_MODEL", "m1"),
            ("IAC_CODE_MODELS", "m2"),
        ],
    );
    acp.initialize();
    (ws, acp)
}

fn error_of(response: &Value) -> (i64, String) {
    let err = response.get("error").unwrap_or_else(|| panic!("expected an error: {response}"));
    let data = err.get("data").map(|d| d.to_string()).unwrap_or_default();
    (err["code"].as_i64().unwrap(), format!("{} {data}", err["message"].as_str().unwrap()))
}

#[test]
fn initialize_advertises_only_what_works() {
    let ws = Workspace::new("init");
    let mut acp = AcpProcess::spawn(&ws, &[]);
    let id = acp.request("initialize", json!({"protocolVersion": 7, "clientCapabilities": {}}));
    let (before, mut response) = acp.until_response(&id);
    assert!(before.is_empty());
    // The sign-in methods (tests/login.rs): here the agent's own, saying nothing is set.
    let methods = response["result"]["authMethods"].take();
    assert_eq!(methods[0]["id"], "iac-code-provider", "{methods}");
    assert_eq!(methods.as_array().map(Vec::len), Some(1), "{methods}");
    // Which layers of the sandbox hold commands on this host (tests/sandbox.rs).
    let sandbox = response["result"]["_meta"]["iacCode"]["sandbox"].take();
    assert!(sandbox["usable"].is_boolean() && sandbox["landlockAbi"].is_number(), "{sandbox}");
    response["result"]["_meta"]["iacCode"].as_object_mut().unwrap().remove("sandbox");
    assert_eq!(
        response["result"],
        json!({
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": true,
                "promptCapabilities": {"image": false, "audio": false, "embeddedContext": true},
                "mcpCapabilities": {"http": true, "sse": true},
                "sessionCapabilities": {"additionalDirectories": {}, "list": {}, "close": {}, "resume": {}, "fork": {}, "delete": {}},
                "auth": {"logout": {}},
            },
            "agentInfo": {"name": "iac-code", "title": "IaC Code", "version": env!("CARGO_PKG_VERSION")},
            "authMethods": null,
            // Where the server runs: the web page's first directory.
            "_meta": {"steering": {"supported": true}, "iacCode": {"cwd": ws.project()}},
        })
    );
}

#[test]
fn requests_before_initialize_are_refused() {
    let ws = Workspace::new("before-init");
    let mut acp = AcpProcess::spawn(&ws, &[]);
    let response = acp.call("session/list", json!({}));
    let (code, msg) = error_of(&response);
    assert_eq!(code, -32600);
    assert!(msg.contains("initialize"), "{msg}");
    acp.initialize();
}

#[test]
fn garbage_gets_precise_errors_and_the_server_keeps_serving() {
    let (_ws, mut acp) = started("garbage");
    acp.send_raw("{this is not json");
    let r = acp.recv();
    assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (Value::Null, json!(-32700)));
    acp.send_raw(r#"{"jsonrpc":"2.0","id":5,"method":42}"#);
    let r = acp.recv();
    assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (json!(5), json!(-32600)));
    acp.send_raw(r#"[{"jsonrpc":"2.0","id":6,"method":"initialize"}]"#);
    assert_eq!(acp.recv()["error"]["code"], -32600);
    acp.send_raw(r#"{"jsonrpc":"1.0","id":7,"method":"initialize"}"#);
    assert_eq!(acp.recv()["error"]["code"], -32600);
    acp.send_raw("\u{0}\u{1}binary\u{ff}");
    assert_eq!(acp.recv()["error"]["code"], -32700);
    // Unknown `_` notifications are ignored: the next answer is for the next request.
    acp.notify("_vendor/ping", json!({}));
    acp.notify("totally/unknown", json!({}));
    let (code, msg) = error_of(&acp.call("_vendor/ext", json!({})));
    assert_eq!(code, -32601, "{msg}");
    let (code, msg) = error_of(&acp.call("session/frobnicate", json!({})));
    assert_eq!((code, msg.contains("session/frobnicate")), (-32601, true), "{msg}");
    // Bad params carry serde's message in `data`.
    let response = acp.call("session/new", json!({"cwd": 42}));
    assert_eq!(response["error"]["code"], -32602);
    assert!(response["error"]["data"].as_str().unwrap().contains("invalid type"), "{response}");
    let response = acp.call("session/new", json!({}));
    assert!(
        response["error"]["data"].as_str().unwrap().contains("missing field `cwd`"),
        "{response}"
    );
    assert!(acp.call("session/list", json!({}))["result"].is_object());
}

#[test]
fn an_oversized_line_is_refused_and_the_next_one_served() {
    let (_ws, mut acp) = started("oversized");
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"p":"{}"}}}}"#,
        "a".repeat(51 << 20)
    );
    acp.send_raw(&huge);
    let r = acp.recv();
    assert_eq!(r["error"]["code"], -32700);
    assert!(r["error"]["data"].as_str().unwrap().contains("longer than"), "{r}");
    assert!(acp.call("session/list", json!({}))["result"]["sessions"].is_array());
}

#[test]
fn session_new_validates_cwd_and_offers_modes_and_models() {
    let (ws, mut acp) = started("new");
    let file = ws.path("afile");
    std::fs::write(&file, "x").unwrap();
    for (cwd, want) in [
        (json!("relative/dir"), "absolute"),
        (json!("/no/such/dir/anywhere"), "does not exist"),
        (json!(file.to_str().unwrap()), "not a directory"),
    ] {
        let (code, msg) = error_of(&acp.call("session/new", json!({"cwd": cwd, "mcpServers": []})));
        assert_eq!(code, -32602);
        assert!(msg.contains(want), "{cwd}: {msg}");
    }
    // mcpServers may be omitted.
    let r = acp.call("session/new", json!({"cwd": ws.project()}));
    let result = &r["result"];
    let id = result["sessionId"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");
    assert_eq!(result["modes"]["currentModeId"], "default");
    let modes: Vec<&str> = result["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["default", "accept_edits", "plan", "bypass_permissions"]);
    assert_eq!(result["models"]["currentModelId"], "m1");
    let models: Vec<&str> = result["models"]["availableModels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["modelId"].as_str().unwrap())
        .collect();
    assert_eq!(models, ["m1", "m2"]);
    let ids: Vec<&str> = result["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["mode", "model"]);
}

#[test]
fn unknown_sessions_are_named_in_the_error() {
    let (_ws, mut acp) = started("unknown");
    let ghost = "00000000-0000-4000-8000-000000000000";
    let calls = [
        ("session/prompt", json!({"sessionId": ghost, "prompt": [{"type": "text", "text": "hi"}]})),
        ("session/set_mode", json!({"sessionId": ghost, "modeId": "plan"})),
        (
            "session/set_config_option",
            json!({"sessionId": ghost, "configId": "mode", "value": "plan"}),
        ),
        ("session/set_model", json!({"sessionId": ghost, "modelId": "m1"})),
        ("session/close", json!({"sessionId": ghost})),
    ];
    for (method, params) in calls {
        let (code, msg) = error_of(&acp.call(method, params));
        assert_eq!(code, -32602, "{method}");
        assert!(msg.contains(ghost), "{method}: {msg}");
    }
    // session/cancel for an unknown session is a notification: silently ignored.
    acp.notify("session/cancel", json!({"sessionId": ghost}));
    assert!(acp.call("session/list", json!({}))["result"].is_object());
}

#[test]
fn config_options_modes_and_models_change_and_report_the_full_list() {
    let (ws, mut acp) = started("config");
    let id = acp.new_session(&ws.project());
    let r = acp.call(
        "session/set_config_option",
        json!({"sessionId": id, "configId": "mode", "value": "plan"}),
    );
    let options = r["result"]["configOptions"].as_array().unwrap().clone();
    assert_eq!(options.len(), 2);
    assert_eq!(options[0]["currentValue"], "plan");
    let r = acp.call("config/set", json!({"sessionId": id, "configId": "model", "value": "m2"}));
    assert_eq!(r["result"]["configOptions"][1]["currentValue"], "m2");
    assert_eq!(r["result"]["configOptions"][0]["currentValue"], "plan");
    for (params, want) in [
        (json!({"sessionId": id, "configId": "model", "value": "gpt-9"}), "unknown model 'gpt-9'"),
        (json!({"sessionId": id, "configId": "mode", "value": "yolo"}), "unknown mode 'yolo'"),
        (json!({"sessionId": id, "configId": "colour", "value": "red"}), "unknown config option"),
        (
            json!({"sessionId": id, "configId": "mode", "type": "boolean", "value": true}),
            "must be a string",
        ),
    ] {
        let (code, msg) = error_of(&acp.call("session/set_config_option", params));
        assert_eq!(code, -32602);
        assert!(msg.contains(want), "{msg}");
    }
    assert_eq!(
        acp.call("session/set_mode", json!({"sessionId": id, "modeId": "bypass_permissions"}))["result"],
        json!({})
    );
    assert_eq!(
        acp.call("session/set_model", json!({"sessionId": id, "modelId": "m1"}))["result"],
        json!({})
    );
    let r = acp.call(
        "session/set_config_option",
        json!({"sessionId": id, "configId": "mode", "value": "default"}),
    );
    assert_eq!(r["result"]["configOptions"][1]["currentValue"], "m1", "set_model took effect");
    let (code, _) =
        error_of(&acp.call("session/set_mode", json!({"sessionId": id, "modeId": "nope"})));
    assert_eq!(code, -32602);
}

#[test]
fn list_filters_pages_and_close_keeps_the_files() {
    let (ws, mut acp) = started("list");
    let other = ws.path("other");
    std::fs::create_dir_all(&other).unwrap();
    let a = acp.new_session(&ws.project());
    let b = acp.new_session(&other);
    let all = acp.call("session/list", json!({}));
    let sessions = all["result"]["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2);
    assert!(all["result"].get("nextCursor").is_none());
    for s in sessions {
        assert!(s["updatedAt"].as_str().unwrap().ends_with('Z'));
    }
    let only = acp.call("sessions/list", json!({"cwd": ws.project()}));
    let ids: Vec<&str> = only["result"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [a.as_str()]);
    let (code, _) = error_of(&acp.call("session/list", json!({"cursor": "garbage"})));
    assert_eq!(code, -32602);
    assert_eq!(acp.call("session/close", json!({"sessionId": b}))["result"], json!({}));
    let after = acp.call("session/list", json!({}));
    assert_eq!(after["result"]["sessions"].as_array().unwrap().len(), 2, "close keeps the files");
    let (code, msg) = error_of(&acp.call(
        "session/prompt",
        json!({"sessionId": b, "prompt": [{"type": "text", "text": "still there?"}]}),
    ));
    assert_eq!(code, -32602);
    assert!(msg.contains(&b), "{msg}");
}

#[test]
fn list_pages_through_many_sessions() {
    let (ws, mut acp) = started("paging");
    for _ in 0..105 {
        acp.new_session(&ws.project());
    }
    let first = acp.call("session/list", json!({}));
    assert_eq!(first["result"]["sessions"].as_array().unwrap().len(), 100);
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_string();
    let second = acp.call("session/list", json!({"cursor": cursor}));
    assert_eq!(second["result"]["sessions"].as_array().unwrap().len(), 5);
    assert!(second["result"].get("nextCursor").is_none());
}

#[test]
fn eof_on_stdin_exits_cleanly() {
    let (_ws, mut acp) = started("eof");
    acp.close_stdin();
    let status = acp.wait_exit(Duration::from_secs(10)).expect("exits after EOF");
    assert!(status.success(), "{status:?}");
}
