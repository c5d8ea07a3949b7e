//! The fake MCP server over stdio, as a real child process: the re-executed test binary
//! runs `fake_mcp_stdio_entry` (see the module above), which calls [`serve`]. Its stdout
//! belongs to libtest, so the launch command (`/bin/sh -c 'exec 3>&1 1>&2; exec "$0" "$@"'`)
//! moves the client's pipe to fd 3 and the harness's chatter to stderr. [`stdio_entry`]
//! writes the script to a file and gives the ACP `McpServer` entry that launches it;
//! [`StdioHandles`] reads back what the server received and finds its processes.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use super::engine::{Engine, Incoming, Peer, Pending, Reply, error_response, list_changed};
use super::script::Script;

/// The variable naming the script file (not `IAC_CODE_*`: the client strips those).
pub const SCRIPT_ENV: &str = "FAKE_MCP_SCRIPT";
/// The variable naming the log of received messages.
pub const LOG_ENV: &str = "FAKE_MCP_LOG";
/// The libtest name of the entry test in the integration binary.
pub const ENTRY_TEST: &str = "support::fake_mcp::fake_mcp_stdio_entry";
/// The exit code of a [`Behaviour::Crash`](super::Behaviour::Crash) call.
pub const CRASH_EXIT_CODE: i32 = 3;
/// The line written first with `garbage_first`.
pub const GARBAGE_LINE: &str = "fake mcp: this line is not JSON-RPC";
/// The shell line of the launch command: fd 3 = the client's pipe, stdout = stderr.
const SHELL_LINE: &str = r#"exec 3>&1 1>&2; exec "$0" "$@""#;

/// Distinguishes the servers set up by one test process.
static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A stdio server as set up by [`stdio_entry`]: how it is launched and where it records.
#[derive(Debug, Clone)]
pub struct StdioHandles {
    pub name: String,
    /// `/bin/sh`.
    pub command: String,
    pub args: Vec<String>,
    /// `FAKE_MCP_SCRIPT` and `FAKE_MCP_LOG`.
    pub env: Vec<(String, String)>,
    /// The log of received messages: one JSON per line, shared by every process launched
    /// from this entry (a restart appends).
    pub log: PathBuf,
    /// A unique argument on the server's command line (see [`StdioHandles::pids`]).
    pub marker: String,
}

/// Sets up a stdio server named `name` playing `script`: writes the script to a JSON file
/// in `dir` (the log goes next to it, created when the server starts) and returns the ACP
/// `McpServer` stdio entry (`{"name","command","args","env":[{"name","value"}]}`) with the
/// handles.
pub fn stdio_entry(name: &str, script: &Script, dir: &Path) -> (Value, StdioHandles) {
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let pid = std::process::id();
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let stem = format!("fake-mcp-{safe}-{pid}-{n}");
    std::fs::create_dir_all(dir).expect("fake mcp: cannot create the script directory");
    let script_path = dir.join(format!("{stem}.script.json"));
    let log = dir.join(format!("{stem}.log"));
    let text = serde_json::to_string_pretty(script).expect("fake mcp: script to JSON");
    std::fs::write(&script_path, text).expect("fake mcp: cannot write the script");
    let marker = format!("fake-mcp-marker-{stem}");
    let exe = std::env::current_exe().expect("fake mcp: no current test executable");
    let args = vec![
        "-c".to_owned(),
        SHELL_LINE.to_owned(),
        exe.display().to_string(),
        ENTRY_TEST.to_owned(),
        "--exact".to_owned(),
        "--nocapture".to_owned(),
        "--test-threads=1".to_owned(),
        "--skip".to_owned(),
        marker.clone(),
    ];
    let env = vec![
        (SCRIPT_ENV.to_owned(), script_path.display().to_string()),
        (LOG_ENV.to_owned(), log.display().to_string()),
    ];
    let handles = StdioHandles {
        name: name.to_owned(),
        command: "/bin/sh".to_owned(),
        args,
        env,
        log,
        marker,
    };
    (handles.acp_entry(), handles)
}

impl StdioHandles {
    /// The ACP `McpServer` stdio entry.
    pub fn acp_entry(&self) -> Value {
        let env: Vec<Value> =
            self.env.iter().map(|(k, v)| json!({"name": k, "value": v})).collect();
        json!({"name": self.name, "command": self.command, "args": self.args, "env": env})
    }

    /// The same server as a `.mcp.json` entry: `{"command","args","env":{"K":"V"}}`.
    pub fn mcp_json_entry(&self) -> Value {
        let env: serde_json::Map<String, Value> =
            self.env.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        json!({"command": self.command, "args": self.args, "env": env})
    }

    /// Every message received so far (by every process of this entry), in order.
    pub fn received(&self) -> Vec<Value> {
        super::received(&self.log)
    }

    /// The first received message satisfying `predicate`, waiting up to `timeout`.
    pub fn wait_for(&self, predicate: impl Fn(&Value) -> bool, timeout: Duration) -> Option<Value> {
        super::wait_for(&self.log, predicate, timeout)
    }

    /// The live processes (the shell, then the test binary it became) carrying the marker.
    pub fn pids(&self) -> Vec<u32> {
        let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
        let mut pids: Vec<u32> = entries
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                    cmdline.split(|b| *b == 0).any(|arg| arg == self.marker.as_bytes())
                })
            })
            .filter(|pid| super::super::procs::alive(*pid))
            .collect();
        pids.sort_unstable();
        pids
    }
}

/// Where the server writes: the client's pipe on fd 3, one message per line.
struct Out(Mutex<File>);

impl Out {
    fn line(&self, text: &str) {
        let mut file = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        // A failed write means the client went away; stdin's EOF ends the server.
        let _ = file.write_all(format!("{text}\n").as_bytes());
    }

    fn send(&self, message: &Value) {
        self.line(&message.to_string());
    }
}

struct StdioPeer {
    out: Arc<Out>,
    pending: Arc<Pending>,
}

impl Peer for StdioPeer {
    fn notify(&self, message: Value) {
        self.out.send(&message);
    }

    fn request(&self, message: Value) -> Option<Value> {
        self.pending.expect(&message);
        self.out.send(&message);
        self.pending.wait(&message)
    }
}

/// Runs the server: the script from `script_path`, received messages appended to `log`,
/// protocol on fd 3 and stdin. Returns the exit code (0 at stdin's EOF); a crashing call
/// exits the process itself.
pub fn serve(script_path: &Path, log: Option<&Path>) -> i32 {
    let text = std::fs::read_to_string(script_path).expect("fake mcp: cannot read the script");
    let script: Script = serde_json::from_str(&text).expect("fake mcp: bad script");
    let fd3 = OpenOptions::new().write(true).open("/proc/self/fd/3").expect("fake mcp: no fd 3");
    let out = Arc::new(Out(Mutex::new(fd3)));
    let mut log = log.map(|path| {
        OpenOptions::new().create(true).append(true).open(path).expect("fake mcp: cannot open log")
    });
    if script.garbage_first {
        out.line(GARBAGE_LINE);
    }
    let engine = Arc::new(Engine::new(script));
    let pending = Arc::new(Pending::default());
    for line in io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let message: Value =
            serde_json::from_str(line).unwrap_or_else(|_| Value::String(line.to_owned()));
        if let Some(log) = &mut log {
            // One write per line, flushed (a File has no buffer): tests read it at once.
            let _ = log.write_all(format!("{message}\n").as_bytes());
        }
        match Incoming::of(&message) {
            Incoming::Request { id, method, params } => {
                let (engine, out, pending) =
                    (Arc::clone(&engine), Arc::clone(&out), Arc::clone(&pending));
                let run = move || {
                    let peer = StdioPeer { out: Arc::clone(&out), pending };
                    match engine.handle(&id, &method, &params, &peer) {
                        Reply::Answer(answer) => out.send(&answer),
                        // The list changes during the call: the notification comes first, so
                        // the client knows of it by the time it has the answer.
                        Reply::Changed(answer) => {
                            engine.switch_tools();
                            out.send(&list_changed());
                            out.send(&answer);
                        }
                        Reply::Hang => {}
                        Reply::Crash => std::process::exit(CRASH_EXIT_CODE),
                    }
                };
                // A call may wait for the client (roots/list, ping): on its own thread, so
                // this loop goes on reading the answer. Everything else answers in order.
                if message["method"] == "tools/call" {
                    thread::spawn(run);
                } else {
                    run();
                }
            }
            Incoming::Response { id } => {
                pending.deliver(&id, &message);
            }
            Incoming::Notification => {}
            Incoming::Invalid if message.is_string() => {
                out.send(&error_response(&Value::Null, -32700, "parse error"));
            }
            Incoming::Invalid => {}
        }
    }
    pending.close();
    0
}
