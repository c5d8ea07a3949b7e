//! What the client offers the tools (`initialize`'s `clientCapabilities`): its file system
//! (`fs/read_text_file`, `fs/write_text_file`) and its terminals (`terminal/create`,
//! `wait_for_exit`, `kill`, `output`, `release`), asked from the prompt thread like a
//! permission question, under the turn's cancel and a timeout.

use std::path::Path;
use std::time::Duration;

use crossbeam_channel::{after, select};
use serde_json::{Map, Value, json};

use crate::cancel::CancelToken;
use crate::jsonrpc::Outbox;
use crate::tools::{self, ClientTools, TerminalCommand, TerminalRun};

/// How long a client request may take.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(30);

/// What the client said it can do, as far as we use it.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientCaps {
    /// `fs.readTextFile`.
    pub read: bool,
    /// `fs.writeTextFile`.
    pub write: bool,
    /// `terminal`.
    pub terminal: bool,
    /// `session.configOptions.boolean`: boolean config options.
    pub boolean_options: bool,
    /// `elicitation.form`: it renders a form (`ask_user`); not a tool, so on whatever
    /// `IAC_CODE_CLIENT_TOOLS` says.
    pub elicit_form: bool,
}

impl ClientCaps {
    /// Reads `clientCapabilities`; everything off when `allowed` is false
    /// (`IAC_CODE_CLIENT_TOOLS=off`).
    pub fn of(capabilities: &Value, allowed: bool) -> ClientCaps {
        let on = |v: &Value| allowed && v.as_bool() == Some(true);
        ClientCaps {
            read: on(&capabilities["fs"]["readTextFile"]),
            write: on(&capabilities["fs"]["writeTextFile"]),
            terminal: on(&capabilities["terminal"]),
            boolean_options: capabilities["session"]["configOptions"]["boolean"].is_object(),
            elicit_form: capabilities["elicitation"]["form"].is_object(),
        }
    }
}

/// `path` as the client's methods take it (a JSON string), or why it cannot be sent: a
/// name that is not UTF-8 (a link's target, say) is the model's error, never a panic.
fn utf8(path: &Path) -> Result<&str, String> {
    path.to_str().ok_or_else(|| {
        format!(
            "{} is not valid UTF-8: the editor's file system and terminals take UTF-8 paths only",
            path.display()
        )
    })
}

/// The client's file system for one session.
pub struct AcpFiles {
    pub outbox: Outbox,
    pub session_id: String,
    pub caps: ClientCaps,
}

impl AcpFiles {
    /// Sends one request to the client and waits for its answer, the cancel or the timeout.
    fn call(&self, method: &str, params: Value, cancel: &CancelToken) -> Result<Value, String> {
        if cancel.is_cancelled() {
            return Err("cancelled".to_string());
        }
        let (id, reply) = self.outbox.request(method, &params, Some(&self.session_id));
        let give_up = |why: String| {
            self.outbox.forget(&id);
            // The client may stop working on it; it answers anyway, to nobody.
            self.outbox.notify(
                "$/cancel_request",
                &json!({ "requestId": id }),
                Some(&self.session_id),
            );
            Err(why)
        };
        select! {
            recv(reply) -> reply => match reply {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(error)) => Err(format!(
                    "the editor refused {method}: {} (code {})",
                    error.message, error.code
                )),
                Err(_) => Err(format!("the editor went away during {method}")),
            },
            recv(cancel.channel()) -> _ => give_up("cancelled".to_string()),
            recv(after(CLIENT_TIMEOUT)) -> _ => give_up(format!(
                "the editor did not answer {method} within {} s",
                CLIENT_TIMEOUT.as_secs()
            )),
        }
    }
}

impl ClientTools for AcpFiles {
    fn reads(&self) -> bool {
        self.caps.read
    }

    fn writes(&self) -> bool {
        self.caps.write
    }

    fn read(
        &self,
        path: &Path,
        line: Option<u32>,
        limit: Option<u32>,
        cancel: &CancelToken,
    ) -> Result<String, String> {
        let mut params = Map::new();
        params.insert("sessionId".into(), json!(self.session_id));
        params.insert("path".into(), json!(utf8(path)?));
        if let Some(line) = line {
            params.insert("line".into(), json!(line));
        }
        if let Some(limit) = limit {
            params.insert("limit".into(), json!(limit));
        }
        let result = self.call("fs/read_text_file", Value::Object(params), cancel)?;
        result["content"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| "the editor's fs/read_text_file answer has no content".to_string())
    }

    fn write(&self, path: &Path, content: &str, cancel: &CancelToken) -> Result<(), String> {
        let params = json!({"sessionId": self.session_id, "path": utf8(path)?, "content": content});
        self.call("fs/write_text_file", params, cancel).map(|_| ())
    }

    fn terminals(&self) -> bool {
        self.caps.terminal
    }

    fn run(
        &self,
        run: &TerminalCommand,
        cancel: &CancelToken,
        started: &dyn Fn(&str),
    ) -> Result<TerminalRun, String> {
        let TerminalCommand { command, cwd, env, output_limit, timeout } = *run;
        let env: Vec<Value> =
            env.iter().map(|(name, value)| json!({"name": name, "value": value})).collect();
        if cancel.is_cancelled() {
            return Err("cancelled".to_string());
        }
        let (shell, args) = (tools::shell(), tools::shell_args(command));
        let params = json!({"sessionId": self.session_id, "command": shell, "args": args,
                            "env": env, "cwd": utf8(cwd)?, "outputByteLimit": output_limit});
        let (id, reply) = self.outbox.request("terminal/create", &params, Some(&self.session_id));
        let created = select! {
            recv(reply) -> reply => match reply {
                Ok(Ok(created)) => created,
                Ok(Err(error)) => return Err(format!("the editor refused terminal/create: {}", error.message)),
                Err(_) => return Err("the editor went away during terminal/create".to_string()),
            },
            recv(cancel.channel()) -> _ => {
                // The terminal may still be created: kill and release it when its id comes.
                self.clean_up_later(id, reply);
                return Err("cancelled".to_string());
            }
            recv(after(CLIENT_TIMEOUT)) -> _ => {
                self.clean_up_later(id, reply);
                return Err(format!("the editor did not create a terminal within {} s", CLIENT_TIMEOUT.as_secs()));
            }
        };
        let terminal = created["terminalId"]
            .as_str()
            .ok_or("the editor's terminal/create answer has no terminalId")?
            .to_string();
        started(&terminal);
        let on = json!({"sessionId": self.session_id, "terminalId": terminal});
        let run =
            self.wait_and_read(&on, timeout, cancel).map(|run| TerminalRun { terminal, ..run });
        // Always released, whatever happened; nobody needs its answer.
        self.fire("terminal/release", &on);
        run
    }
}

impl AcpFiles {
    /// Waits for the command's end (killing it at the timeout or a cancel), then reads what
    /// it printed.
    fn wait_and_read(
        &self,
        on: &Value,
        timeout: Duration,
        cancel: &CancelToken,
    ) -> Result<TerminalRun, String> {
        let (id, exited) =
            self.outbox.request("terminal/wait_for_exit", on, Some(&self.session_id));
        let timed_out = select! {
            recv(exited) -> reply => match reply {
                Ok(Ok(_)) => false,
                Ok(Err(error)) => return Err(format!("the editor refused terminal/wait_for_exit: {}", error.message)),
                Err(_) => return Err("the editor went away".to_string()),
            },
            recv(cancel.channel()) -> _ => {
                self.outbox.forget(&id);
                let abandoned = json!({ "requestId": id });
                self.outbox.notify("$/cancel_request", &abandoned, Some(&self.session_id));
                self.fire("terminal/kill", on);
                return Err("cancelled".to_string());
            }
            recv(after(timeout)) -> _ => {
                self.outbox.forget(&id);
                true
            }
        };
        if timed_out {
            self.call("terminal/kill", on.clone(), cancel)?;
        }
        let output = self.call("terminal/output", on.clone(), cancel)?;
        let status = &output["exitStatus"];
        Ok(TerminalRun {
            terminal: String::new(),
            output: output["output"].as_str().unwrap_or("").to_string(),
            truncated: output["truncated"].as_bool().unwrap_or(false),
            exit_code: status["exitCode"].as_i64(),
            signal: status["signal"].as_str().map(str::to_string),
            timed_out,
        })
    }

    /// Once the abandoned `terminal/create` answers, kills and releases the terminal it made
    /// (bounded: a client that never answers leaves nothing to clean).
    fn clean_up_later(
        &self,
        created_id: crate::jsonrpc::RequestId,
        reply: crossbeam_channel::Receiver<Result<Value, crate::jsonrpc::RpcError>>,
    ) {
        let (outbox, session_id) = (self.outbox.clone(), self.session_id.clone());
        let _ = std::thread::Builder::new().name("terminal-cleanup".into()).spawn(move || {
            let answer = reply.recv_timeout(CLIENT_TIMEOUT);
            outbox.forget(&created_id);
            let Ok(Ok(created)) = answer else { return };
            let Some(terminal) = created["terminalId"].as_str() else { return };
            let on = json!({"sessionId": session_id, "terminalId": terminal});
            for method in ["terminal/kill", "terminal/release"] {
                let (id, _reply) = outbox.request(method, &on, Some(&session_id));
                outbox.forget(&id);
            }
        });
    }

    /// Sends a request whose answer nobody waits for (on a cancel: the turn ends at once).
    fn fire(&self, method: &str, params: &Value) {
        let (id, _reply) = self.outbox.request(method, params, Some(&self.session_id));
        self.outbox.forget(&id);
    }
}
