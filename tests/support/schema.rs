//! Validation of agent messages against the official ACP JSON Schema
//! (`tests/acp-schema/schema.json` (a copy of the official schema) and `schema.unstable.json`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use jsonschema::Validator;
use serde_json::{Value, json};

const STABLE_SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/acp-schema/schema.json");
const UNSTABLE_SCHEMA: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/acp-schema/schema.unstable.json");

/// Compiled validators keyed by (unstable?, `$defs` name).
type Cache = Mutex<HashMap<(bool, String), Arc<Validator>>>;

/// The `$defs` object of the stable or unstable schema file, read once.
fn defs(unstable: bool) -> &'static Value {
    static STABLE: OnceLock<Value> = OnceLock::new();
    static UNSTABLE: OnceLock<Value> = OnceLock::new();
    if unstable {
        UNSTABLE.get_or_init(|| load_defs(UNSTABLE_SCHEMA))
    } else {
        STABLE.get_or_init(|| load_defs(STABLE_SCHEMA))
    }
}

fn load_defs(path: &str) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "cannot read the ACP JSON Schema at {path}: {e}\n\
             (the tests need tests/acp-schema/)"
        )
    });
    let mut doc: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the ACP JSON Schema at {path} is not valid JSON: {e}"));
    match doc.get_mut("$defs") {
        Some(defs) if defs.is_object() => defs.take(),
        _ => panic!("the ACP JSON Schema at {path} has no `$defs` object"),
    }
}

/// The compiled validator for `#/$defs/<def>`, compiled once per (schema, def).
fn validator(unstable: bool, def: &str) -> Arc<Validator> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Cache::default);
    let key = (unstable, def.to_owned());
    if let Some(found) = cache.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
        return Arc::clone(found);
    }
    let defs = defs(unstable);
    let file = if unstable { UNSTABLE_SCHEMA } else { STABLE_SCHEMA };
    assert!(defs.get(def).is_some(), "the ACP JSON Schema {file} has no type `{def}` in `$defs`");
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": defs,
        "$ref": format!("#/$defs/{def}"),
    });
    let compiled = jsonschema::draft202012::new(&schema)
        .unwrap_or_else(|e| panic!("cannot compile the ACP JSON Schema for `{def}` ({file}): {e}"));
    let compiled = Arc::new(compiled);
    cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(key)
        .or_insert_with(|| Arc::clone(&compiled));
    compiled
}

/// Checks `instance` against `$defs/<def>`; `Err` lists every violation and the instance.
pub fn check(def: &str, instance: &Value, unstable: bool) -> Result<(), String> {
    let compiled = validator(unstable, def);
    let errors: Vec<String> = compiled
        .iter_errors(instance)
        .map(|e| {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() { "/".to_owned() } else { at };
            format!("  - at {at}: {e}")
        })
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    let flavour = if unstable { "unstable" } else { "stable" };
    let pretty = serde_json::to_string_pretty(instance).unwrap_or_else(|_| instance.to_string());
    Err(format!(
        "value does not match ACP type `{def}` ({flavour} schema):\n{}\ninstance:\n{pretty}",
        errors.join("\n")
    ))
}

/// Validates `instance` against the stable schema type `def`; panics with all errors.
#[track_caller]
pub fn validate(def: &str, instance: &Value) {
    if let Err(message) = check(def, instance, false) {
        panic!("{message}");
    }
}

/// Validates one message the AGENT emitted. `method_of_request` maps a response id to the method of the client request it answers (None if unknown).
#[track_caller]
pub fn validate_agent_message(msg: &Value, method_of_request: Option<&str>) {
    if let Err(message) = check_agent_message(msg, method_of_request) {
        panic!("{message}");
    }
}

/// Non-panicking form of [`validate_agent_message`].
pub fn check_agent_message(msg: &Value, method_of_request: Option<&str>) -> Result<(), String> {
    check_agent_message_inner(msg, method_of_request)
        .map_err(|e| format!("invalid agent message: {e}\nmessage: {msg}"))
}

fn check_agent_message_inner(msg: &Value, method_of_request: Option<&str>) -> Result<(), String> {
    let Some(obj) = msg.as_object() else {
        return Err("a JSON-RPC message must be a JSON object".to_owned());
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err("`jsonrpc` must be \"2.0\"".to_owned());
    }
    let null = Value::Null;
    let params = obj.get("params").unwrap_or(&null);

    if let Some(method) = obj.get("method") {
        let Some(method) = method.as_str() else {
            return Err("`method` must be a string".to_owned());
        };
        if let Some(id) = obj.get("id") {
            // Agent -> client request.
            if !(id.is_number() || id.is_string()) {
                return Err(format!("request id must be a number or a string, got {id}"));
            }
            let def = match method {
                "session/request_permission" => "RequestPermissionRequest",
                "fs/read_text_file" => "ReadTextFileRequest",
                "fs/write_text_file" => "WriteTextFileRequest",
                "terminal/create" => "CreateTerminalRequest",
                "terminal/output" => "TerminalOutputRequest",
                "terminal/release" => "ReleaseTerminalRequest",
                "terminal/wait_for_exit" => "WaitForTerminalExitRequest",
                "terminal/kill" => "KillTerminalRequest",
                "elicitation/create" => "CreateElicitationRequest",
                other => return Err(format!("unexpected agent request `{other}`")),
            };
            return check(def, params, false);
        }
        // Agent -> client notification.
        return match method {
            "session/update" => check("SessionNotification", params, false),
            "$/cancel_request" => check("CancelRequestNotification", params, false),
            other => Err(format!("unexpected agent notification `{other}`")),
        };
    }

    let Some(id) = obj.get("id") else {
        return Err("a response must carry an `id`".to_owned());
    };
    if let Some(error) = obj.get("error") {
        if !(id.is_number() || id.is_string() || id.is_null()) {
            return Err(format!("response id must be a number, a string or null, got {id}"));
        }
        if obj.contains_key("result") {
            return Err("a response must not carry both `result` and `error`".to_owned());
        }
        return check("Error", error, false);
    }
    let Some(result) = obj.get("result") else {
        return Err("message has neither `method`, `result` nor `error`".to_owned());
    };
    if !(id.is_number() || id.is_string()) {
        return Err(format!("a success response id must be a number or a string, got {id}"));
    }
    let stable = |def: &str| check(def, result, false);
    match method_of_request {
        Some("initialize") => stable("InitializeResponse"),
        Some("authenticate") => stable("AuthenticateResponse"),
        Some("logout") => stable("LogoutResponse"),
        Some("session/new") => stable("NewSessionResponse"),
        Some("session/load") => stable("LoadSessionResponse"),
        Some("session/resume") => stable("ResumeSessionResponse"),
        Some("session/close") => stable("CloseSessionResponse"),
        Some("session/list" | "sessions/list") => stable("ListSessionsResponse"),
        Some("session/delete") => stable("DeleteSessionResponse"),
        Some("session/set_mode") => stable("SetSessionModeResponse"),
        Some("session/set_config_option" | "config/set") => {
            stable("SetSessionConfigOptionResponse")
        }
        Some("session/prompt") => {
            // The unstable schema carries `usage`; the stable one must accept it too.
            check("PromptResponse", result, true)?;
            stable("PromptResponse")
        }
        Some("session/fork") => check("ForkSessionResponse", result, true),
        Some(_) | None => {
            if result.is_object() {
                Ok(())
            } else {
                Err(format!("result must be a JSON object, got {result}"))
            }
        }
    }
}
