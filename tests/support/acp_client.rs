//! Drives the real `iac-code` binary over stdio as an ACP client: newline-delimited
//! JSON-RPC 2.0, every agent message schema-checked, with a transcript for diagnostics.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use serde_json::{Value, json};

use super::command::{BIN, iac_code, llm_env};
use super::fake_llm::FakeLlm;
use super::schema;
use super::workspace::Workspace;

/// Default time to wait for the next agent message.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Transcript lines included in panic messages.
const CONTEXT_LINES: usize = 60;
/// Longest transcript line shown in panic messages (the full text stays in `transcript()`).
const CONTEXT_LINE_CHARS: usize = 2_000;
/// Prefix of the marker the reader thread sends for anything that is not a JSON frame.
const NON_PROTOCOL_MARKER: &str = "<<non-json line: ";

/// How `until_response` answers `session/request_permission` requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Permission {
    #[default]
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
    /// Answers `{"outcome":{"outcome":"cancelled"}}`.
    Cancelled,
    /// Leaves the request unanswered (it is only collected).
    Manual,
}

impl Permission {
    /// The `PermissionOptionKind` to select, if this answer selects an option.
    fn option_kind(self) -> Option<&'static str> {
        match self {
            Permission::AllowOnce => Some("allow_once"),
            Permission::AllowAlways => Some("allow_always"),
            Permission::RejectOnce => Some("reject_once"),
            Permission::RejectAlways => Some("reject_always"),
            Permission::Cancelled | Permission::Manual => None,
        }
    }
}

/// A running `iac-code` process driven over stdio.
pub struct AcpProcess {
    child: Child,
    /// `None` once `close_stdin` was called.
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    /// Messages received while waiting for exit, handed out by `recv` first.
    pending: VecDeque<Value>,
    /// `--> json` and `<-- json` lines, in I/O order.
    transcript: Arc<Mutex<Vec<String>>>,
    next_id: i64,
    /// Request id (as JSON text) -> method, for validating responses.
    methods: HashMap<String, String>,
    stderr_path: PathBuf,
    permission: Permission,
    timeout: Duration,
    /// The commands of the last `available_commands_update` seen by `expect_commands`.
    pub commands: Vec<Value>,
}

impl AcpProcess {
    /// Spawns `iac-code acp` in `ws.project()` with a clean environment plus `env`.
    pub fn spawn(ws: &Workspace, env: &[(&str, &str)]) -> AcpProcess {
        Self::spawn_with(ws, &["acp"], env)
    }

    /// Spawns `iac-code acp` configured for `llm` (see [`llm_env`]) plus `extra`.
    pub fn spawn_with_llm(ws: &Workspace, llm: &FakeLlm, extra: &[(&str, &str)]) -> AcpProcess {
        let owned = llm_env(llm);
        let mut env = env_refs(&owned);
        env.extend_from_slice(extra);
        Self::spawn(ws, &env)
    }

    /// Spawns the binary with `args`, cwd `ws.project()`, a cleared environment holding only
    /// PATH, HOME, IAC_CODE_CONFIG_DIR, IAC_CODE_LOG=debug and `env`; stderr goes to
    /// `ws.root()/stderr.log`.
    pub fn spawn_with(ws: &Workspace, args: &[&str], env: &[(&str, &str)]) -> AcpProcess {
        let stderr_path = ws.root().join("stderr.log");
        let stderr_file = File::create(&stderr_path)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", stderr_path.display()));

        let mut child = iac_code(ws)
            .args(args)
            .env("IAC_CODE_LOG", "debug")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr_file))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn {} {args:?}: {e}", *BIN));
        let stdin = child.stdin.take().expect("child stdin is piped");
        let stdout = child.stdout.take().expect("child stdout is piped");

        let transcript = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = crossbeam_channel::unbounded();
        let reader_transcript = Arc::clone(&transcript);
        thread::Builder::new()
            .name("acp-stdout".to_owned())
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                loop {
                    let mut line = String::new();
                    let message = match reader.read_line(&mut line) {
                        Ok(0) => break,
                        Ok(_) => {
                            let line = line.trim_end_matches(['\r', '\n']);
                            push_line(&reader_transcript, format!("<-- {line}"));
                            serde_json::from_str::<Value>(line).unwrap_or_else(|_| {
                                Value::String(format!("{NON_PROTOCOL_MARKER}{line}>>"))
                            })
                        }
                        Err(e) => {
                            let marker = format!("{NON_PROTOCOL_MARKER}unreadable stdout: {e}>>");
                            push_line(&reader_transcript, format!("<-- {marker}"));
                            let _ = tx.send(Value::String(marker));
                            break;
                        }
                    };
                    if tx.send(message).is_err() {
                        break;
                    }
                }
            })
            .expect("cannot spawn the acp-stdout reader thread");

        AcpProcess {
            child,
            stdin: Some(stdin),
            rx,
            pending: VecDeque::new(),
            transcript,
            next_id: 0,
            methods: HashMap::new(),
            stderr_path,
            permission: Permission::default(),
            timeout: DEFAULT_TIMEOUT,
            commands: Vec::new(),
        }
    }

    /// Sets how long `recv` (and everything built on it) waits for one message.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Sets how `until_response` answers permission requests (default `AllowOnce`).
    pub fn set_permission(&mut self, permission: Permission) {
        self.permission = permission;
    }

    /// Writes `line` + `\n` to the agent's stdin and flushes. If the line is a JSON request,
    /// its id -> method is remembered for response validation.
    pub fn send_raw(&mut self, line: &str) {
        if let Ok(Value::Object(msg)) = serde_json::from_str::<Value>(line)
            && let (Some(id), Some(method)) =
                (msg.get("id"), msg.get("method").and_then(Value::as_str))
        {
            self.methods.insert(id.to_string(), method.to_owned());
        }
        push_line(&self.transcript, format!("--> {line}"));
        if self.stdin.is_none() {
            panic!("cannot send after close_stdin: {line}{}", self.context());
        }
        let written = self.stdin.as_mut().map_or(Ok(()), |stdin| write_line(stdin, line));
        if let Err(e) = written {
            panic!("cannot write to the agent's stdin ({e}): {line}{}", self.context());
        }
    }

    /// Sends a request with the next numeric id; returns that id.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.methods.insert(id.to_string(), method.to_owned());
        self.send_raw(&msg.to_string());
        id
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        let msg = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send_raw(&msg.to_string());
    }

    /// Answers an agent -> client request with `result`.
    pub fn respond(&mut self, id: Value, result: Value) {
        let msg = json!({"jsonrpc": "2.0", "id": id, "result": result});
        self.send_raw(&msg.to_string());
    }

    /// Answers an agent -> client request with a JSON-RPC error.
    pub fn respond_error(&mut self, id: Value, code: i64, message: &str) {
        let msg = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        self.send_raw(&msg.to_string());
    }

    /// Next message from the agent (validated); panics with the transcript on timeout or EOF.
    pub fn recv(&mut self) -> Value {
        let timeout = self.timeout;
        match self.next_message(timeout) {
            Ok(msg) => msg,
            Err(RecvTimeoutError::Timeout) => {
                panic!("timed out after {timeout:?} waiting for an agent message{}", self.context())
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!("the agent closed stdout while a message was expected{}", self.context())
            }
        }
    }

    /// Next message from the agent (validated) within `timeout`; `None` on timeout or EOF.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Option<Value> {
        self.next_message(timeout).ok()
    }

    /// Reads messages until the response with `id`; returns (messages before it, the response).
    /// Permission requests seen meanwhile are answered per `set_permission` and still collected.
    pub fn until_response(&mut self, id: &Value) -> (Vec<Value>, Value) {
        let mut before = Vec::new();
        loop {
            let msg = self.recv();
            let is_response = msg.get("method").is_none()
                && (msg.get("result").is_some() || msg.get("error").is_some());
            if is_response && msg.get("id") == Some(id) {
                return (before, msg);
            }
            if msg.get("method").and_then(Value::as_str) == Some("session/request_permission")
                && msg.get("id").is_some()
            {
                self.answer_permission(&msg);
            }
            before.push(msg);
        }
    }

    /// Sends a request and waits for its response; returns the full response message.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        self.until_response(&id).1
    }

    /// The standard `initialize` handshake (no fs/terminal client capabilities); returns `result`.
    pub fn initialize(&mut self) -> Value {
        self.initialize_with(json!({
            "fs": {"readTextFile": false, "writeTextFile": false},
            "terminal": false,
        }))
    }

    /// `initialize` with these client capabilities.
    pub fn initialize_with(&mut self, capabilities: Value) -> Value {
        let response = self.call(
            "initialize",
            json!({
                "protocolVersion": 1,
                "clientCapabilities": capabilities,
                "clientInfo": {"name": "test", "version": "0"},
            }),
        );
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("initialize failed: {response}{}", self.context()),
        }
    }

    /// `session/new` in `cwd` without MCP servers; returns the session id.
    pub fn new_session(&mut self, cwd: &Path) -> String {
        let cwd = cwd.to_string_lossy().into_owned();
        let response = self.call("session/new", json!({"cwd": cwd, "mcpServers": []}));
        match response.pointer("/result/sessionId").and_then(Value::as_str) {
            Some(session) => {
                let session = session.to_owned();
                self.expect_commands(&session);
                session
            }
            None => panic!("session/new failed: {response}{}", self.context()),
        }
    }

    /// `session/load`, `session/resume` or `session/fork` of `session` in `cwd`: returns the
    /// messages before the response (the replay) and the response. After a success, the
    /// `available_commands_update` that follows the response is checked and consumed.
    pub fn open_session(&mut self, method: &str, session: &str, cwd: &Path) -> (Vec<Value>, Value) {
        let params = json!({"sessionId": session, "cwd": cwd, "mcpServers": []});
        let id = self.request(method, params);
        let (before, response) = self.until_response(&id);
        if response.get("result").is_some() {
            let opened = response
                .pointer("/result/sessionId")
                .and_then(Value::as_str)
                .unwrap_or(session)
                .to_owned();
            self.expect_commands(&opened);
        }
        (before, response)
    }

    /// The next message must announce the slash commands of `session`.
    pub fn expect_commands(&mut self, session: &str) {
        let msg = self.recv();
        let update = &msg["params"]["update"];
        assert!(
            msg["method"] == "session/update"
                && msg["params"]["sessionId"]
                    .as_str()
                    .is_some_and(|s| s.eq_ignore_ascii_case(session))
                && update["sessionUpdate"] == "available_commands_update",
            "expected available_commands_update for {session}, got {msg}{}",
            self.context()
        );
        let names: Vec<&str> = update["availableCommands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        // The built-in commands first; skills' commands (bundled ones at least) follow.
        let builtin = ["compact", "clear", "rename", "mcp", "memory", "skills", "help"];
        assert_eq!(names[..builtin.len()], builtin, "{names:?}");
        self.commands = update["availableCommands"].as_array().cloned().unwrap_or_default();
    }

    /// Sends a text `session/prompt`; returns (messages before the response, the response).
    pub fn prompt(&mut self, session: &str, text: &str) -> (Vec<Value>, Value) {
        let id = self.start_prompt(session, text);
        self.until_response(&id)
    }

    /// Sends a text `session/prompt` without waiting; returns its request id.
    pub fn start_prompt(&mut self, session: &str, text: &str) -> Value {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
    }

    /// Spawns against `llm`, initializes, and opens a session in the project in `mode`.
    pub fn session_in_mode(ws: &Workspace, llm: &FakeLlm, mode: &str) -> (AcpProcess, String) {
        let mut acp = AcpProcess::spawn_with_llm(ws, llm, &[]);
        acp.initialize();
        let session = acp.new_session(&ws.project());
        acp.call("session/set_mode", json!({"sessionId": session, "modeId": mode}));
        (acp, session)
    }

    /// Closes the agent's stdin (EOF for the agent).
    pub fn close_stdin(&mut self) {
        if self.stdin.take().is_some() {
            push_line(&self.transcript, "--> <<stdin closed>>".to_owned());
        }
    }

    /// Waits until the agent closes stdout and exits; kills it and returns `None` if that does
    /// not happen within `timeout`. Messages that arrive meanwhile stay available to `recv`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        // The main signal: the reader thread ends (channel disconnected) on stdout EOF.
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(remaining) {
                Ok(msg) => self.pending.push_back(msg),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    self.kill();
                    return None;
                }
            }
        }
        // stdout is closed, so the process is exiting: poll until it is reaped.
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => thread::yield_now(),
                Ok(None) | Err(_) => {
                    self.kill();
                    return None;
                }
            }
        }
    }

    /// Contents of the agent's stderr log.
    pub fn stderr(&self) -> String {
        std::fs::read(&self.stderr_path)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    }

    /// The whole transcript, one `-->`/`<--` line per message.
    pub fn transcript(&self) -> String {
        self.transcript.lock().unwrap_or_else(PoisonError::into_inner).join("\n")
    }

    /// The agent's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Diagnostics appended to every panic: the transcript tail and the stderr tail.
    pub fn context(&self) -> String {
        let transcript = {
            let lines = self.transcript.lock().unwrap_or_else(PoisonError::into_inner);
            let start = lines.len().saturating_sub(CONTEXT_LINES);
            lines[start..].iter().map(|line| shorten(line)).collect::<Vec<_>>().join("\n")
        };
        let stderr = self.stderr();
        let stderr_lines: Vec<&str> = stderr.lines().collect();
        let start = stderr_lines.len().saturating_sub(CONTEXT_LINES);
        let stderr_tail =
            stderr_lines[start..].iter().map(|line| shorten(line)).collect::<Vec<_>>().join("\n");
        format!(
            "\n--- transcript (last {CONTEXT_LINES} lines) ---\n{transcript}\n\
             --- stderr (last {CONTEXT_LINES} lines) ---\n{stderr_tail}\n--- end ---"
        )
    }

    /// Next message from `pending` or the reader, validated against the ACP schema.
    fn next_message(&mut self, timeout: Duration) -> Result<Value, RecvTimeoutError> {
        let msg = match self.pending.pop_front() {
            Some(msg) => msg,
            None => self.rx.recv_timeout(timeout)?,
        };
        if let Value::String(text) = &msg
            && text.starts_with(NON_PROTOCOL_MARKER)
        {
            panic!(
                "the agent wrote something that is not a JSON-RPC frame on stdout: {text}{}",
                self.context()
            );
        }
        let method = if msg.get("method").is_none() {
            msg.get("id").and_then(|id| self.methods.get(&id.to_string())).map(String::as_str)
        } else {
            None
        };
        if let Err(e) = schema::check_agent_message(&msg, method) {
            panic!("{e}{}", self.context());
        }
        Ok(msg)
    }

    /// Answers one `session/request_permission` request according to `self.permission`.
    pub fn answer_permission(&mut self, msg: &Value) {
        let Some(id) = msg.get("id").cloned() else { return };
        let outcome = match self.permission {
            Permission::Manual => return,
            Permission::Cancelled => json!({"outcome": "cancelled"}),
            selected => {
                let kind = selected.option_kind().unwrap_or_default();
                let option_id = msg
                    .pointer("/params/options")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .find(|option| option.get("kind").and_then(Value::as_str) == Some(kind))
                    .and_then(|option| option.get("optionId"))
                    .cloned();
                let Some(option_id) = option_id else {
                    panic!(
                        "permission request has no option of kind `{kind}`: {msg}{}",
                        self.context()
                    );
                };
                json!({"outcome": "selected", "optionId": option_id})
            }
        };
        self.respond(id, json!({"outcome": outcome}));
    }

    /// Receives, answering each permission request, until a live tool output (a
    /// `tool_call_update` with no status yet) contains `mark`; `each` sees every live
    /// output before that.
    pub fn answer_until_output(&mut self, mark: &str, mut each: impl FnMut(&str)) {
        loop {
            let msg = self.recv();
            if msg["method"] == "session/request_permission" {
                self.answer_permission(&msg);
            }
            let update = &msg["params"]["update"];
            if update["sessionUpdate"] == "tool_call_update" && update.get("status").is_none() {
                let text = update["content"][0]["content"]["text"].as_str().unwrap_or("");
                each(text);
                if text.contains(mark) {
                    return;
                }
            }
        }
    }

    /// Kills the agent with SIGKILL and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for AcpProcess {
    fn drop(&mut self) {
        self.stdin = None;
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Borrows owned env pairs (e.g. from [`llm_env`]) for `spawn`.
pub fn env_refs(pairs: &[(String, String)]) -> Vec<(&str, &str)> {
    pairs.iter().map(|(key, value)| (key.as_str(), value.as_str())).collect()
}

/// `params.update` of every `session/update` notification, in order.
pub fn updates(msgs: &[Value]) -> Vec<Value> {
    msgs.iter()
        .filter(|msg| msg.get("method").and_then(Value::as_str) == Some("session/update"))
        .filter_map(|msg| msg.pointer("/params/update"))
        .cloned()
        .collect()
}

/// `params.update` of the `session/update` notifications whose `sessionUpdate` is `kind`.
pub fn updates_of<'a>(msgs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    msgs.iter()
        .filter(|msg| msg.get("method").and_then(Value::as_str) == Some("session/update"))
        .filter_map(|msg| msg.pointer("/params/update"))
        .filter(|update| update.get("sessionUpdate").and_then(Value::as_str) == Some(kind))
        .collect()
}

/// Concatenated `content.text` of the `agent_message_chunk` updates.
pub fn agent_text(msgs: &[Value]) -> String {
    updates_of(msgs, "agent_message_chunk")
        .into_iter()
        .filter_map(|update| update.pointer("/content/text").and_then(Value::as_str))
        .collect()
}

fn write_line(stdin: &mut ChildStdin, line: &str) -> io::Result<()> {
    stdin.write_all(line.as_bytes())?;
    stdin.write_all(b"\n")?;
    stdin.flush()
}

fn push_line(transcript: &Mutex<Vec<String>>, line: String) {
    transcript.lock().unwrap_or_else(PoisonError::into_inner).push(line);
}

/// `line` cut to `CONTEXT_LINE_CHARS` characters (on a char boundary).
fn shorten(line: &str) -> String {
    match line.char_indices().nth(CONTEXT_LINE_CHARS) {
        Some((cut, _)) => format!("{} …[{} bytes]", &line[..cut], line.len()),
        None => line.to_owned(),
    }
}
