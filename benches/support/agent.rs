//! The benches' ACP client: the real binary spawned over stdio with a clean environment,
//! requests sent and their responses read by prefix (cheap, so that the client does not
//! take the CPU the server under test needs).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

/// The bench build of the binary.
pub const BIN: &str = env!("CARGO_BIN_EXE_iac-code");

pub struct Agent {
    pub child: Child,
    pub stdin: ChildStdin,
    pub stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Agent {
    pub fn spawn(env: &[(&str, String)]) -> Agent {
        Agent::spawn_bin(Path::new(BIN), env)
    }

    pub fn spawn_bin(bin: &Path, env: &[(&str, String)]) -> Agent {
        let home = std::env::temp_dir().join("iac-code-bench");
        std::fs::create_dir_all(&home).unwrap();
        let mut cmd = Command::new(bin);
        cmd.arg("acp").env_clear().env("HOME", &home).env("IAC_CODE_LOG", "warn");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child =
            cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::with_capacity(1 << 20, child.stdout.take().unwrap());
        Agent { child, stdin, stdout, next_id: 0 }
    }

    pub fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        id
    }

    /// Reads lines until the response to `id`; returns how many other lines came first.
    /// Kept cheap (bytes, a prefix test), so that the client does not take the CPU the
    /// server under test needs: the server writes `jsonrpc` then `id` then `result` or
    /// `error` (a parse below checks the answer whole).
    pub fn wait(&mut self, id: u64) -> (usize, Value) {
        let result = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":");
        let error = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":");
        let mut line = Vec::new();
        let mut others = 0;
        loop {
            line.clear();
            assert!(self.stdout.read_until(b'\n', &mut line).unwrap() > 0, "agent exited");
            if line.starts_with(result.as_bytes()) || line.starts_with(error.as_bytes()) {
                let response: Value = serde_json::from_slice(&line).unwrap();
                assert_eq!(response["id"], id, "{response}");
                return (others, response);
            }
            others += 1;
        }
    }

    /// A new session in `cwd`; its id.
    pub fn new_session(&mut self, cwd: &Path) -> String {
        let session = self.call("session/new", json!({"cwd": cwd, "mcpServers": []}));
        session["result"]["sessionId"].as_str().unwrap().to_string()
    }

    /// Sends the prompt "go" to `session`; the request id.
    pub fn prompt(&mut self, session: &str) -> u64 {
        let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]});
        self.send("session/prompt", prompt)
    }

    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.wait(id).1
    }

    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
