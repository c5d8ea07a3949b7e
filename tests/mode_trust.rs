//! A session never starts in a mode wider than default unless this node's user put it
//! there: a mode record from an import, from another tenant of a shared Redis or planted
//! there by hand is history, not restored (`sessions import --keep-mode` restores it
//! explicitly); imports, exports and migrations check every record as the journal reader
//! does, and a bad one is refused naming it, with nothing half written.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, Permission};
use crate::support::command::{code_and_texts, run_with_input};
use crate::support::fake_llm::{FakeLlm, text_reply, tool_reply};
use crate::support::redis::Redis;
use crate::support::workspace::Workspace;

const BYPASS_LINE: &str =
    r#"{"v":1,"ts":"2025-01-01T00:00:00Z","type":"mode","mode":"bypass_permissions"}"#;

/// `iac-code sessions <args>` with `input` on stdin and `env` added: (exit code, stdout,
/// stderr).
fn sessions(
    ws: &Workspace,
    args: &[&str],
    input: &str,
    env: &[(&str, &str)],
) -> (i32, String, String) {
    let mut command = crate::support::command::iac_code(ws);
    command.arg("sessions").args(args).envs(env.iter().copied());
    code_and_texts(&run_with_input(&mut command, input))
}

/// An export of session `id` in the project whose last line is `last`.
fn export_ending_in(ws: &Workspace, id: &str, last: &str) -> String {
    let when = "2025-01-01T00:00:00Z";
    let cwd = ws.project();
    let lines = [
        json!({"type": "meta", "v": 1, "sessionId": id, "cwd": cwd, "createdAt": when,
               "updatedAt": when, "messages": 2}),
        json!({"v": 1, "ts": when, "type": "start", "cwd": cwd, "createdAt": when}),
        json!({"v": 1, "ts": when, "type": "user", "text": "hello"}),
        json!({"v": 1, "ts": when, "type": "assistant", "text": "hi"}),
    ];
    let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    text.push_str(last);
    text.push('\n');
    text
}

/// The fake LLM asking for an opaque command (which asks in default mode) `n` times.
fn opaque_commands(n: usize) -> FakeLlm {
    let mut script = Vec::new();
    for i in 0..n {
        script.push(tool_reply(&format!("b{i}"), "bash", json!({"command": "eval true"})));
        script.push(text_reply("done"));
    }
    FakeLlm::start(script)
}

/// Loads `session` on `acp`: the mode it starts in, then how many questions its next
/// prompt (one opaque command) asked.
fn mode_and_questions(acp: &mut AcpProcess, session: &str, ws: &Workspace) -> (Value, usize) {
    let (_, loaded) = acp.open_session("session/load", session, &ws.project());
    let mode = loaded["result"]["modes"]["currentModeId"].clone();
    assert!(!mode.is_null(), "{loaded}");
    acp.set_permission(Permission::RejectOnce);
    let (msgs, response) = acp.prompt(session, "run it");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    (mode, msgs.iter().filter(|m| m["method"] == "session/request_permission").count())
}

fn uuid(n: u8) -> String {
    format!("7e57{n:04x}-0000-4000-8000-000000000000")
}

#[test]
fn an_imported_mode_is_history_unless_keep_mode_restores_it() {
    let ws = Workspace::new("mode-import");
    let (plain, kept) = (uuid(1), uuid(2));
    let exported = export_ending_in(&ws, &plain, BYPASS_LINE);
    let (code, said, err) = sessions(&ws, &["import"], &exported, &[]);
    assert_eq!(code, 0, "{err}");
    let llm = opaque_commands(2);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (mode, asked) = mode_and_questions(&mut acp, &plain, &ws);
    assert_eq!(mode, "default", "the imported bypass is not restored");
    assert_eq!(asked, 1, "the opaque command asks");
    assert!(said.contains("bypass_permissions was not set here"), "{said}");
    assert!(said.contains("--keep-mode"), "{said}");

    let exported = export_ending_in(&ws, &kept, BYPASS_LINE);
    let (code, said, err) = sessions(&ws, &["import", "--keep-mode"], &exported, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(said.contains("starts in mode bypass_permissions"), "{said}");
    let (mode, asked) = mode_and_questions(&mut acp, &kept, &ws);
    assert_eq!(mode, "bypass_permissions", "--keep-mode restores it");
    assert_eq!(asked, 0);
    // What this node's user set is its own: a fork starts in it too.
    let forked =
        acp.call("session/fork", json!({"sessionId": kept, "cwd": ws.project(), "mcpServers": []}));
    assert_eq!(forked["result"]["modes"]["currentModeId"], "bypass_permissions", "{forked}");
    use std::os::unix::fs::PermissionsExt;
    let key = std::fs::metadata(ws.config().join("session-key")).expect("the key was made");
    assert_eq!(key.permissions().mode() & 0o777, 0o600);
}

#[test]
fn an_import_checks_every_line_as_the_journal_reader_does_and_writes_nothing_on_a_bad_one() {
    let ws = Workspace::new("mode-import-bad");
    let id = uuid(3);
    for (last, why) in [
        (r#"{"type":"mode","mode":"bypass_permissions"}"#, "missing field"),
        (r#"{"v":1,"ts":"t","type":"shell","command":"touch x"}"#, "unknown variant"),
        (r#"{"v":7,"ts":"t","type":"clear"}"#, "newer"),
        ("[1,2]", "not a journal record"),
    ] {
        let (code, _, err) = sessions(&ws, &["import"], &export_ending_in(&ws, &id, last), &[]);
        assert_eq!(code, 2, "{last}: {err}");
        assert!(err.contains("line 5 of the input") && err.contains(why), "{last}: {err}");
        let (code, _, _) = sessions(&ws, &["show", &id], "", &[]);
        assert_eq!(code, 1, "nothing was imported: {last}");
    }
    let (code, _, err) = sessions(&ws, &["export", &id, "--keep-mode"], "", &[]);
    assert_eq!(code, 2, "--keep-mode is for import only: {err}");
}

/// The longest line `sessions import` reads (`record::MAX_LINE`).
const IMPORT_LINE_CAP: usize = 64 << 20;

/// The peak resident size of a running process, from `/proc/<pid>/status`.
fn peak_rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM");
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

#[test]
fn an_import_refuses_a_line_over_the_cap_by_its_number_holding_no_more_of_it() {
    use std::io::Write as _;
    let ws = Workspace::new("import-long-line");
    let id = uuid(4);
    let good = export_ending_in(&ws, &id, r#"{"v":1,"ts":"t","type":"clear"}"#);
    let (code, _, err) = sessions(&ws, &["import"], &good, &[]);
    assert_eq!(code, 0, "{err}");
    let (_, shown, _) = sessions(&ws, &["show", &id, "--json"], "", &[]);

    // The same session id again, its third line three times the cap (one 1 MiB piece at a
    // time, so that this test does not hold it either).
    let mut child = crate::support::command::iac_code(&ws)
        .args(["sessions", "import"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let head: String = good.lines().take(2).map(|l| format!("{l}\n")).collect();
    stdin.write_all(head.as_bytes()).unwrap();
    let piece = vec![b'x'; 1 << 20];
    for _ in 0..3 * (IMPORT_LINE_CAP >> 20) {
        stdin.write_all(&piece).unwrap();
    }
    // All of it was taken but what a pipe holds; the line is not over yet, so the child
    // waits for more: its peak now is what reading the line cost.
    let peak = peak_rss_bytes(child.id());
    stdin.write_all(b"\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("line 3 of the input is longer than 64 MiB")
            && err.contains("nothing imported"),
        "{err}"
    );
    assert!(
        peak < (3 * IMPORT_LINE_CAP / 2) as u64,
        "a {} MiB line peaked at {} MiB",
        3 * (IMPORT_LINE_CAP >> 20),
        peak >> 20
    );
    let (code, after, _) = sessions(&ws, &["show", &id, "--json"], "", &[]);
    assert_eq!((code, after), (0, shown), "what was stored is still there, unchanged");
}

/// A node on `redis` named `name`, with this workspace's config dir unless `config`.
fn node(
    ws: &Workspace,
    llm: &FakeLlm,
    redis: &Redis,
    name: &str,
    config: Option<&str>,
) -> AcpProcess {
    let url = redis.url();
    let mut env = vec![
        ("IAC_CODE_SESSION_STORE", url.as_str()),
        ("IAC_CODE_NODE_ID", name),
        ("IAC_CODE_REDIS_PREFIX", "iac:"),
    ];
    if let Some(config) = config {
        env.push(("IAC_CODE_CONFIG_DIR", config));
    }
    let mut acp = AcpProcess::spawn_with_llm(ws, llm, &env);
    acp.initialize();
    acp
}

fn close(mut acp: AcpProcess) {
    acp.close_stdin();
    assert!(acp.wait_exit(Duration::from_secs(10)).is_some());
}

/// Appends `line` to `session`'s stream as a node would (its sequence number too).
fn plant(redis: &Redis, session: &str, line: &str) {
    let stream = format!("iac:s:{session}:j");
    let added = redis.call(&[b"XADD", stream.as_bytes(), b"*", b"r", line.as_bytes()]);
    assert!(added.is_some_and(|r| r.starts_with('$')), "planted");
    let meta = format!("iac:s:{session}:m");
    assert!(redis.call(&[b"HINCRBY", meta.as_bytes(), b"seq", b"1"]).is_some());
}

#[test]
fn a_mode_another_tenant_of_the_redis_wrote_never_widens_a_loaded_session() {
    let ws = Workspace::new("mode-redis");
    let Some(redis) = Redis::start(ws.root()) else { return };
    let llm = opaque_commands(2);
    let mut a = node(&ws, &llm, &redis, "node-a", None);
    let (planted, other, own) =
        (a.new_session(&ws.project()), a.new_session(&ws.project()), a.new_session(&ws.project()));
    a.call("session/set_mode", json!({"sessionId": own, "modeId": "bypass_permissions"}));
    close(a);
    plant(&redis, &planted, BYPASS_LINE);
    // Another tenant of the same Redis (its own config dir, so its own key) sets a mode.
    let tenant_config = ws.root().join("tenant-config");
    let mut tenant = node(&ws, &llm, &redis, "tenant", tenant_config.to_str());
    tenant.open_session("session/load", &other, &ws.project());
    tenant.call("session/set_mode", json!({"sessionId": other, "modeId": "bypass_permissions"}));
    close(tenant);

    let mut b = node(&ws, &llm, &redis, "node-b", None);
    let (mode, asked) = mode_and_questions(&mut b, &planted, &ws);
    assert_eq!((mode, asked), (json!("default"), 1), "a planted record is history");
    let (mode, asked) = mode_and_questions(&mut b, &other, &ws);
    assert_eq!((mode, asked), (json!("default"), 1), "another key's record is history");
    let (_, loaded) = b.open_session("session/load", &own, &ws.project());
    assert_eq!(loaded["result"]["modes"]["currentModeId"], "bypass_permissions", "its own mode");
}

#[test]
fn a_redis_entry_holding_a_line_break_is_refused_by_export_and_migrate() {
    let ws = Workspace::new("mode-redis-newline");
    let Some(redis) = Redis::start(ws.root()) else { return };
    let llm = FakeLlm::start(vec![]);
    let mut a = node(&ws, &llm, &redis, "node-a", None);
    let session = a.new_session(&ws.project());
    close(a);
    let user = r#"{"v":1,"ts":"2025-01-01T00:00:00Z","type":"user","text":"hi"}"#;
    plant(&redis, &session, &format!("{user}\n{BYPASS_LINE}"));
    let url = redis.url();
    let on_redis = [("IAC_CODE_SESSION_STORE", url.as_str()), ("IAC_CODE_REDIS_PREFIX", "iac:")];
    let (code, out, err) = sessions(&ws, &["export", &session], "", &on_redis);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("record 2") && err.contains("line break"), "{err}");
    assert!(out.is_empty(), "nothing half exported: {out}");
    let (code, out, err) = sessions(&ws, &["migrate", "--to", "file"], "", &on_redis);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains(&session) && err.contains("record 2") && err.contains("not copied"),
        "{err}"
    );
    assert!(out.contains("copied 0 sessions") && out.contains("1 refused"), "{out}");
    let on_file = [("IAC_CODE_SESSION_STORE", "file")];
    let (code, _, _) = sessions(&ws, &["show", &session], "", &on_file);
    assert_eq!(code, 1, "nothing was copied");
}
