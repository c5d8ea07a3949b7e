//! The ACP dispatcher in process, over an in-memory connection (no binary, no socket): the
//! protocol rules that need no LLM, fast, every frame checked against the official schema.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use iac_code::acp::AcpAgent;
use iac_code::config::{Config, Env};
use iac_code::jsonrpc::{self, memory};
use iac_code::session::Services;
use serde_json::{Value, json};

use crate::support::schema::validate_agent_message;
use crate::support::workspace::Workspace;

const WAIT: Duration = Duration::from_secs(10);

struct MapEnv(HashMap<&'static str, String>);

impl Env for MapEnv {
    fn get(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }
}

/// A server running the dispatcher on its own thread, and the client's end.
struct InProcess {
    client: memory::Client,
    methods: HashMap<i64, String>,
    next: i64,
}

impl InProcess {
    fn start(ws: &Workspace) -> InProcess {
        let env = MapEnv(HashMap::from([
            ("IAC_CODE_CONFIG_DIR", ws.config().display().to_string()),
            ("HOME", ws.root().display().to_string()),
        ]));
        let config = Config::from_env(&env).expect("config");
        let services = Arc::new(Services::new(config).unwrap());
        let (client, server) = memory::memory();
        std::thread::spawn(move || {
            let mut agent = AcpAgent::new(services);
            jsonrpc::serve(&server.inbox, &server.outbox, &mut agent);
        });
        InProcess { client, methods: HashMap::new(), next: 0 }
    }

    /// Sends a request and returns its response; the frames before it are schema-checked
    /// and returned too.
    fn call(&mut self, method: &str, params: Value) -> (Vec<Value>, Value) {
        self.next += 1;
        let id = self.next;
        self.methods.insert(id, method.to_string());
        self.client.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.until(&json!(id))
    }

    fn until(&mut self, id: &Value) -> (Vec<Value>, Value) {
        let mut before = Vec::new();
        loop {
            let frame = self.client.recv(WAIT).unwrap_or_else(|| panic!("no answer to {id}"));
            let method = frame["id"].as_i64().and_then(|i| self.methods.get(&i)).cloned();
            validate_agent_message(&frame, method.as_deref());
            if frame.get("method").is_none() && &frame["id"] == id {
                return (before, frame);
            }
            before.push(frame);
        }
    }
}

fn code(response: &Value) -> i64 {
    response["error"]["code"].as_i64().unwrap_or_else(|| panic!("an error: {response}"))
}

#[test]
fn the_protocol_rules_hold_in_process() {
    let ws = Workspace::new("dispatch");
    let mut server = InProcess::start(&ws);
    let (_, early) = server.call("session/new", json!({"cwd": ws.project(), "mcpServers": []}));
    assert_eq!(code(&early), -32600, "nothing before initialize");
    assert_eq!(early["error"]["data"]["reason"], "not_initialized", "{early}");

    let (_, init) = server.call("initialize", json!({"protocolVersion": 1}));
    assert_eq!(init["result"]["protocolVersion"], 1);
    assert_eq!(init["result"]["agentCapabilities"]["loadSession"], true);

    let (_, relative) = server.call("session/new", json!({"cwd": "rel/dir", "mcpServers": []}));
    assert_eq!(code(&relative), -32602);
    let (_, created) = server.call("session/new", json!({"cwd": ws.project(), "mcpServers": []}));
    let session = created["result"]["sessionId"].as_str().expect("an id").to_string();
    assert_eq!(created["result"]["modes"]["currentModeId"], "default");
    // The slash commands follow the response that named the session.
    let commands = server.client.recv(WAIT).expect("the commands");
    assert_eq!(commands["params"]["update"]["sessionUpdate"], "available_commands_update");

    let (_, mode) =
        server.call("session/set_mode", json!({"sessionId": session, "modeId": "nonsense"}));
    assert_eq!(code(&mode), -32602);
    assert!(mode["error"]["message"].as_str().unwrap().contains("bypass_permissions"));
    let upper = session.to_uppercase();
    let (_, ok) = server.call("session/set_mode", json!({"sessionId": upper, "modeId": "plan"}));
    assert_eq!(ok["result"], json!({}), "an id is normalised where it is decoded: {ok}");

    for hostile in ["../../etc", "", "0b0c8f4e3f0a4c1e9d3a2b6f1e4d5c7a", &"a".repeat(10_000)] {
        let params = json!({"sessionId": hostile, "cwd": ws.project(), "mcpServers": []});
        let (_, refused) = server.call("session/load", params);
        assert_eq!(code(&refused), -32602, "{hostile:.20}");
    }
    let entries: Vec<_> = std::fs::read_dir(ws.config().join("sessions"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries.len(), 1, "nothing but the one session reached the disk: {entries:?}");
    assert_eq!(entries[0], session);

    let (_, unknown) = server.call("session/teleport", json!({}));
    assert_eq!(code(&unknown), -32601);
    server.client.send(&json!({"jsonrpc": "2.0", "id": 99, "method": "session/list", "params": 3}));
    let (_, bad) = server.until(&json!(99));
    assert_eq!(code(&bad), -32600, "params that are neither an object nor an array");
    let (_, listed) = server.call("session/list", json!({}));
    assert_eq!(listed["result"]["sessions"][0]["sessionId"], session);
    server.client.close();
}
