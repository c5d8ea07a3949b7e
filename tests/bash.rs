//! The bash tool: output and exit codes, caps, live output, and a timeout or cancel that
//! kills the whole process tree (checked in /proc, not by sleeping).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, Permission};
use crate::support::fake_llm::{FakeLlm, text_reply, tool_reply};
use crate::support::procs::alive;
use crate::support::workspace::Workspace;
use crate::tools::{ToolRun, run_tool};

/// A command that starts background processes in every way that escapes a naive kill
/// (plain `&`, `nohup`, `setsid` with an orphaned parent, a double fork, `setsid` with a
/// cleared environment), writes their pids to `pids`, says `ready`, and waits.
const SPAWNER: &str = "sleep 1000 & echo $! > pids; \
    nohup sleep 1001 >/dev/null 2>&1 & echo $! >> pids; \
    (setsid sleep 1002 >/dev/null 2>&1 & echo $! >> pids); \
    ( (sleep 1003 >/dev/null 2>&1 & echo $! >> pids) & ); \
    setsid env -i sleep 1004 >/dev/null 2>&1 & echo $! >> pids; \
    while [ $(wc -l < pids) -lt 5 ]; do :; done; echo ready; wait";

fn bash(ws: &Workspace, args: Value) -> ToolRun {
    run_tool(ws, "bash", args, Permission::AllowOnce)
}

fn pids(ws: &Workspace) -> Vec<u32> {
    ws.read("pids").lines().map(|l| l.trim().parse().unwrap()).collect()
}

#[test]
fn output_and_exit_codes_reach_the_model() {
    let ws = Workspace::new("bash-basic");
    let run = bash(&ws, json!({"command": "echo out; echo err >&2; pwd"}));
    assert_eq!(run.status, "completed");
    let cwd = ws.project().display().to_string();
    assert_eq!(run.result, format!("STDOUT:\nout\n{cwd}\nSTDERR:\nerr\nExit code: 0"));
    assert!(run.asked.is_empty(), "a read-tier command runs unasked");

    // A command the gate cannot see through asks, and never offers "always".
    let run = bash(&ws, json!({"command": "eval 'echo out'"}));
    assert_eq!(run.result, "STDOUT:\nout\nExit code: 0");
    assert_eq!(run.asked.len(), 1, "an opaque command asks first");
    let question = &run.asked[0]["params"];
    assert_eq!(question["toolCall"]["kind"], "execute");
    assert!(question["toolCall"]["title"].as_str().unwrap().starts_with("eval 'echo out'"));
    let options: Vec<&str> = question["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["allow_once", "reject_once"], "no blanket 'always' for commands");

    let run = bash(&ws, json!({"command": "read x; echo \"got[$x]\"; exit 3"}));
    assert_eq!(run.status, "failed", "a non-zero exit is an error result");
    assert_eq!(run.result, "STDOUT:\ngot[]\nExit code: 3", "stdin is empty, not inherited");
}

#[test]
fn huge_output_keeps_head_and_tail() {
    let ws = Workspace::new("bash-huge");
    let run = bash(
        &ws,
        json!({"command": "echo START; head -c 5000000 /dev/zero | tr '\\0' x; echo; echo END"}),
    );
    assert_eq!(run.status, "completed");
    assert!(run.result.starts_with("STDOUT:\nSTART\nxxx"), "{}", &run.result[..40]);
    assert!(
        run.result.ends_with("xxx\nEND\nExit code: 0"),
        "{}",
        &run.result[run.result.len() - 40..]
    );
    assert!(run.result.contains("bytes omitted"));
    assert!(run.result.len() < 50_000, "{}", run.result.len());
}

#[test]
fn timeout_kills_the_whole_tree() {
    let ws = Workspace::new("bash-timeout");
    let run = bash(&ws, json!({"command": SPAWNER, "timeout": 1}));
    assert_eq!(run.status, "failed");
    assert!(run.result.starts_with("Command timed out after 1 s"), "{}", run.result);
    assert!(run.result.contains("ready"), "output before the timeout is kept: {}", run.result);
    let pids = pids(&ws);
    assert_eq!(pids.len(), 5);
    for pid in pids {
        assert!(!alive(pid), "pid {pid} survived the timeout");
    }
}

#[test]
fn cancel_kills_the_whole_tree_and_streams_output_before() {
    let ws = Workspace::new("bash-cancel");
    let llm = FakeLlm::start(vec![
        tool_reply("b1", "bash", json!({"command": format!("echo starting; {SPAWNER}")})),
        text_reply("after"),
    ]);
    // Asked and allowed: outside the sandbox, its pids are the host's.
    let (mut acp, session) = AcpProcess::session_in_mode(&ws, &llm, "default");
    let id = acp.start_prompt(&session, "go");
    // Live output arrives while the command runs; "ready" means every process exists.
    acp.answer_until_output("ready", |text| assert!(text.starts_with("starting"), "{text}"));
    let pids = pids(&ws);
    assert!(pids.iter().all(|p| alive(*p)), "all five are running before the cancel");
    let started = Instant::now();
    acp.notify("session/cancel", json!({"sessionId": session}));
    let (msgs, response) = acp.until_response(&id);
    let latency = started.elapsed();
    assert_eq!(response["result"]["stopReason"], "cancelled");
    assert!(latency < Duration::from_secs(5), "{latency:?}");
    for pid in pids {
        assert!(!alive(pid), "pid {pid} survived the cancel");
    }
    let last =
        msgs.iter().rev().find(|m| m["params"]["update"]["sessionUpdate"] == "tool_call_update");
    assert_eq!(last.unwrap()["params"]["update"]["status"], "failed");
    assert_eq!(llm.requests().len(), 1, "no LLM request after the cancel");
}

#[test]
fn background_processes_holding_the_output_are_stopped_and_daemons_named() {
    let ws = Workspace::new("bash-background");
    // The shell exits at once; one child keeps stdout open, the other redirected it.
    let command =
        "sleep 300 & echo $! > pids; nohup sleep 301 >/dev/null 2>&1 & echo $! >> pids; echo done";
    let llm = FakeLlm::start(vec![
        tool_reply("b1", "bash", json!({"command": command})),
        text_reply("after"),
    ]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    let (_, response) = acp.prompt(&session, "go");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let result = crate::tools::tool_result(&llm, 1);
    assert!(result.starts_with("STDOUT:\ndone\n"), "{result}");
    assert!(result.contains("stopped 1 background process(es)"), "{result}");
    let pids = pids(&ws);
    assert!(!alive(pids[0]), "the pipe holder was stopped");
    assert!(alive(pids[1]), "a redirected daemon keeps running while the session lives");
    assert!(
        result.contains(&format!("left running: pid {} `sleep 301`", pids[1])),
        "the daemon is named: {result}"
    );
    // Closing the session stops what its calls left running.
    acp.call("session/close", json!({"sessionId": session}));
    assert!(!alive(pids[1]), "the daemon was stopped with its session");
}
