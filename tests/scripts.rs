//! The commands for scripts: one-shot mode (`-p`) with its output formats, permission
//! modes and exit codes; `doctor` against a live, a dead and a refusing provider;
//! `sessions list|show|delete`; and install.sh into a temporary prefix.

use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::command::on_file_store;
use crate::support::command::{BIN, TestCommand, iac_code, run_with_input};
use crate::support::fake_llm::{Event, FakeLlm, Reply, text_reply, tool_reply};
use crate::support::http_fixture::{HttpFixture, Route};
use crate::support::workspace::Workspace;

/// Runs the binary in the project with a clean environment, the fake LLM's, and `env`.
fn run(
    ws: &Workspace,
    llm: Option<&FakeLlm>,
    args: &[&str],
    env: &[(&str, &str)],
    stdin: &str,
) -> Output {
    let mut command = iac_code(ws);
    command.args(args);
    if let Some(llm) = llm {
        command.fake_llm(llm);
    }
    run_with_input(command.envs(env.iter().copied()), stdin)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn one_shot_text_streams_only_the_answer_to_stdout() {
    let ws = Workspace::new("oneshot-text");
    let llm = FakeLlm::start(vec![text_reply("Use a remote backend.")]);
    let out = run(&ws, Some(&llm), &["-p", "How do I share state?", "--debug"], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Use a remote backend.\n");
    assert!(stderr(&out).contains(" INFO "), "logs go to stderr: {}", stderr(&out));
    assert_eq!(llm.requests()[0].body["messages"][1]["content"], "How do I share state?");
}

#[test]
fn one_shot_json_and_stream_json() {
    let ws = Workspace::new("oneshot-json");
    let llm = FakeLlm::start(vec![text_reply("Plan looks fine."), text_reply("Second.")]);
    let out = run(&ws, Some(&llm), &["-p", "-", "--output-format", "json"], &[], "check the plan");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: Value = serde_json::from_str(stdout(&out).trim()).expect("one JSON object");
    assert_eq!(result["type"], "result");
    assert_eq!(result["stopReason"], "end_turn");
    assert_eq!(result["text"], "Plan looks fine.");
    assert_eq!(result["isError"], false);
    assert!(result["usage"]["totalTokens"].as_u64().unwrap() > 0);
    assert_eq!(
        llm.requests()[0].body["messages"][1]["content"],
        "check the plan",
        "read from stdin"
    );

    let out = run(
        &ws,
        Some(&llm),
        &["-p", "again", "--output-format", "stream-json", "--continue"],
        &[],
        "",
    );
    let lines: Vec<Value> =
        stdout(&out).lines().map(|l| serde_json::from_str(l).expect("JSON lines")).collect();
    let text: String =
        lines.iter().filter(|l| l["type"] == "text").map(|l| l["text"].as_str().unwrap()).collect();
    assert_eq!(text, "Second.");
    assert_eq!(lines.last().unwrap()["type"], "result");
    assert_eq!(lines.last().unwrap()["sessionId"], result["sessionId"], "--continue resumed it");
    let requests = llm.requests();
    let roles: Vec<&str> = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
}

#[test]
fn one_shot_exit_codes_follow_the_outcome() {
    let ws = Workspace::new("oneshot-codes");
    let length =
        Reply::Stream(vec![Event::Text("cut".into()), Event::Finish("length"), Event::Done]);
    let refusal = Reply::Stream(vec![Event::Finish("content_filter"), Event::Done]);
    let failure = Reply::Status {
        code: 400,
        body: r#"{"error":{"message":"bad model"}}"#.into(),
        retry_after: None,
    };
    let cases = [
        (length, vec![], 4),
        (refusal, vec![], 5),
        (failure, vec![], 1),
        (tool_reply("l1", "list_files", json!({})), vec![("IAC_CODE_MAX_TURN_REQUESTS", "1")], 3),
    ];
    for (reply, env, want) in cases {
        let llm = FakeLlm::start(vec![reply]);
        let out = run(&ws, Some(&llm), &["-p", "go"], &env, "");
        assert_eq!(
            out.status.code(),
            Some(want),
            "stdout {} stderr {}",
            stdout(&out),
            stderr(&out)
        );
        if want == 1 {
            assert!(
                stderr(&out).contains("iac-code: error: ") && stderr(&out).contains("bad model"),
                "{}",
                stderr(&out)
            );
        }
    }
    let out = run(&ws, None, &["-p", "go"], &[], "");
    assert_eq!(out.status.code(), Some(2), "no provider is a configuration error");
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    let out = run(&ws, None, &["-p", "go", "--output-format", "yaml"], &[], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn one_shot_refuses_what_would_ask_unless_the_mode_allows_it() {
    let ws = Workspace::new("oneshot-permission");
    let write = || tool_reply("w1", "write_file", json!({"path": "main.tf", "content": "x\n"}));
    let llm = FakeLlm::start(vec![write(), text_reply("could not"), write(), text_reply("done")]);
    let out = run(&ws, Some(&llm), &["-p", "write it"], &[], "");
    assert_eq!(out.status.code(), Some(0));
    assert!(!ws.exists("main.tf"), "dont_ask refuses");
    assert!(stderr(&out).contains("nobody can answer"), "{}", stderr(&out));
    let out =
        run(&ws, Some(&llm), &["-p", "write it", "--permission-mode", "accept_edits"], &[], "");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(ws.read("main.tf"), "x\n");
}

#[test]
fn one_shot_never_fetches_an_internal_address_unless_the_mode_allows_it() {
    use crate::support::http_fixture::{HttpFixture, Route};
    let ws = Workspace::new("oneshot-fetch");
    let site = HttpFixture::start(vec![("/meta", Route::ok("text/plain", "TOKEN-123"))]);
    let fetch = || tool_reply("f1", "web_fetch", json!({"url": site.url("/meta")}));
    let llm = FakeLlm::start(vec![
        fetch(),
        text_reply("could not"),
        fetch(),
        text_reply("could not"),
        fetch(),
        text_reply("done"),
    ]);
    for mode in ["dont_ask", "accept_edits"] {
        let out = run(&ws, Some(&llm), &["-p", "fetch it", "--permission-mode", mode], &[], "");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(site.hits().is_empty(), "{mode}: nobody could be asked, so nothing was fetched");
    }
    let args = ["-p", "fetch it", "--permission-mode", "bypass_permissions"];
    let out = run(&ws, Some(&llm), &args, &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(site.hits(), ["/meta"], "bypass_permissions allows it");
}

#[test]
fn web_fetch_policy_comes_from_settings_and_is_checked() {
    let ws = Workspace::new("web-fetch-policy");
    let out = run(&ws, None, &["config", "set", "webFetch", "sometimes"], &[], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("allow, ask, deny"), "{}", stderr(&out));
    let out = run(&ws, None, &["config", "set", "webFetch", "deny"], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let shown = stdout(&run(&ws, None, &["config", "show"], &[], ""));
    assert!(shown.contains("webFetch\tdeny\tsettings"), "{shown}");
    let shown = stdout(&run(&ws, None, &["config", "show"], &[("IAC_CODE_WEB_FETCH", "ask")], ""));
    assert!(shown.contains("webFetch\task\tenv"), "the variable wins: {shown}");
    let out = run(&ws, None, &["doctor"], &[], "");
    assert!(stdout(&out).contains("web_fetch: deny"), "{}", stdout(&out));
    // A public URL under `deny` is refused before anything is resolved or sent.
    let llm = FakeLlm::start(vec![
        tool_reply("f1", "web_fetch", json!({"url": "https://example.invalid/x"})),
        text_reply("done"),
    ]);
    let args = ["-p", "fetch", "--permission-mode", "bypass_permissions"];
    let out = run(&ws, Some(&llm), &args, &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = &llm.requests()[1].body;
    let result = body["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "tool");
    let text = result.unwrap()["content"].as_str().unwrap();
    assert!(text.contains("webFetch = deny"), "{text}");
}

#[test]
fn doctor_reports_one_line_per_finding() {
    let ws = Workspace::new("doctor");
    let llm = FakeLlm::start(vec![]);
    let out = run(&ws, Some(&llm), &["doctor"], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("model fake-model is served"), "{}", stdout(&out));
    assert!(
        stdout(&out).lines().all(|l| l.starts_with("ok ") || l.starts_with("warn ")),
        "{}",
        stdout(&out)
    );

    // A single-model server may answer any name: a warning.
    let out = run(&ws, Some(&llm), &["doctor"], &[("IAC_CODE_MODEL", "other-model")], "");
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("warn  the server serves fake-model only"), "{}", stdout(&out));
    let models = r#"{"data":[{"id":"qwen2.5-coder:latest"},{"id":"llama3:8b"}]}"#;
    let many = HttpFixture::start(vec![("/v1/models", Route::ok("application/json", models))]);
    let base = many.url("/v1");
    let out = run(
        &ws,
        None,
        &["doctor"],
        &[("IAC_CODE_BASE_URL", &base), ("IAC_CODE_MODEL", "other")],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("error model other is not listed"), "{}", stdout(&out));
    let out = run(
        &ws,
        None,
        &["doctor"],
        &[("IAC_CODE_BASE_URL", &base), ("IAC_CODE_MODEL", "qwen2.5-coder")],
        "",
    );
    assert!(
        stdout(&out).contains("ok    model qwen2.5-coder is served"),
        "an implied :latest: {}",
        stdout(&out)
    );

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dead = format!("http://127.0.0.1:{port}/v1");
    let out =
        run(&ws, None, &["doctor"], &[("IAC_CODE_BASE_URL", &dead), ("IAC_CODE_MODEL", "m")], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("error cannot reach"), "{}", stdout(&out));

    let refusing = HttpFixture::start(vec![("/v1/models", Route::status(401, "bad key"))]);
    let base = refusing.url("/v1");
    let out = run(
        &ws,
        None,
        &["doctor"],
        &[("IAC_CODE_BASE_URL", &base), ("IAC_CODE_MODEL", "m"), ("IAC_CODE_API_KEY", "k")],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("refused the API key"), "{}", stdout(&out));

    let out = run(&ws, None, &["doctor"], &[], "");
    assert_eq!(out.status.code(), Some(1), "no provider configured");

    let wrong_path = HttpFixture::start(vec![]);
    let base = wrong_path.url("");
    let out =
        run(&ws, None, &["doctor"], &[("IAC_CODE_BASE_URL", &base), ("IAC_CODE_MODEL", "m")], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("answered 404: check IAC_CODE_BASE_URL"), "{}", stdout(&out));

    // Anthropic: an alias names a dated id, and a gateway without a model list is a warning.
    let models =
        r#"{"data":[{"id":"claude-sonnet-4-5-20250929"},{"id":"claude-opus-4-1-20250805"}]}"#;
    let anthropic = HttpFixture::start(vec![("/v1/models", Route::ok("application/json", models))]);
    let base = anthropic.url("/v1");
    let env = |model: &'static str, base: &str| {
        [
            ("IAC_CODE_PROVIDER", "anthropic_compatible".to_string()),
            ("IAC_CODE_BASE_URL", base.to_string()),
            ("IAC_CODE_MODEL", model.to_string()),
            ("IAC_CODE_API_KEY", "k".to_string()),
        ]
    };
    let doctor = |env: [(&str, String); 4]| {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        run(&ws, None, &["doctor"], &env, "")
    };
    for alias in ["claude-sonnet-4-5", "claude-opus-4-1-latest"] {
        let out = doctor(env(alias, &base));
        assert!(
            stdout(&out).contains(&format!("ok    model {alias} is served")),
            "{}",
            stdout(&out)
        );
    }
    let out = doctor(env("claude-sonnet-4", &base));
    assert!(stdout(&out).contains("error model claude-sonnet-4 is not listed"), "{}", stdout(&out));
    let gateway = HttpFixture::start(vec![(
        "/v1/messages",
        Route::status(400, r#"{"type":"error","error":{"type":"invalid_request_error"}}"#),
    )]);
    let out = doctor(env("claude-sonnet-4-5", &gateway.url("/v1")));
    assert_eq!(out.status.code(), Some(0), "a gateway without /models: {}", stdout(&out));
    assert!(stdout(&out).contains("the model list cannot be checked"), "{}", stdout(&out));
    let out = doctor(env("claude-sonnet-4-5", &wrong_path.url("/v1")));
    assert_eq!(out.status.code(), Some(1), "a wrong base URL: {}", stdout(&out));
    assert!(stdout(&out).contains("check IAC_CODE_BASE_URL"), "{}", stdout(&out));
}

#[test]
fn sessions_list_show_and_delete_for_scripts() {
    let ws = Workspace::new("sessions-cli");
    let llm = FakeLlm::start(vec![text_reply("Noted.")]);
    let out = run(&ws, Some(&llm), &["-p", "Remember the VPC", "--output-format", "json"], &[], "");
    let id = serde_json::from_str::<Value>(stdout(&out).trim()).unwrap()["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let list = run(
        &ws,
        None,
        &["sessions", "list", "--json", "--cwd", ws.project().to_str().unwrap()],
        &[],
        "",
    );
    let sessions: Value = serde_json::from_str(&stdout(&list)).unwrap();
    assert_eq!(sessions[0]["sessionId"], id.as_str());
    assert_eq!(sessions[0]["title"], "Remember the VPC");
    let text = run(&ws, None, &["sessions", "list"], &[], "");
    assert!(stdout(&text).starts_with(&format!("{id}\t")), "{}", stdout(&text));
    let show = run(&ws, None, &["sessions", "show", &id, "--json"], &[], "");
    let shown: Value = serde_json::from_str(&stdout(&show)).unwrap();
    assert_eq!(
        shown["messages"][1],
        json!({"role": "assistant", "text": "Noted.", "thinking": "", "toolCalls": []})
    );
    let deleted = run(&ws, None, &["sessions", "delete", &id], &[], "");
    assert_eq!(stdout(&deleted), format!("deleted {id}\n"));
    let again = run(&ws, None, &["sessions", "show", &id], &[], "");
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("session not found"));
    let bad = run(&ws, None, &["sessions", "show", "../../etc"], &[], "");
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn install_sh_installs_reinstalls_and_uninstalls() {
    let ws = Workspace::new("install");
    let prefix = ws.root().join("prefix");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/install.sh");
    let sh = |args: &[&str]| {
        Command::new("sh")
            .arg(script)
            .args(args)
            .env("PREFIX", &prefix)
            .env("PATH", std::env::var_os("PATH").unwrap())
            .output()
            .unwrap()
    };
    for _ in 0..2 {
        let out = sh(&["--binary", BIN.as_str()]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("installed iac-code"), "{}", stdout(&out));
        assert!(stdout(&out).contains("is not on your PATH"));
    }
    let installed = prefix.join("bin/iac-code");
    let version = Command::new(&installed).arg("--version").output().unwrap();
    assert_eq!(stdout(&version), format!("iac-code {}\n", env!("CARGO_PKG_VERSION")));
    assert!(prefix.join("share/man/man1/iac-code.1").exists());
    let broken = ws.root().join("not-a-binary");
    std::fs::write(&broken, "#!/bin/false\n").unwrap();
    let out = sh(&["--binary", broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "a binary that does not run is refused");
    assert!(installed.exists(), "and the working install is kept");
    let out = sh(&["--uninstall"]);
    assert!(out.status.success());
    assert!(!installed.exists() && !prefix.join("share/man/man1/iac-code.1").exists());
    assert_eq!(sh(&["--bogus"]).status.code(), Some(2));
}

/// `install.sh --static` on a host without a musl C compiler: it installs musl-tools with
/// apt when it may, says exactly what to install when it may not, and never falls back to
/// a glibc build. The host is a PATH of stand-ins that record what they were asked to do.
#[test]
fn install_sh_static_gets_musl_tools_or_says_what_to_install() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Workspace::new("install-static");
    let bin = ws.root().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let calls = ws.root().join("calls");
    let tool = |name: &str, body: &str| {
        let path = bin.join(name);
        std::fs::write(
            &path,
            format!("#!/bin/sh\necho \"{name} $*\" >> '{}'\n{body}\n", calls.display()),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    for real in ["dirname", "grep"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| std::path::Path::new(d).join(real))
            .find(|p| p.exists());
        std::os::unix::fs::symlink(found.expect("dirname and grep"), bin.join(real)).unwrap();
    }
    tool("cargo", "exit 0");
    tool("id", "echo 1000");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/install.sh");
    let run = || {
        let _ = std::fs::remove_file(&calls);
        let out = Command::new("/bin/sh")
            .args([script, "--static"])
            .env_clear()
            .env("PATH", &bin)
            .env("PREFIX", ws.root().join("prefix"))
            .output()
            .unwrap();
        (out, std::fs::read_to_string(&calls).unwrap_or_default())
    };

    // No apt-get: the hint names the packages, and nothing is built.
    let (out, calls_made) = run();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no apt-get") && stderr(&out).contains("apt-get install musl-tools"),
        "{}",
        stderr(&out)
    );
    assert!(!calls_made.contains("cargo"), "no fallback build: {calls_made}");

    // apt-get, but sudo wants a password: the exact command to run, apt-get untouched.
    tool("apt-get", "exit 1");
    tool("sudo", "exit 1");
    let (out, calls_made) = run();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("sudo apt-get install musl-tools"), "{}", stderr(&out));
    assert!(calls_made.contains("sudo -n true"), "{calls_made}");
    assert!(!calls_made.contains("apt-get") && !calls_made.contains("cargo"), "{calls_made}");

    // sudo without a password: apt-get installs musl-tools (here, the compiler stand-in);
    // then a Rust target that cannot be added stops the install instead of a glibc build.
    tool("sudo", "[ \"$1\" = -n ] && exit 0; exec \"$@\"");
    let gcc = bin.join("x86_64-linux-musl-gcc");
    tool(
        "apt-get",
        &format!(
            "case \"$*\" in *install*musl-tools*) printf '#!/bin/sh\\n' > '{0}'; command -p chmod 755 '{0}';; esac",
            gcc.display()
        ),
    );
    tool("rustup", "exit 1");
    let (out, calls_made) = run();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(calls_made.contains("apt-get install -y -qq musl-tools"), "{calls_made}");
    assert!(gcc.exists(), "apt-get ran");
    assert!(
        stderr(&out).contains("rustup target add x86_64-unknown-linux-musl"),
        "{}",
        stderr(&out)
    );
    assert!(!calls_made.contains("cargo"), "no fallback build: {calls_made}");
    assert!(!ws.root().join("prefix/bin/iac-code").exists());
}

/// Spawns `-p` with piped stdout, for tests that act while it runs.
fn spawn(ws: &Workspace, llm: &FakeLlm, args: &[&str]) -> std::process::Child {
    iac_code(ws)
        .args(args)
        .fake_llm(llm)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn one_shot_separates_steps_and_keeps_the_mode_out_of_the_session() {
    let ws = Workspace::new("oneshot-steps");
    let first = Reply::Stream(vec![
        Event::Text("Checking.".into()),
        Event::ToolCall { index: 0, id: "l1".into(), name: "list_files".into(), args: json!({}) },
        Event::Finish("tool_calls"),
        Event::Done,
    ]);
    let llm = FakeLlm::start(vec![first, text_reply("Done."), text_reply("Again.")]);
    let out = run(
        &ws,
        Some(&llm),
        &["-p", "look", "--permission-mode", "bypass_permissions", "--output-format", "json"],
        &[],
        "",
    );
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(result["text"], "Checking.\n\nDone.");
    let id = result["sessionId"].as_str().unwrap().to_string();
    if on_file_store() {
        let journal =
            std::fs::read_to_string(ws.config().join("sessions").join(&id).join("journal.jsonl"))
                .unwrap();
        assert!(!journal.contains(r#""type":"mode""#), "the one-shot mode is not saved: {journal}");
    }
    let out = run(&ws, Some(&llm), &["-p", "more", "--resume", &id], &[], "");
    assert_eq!((out.status.code(), stdout(&out)), (Some(0), "Again.\n".to_string()));
    let out = run(&ws, Some(&llm), &["-p", "x", "--resume", "not-a-uuid"], &[], "");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let unknown = "00000000-0000-4000-8000-00000000abcd";
    let out =
        run(&ws, Some(&llm), &["-p", "x", "--resume", unknown, "--output-format", "json"], &[], "");
    assert_eq!(out.status.code(), Some(1));
    let error: Value =
        serde_json::from_str(stdout(&out).trim()).expect("a result object even on error");
    assert_eq!(error["isError"], true);
    assert!(error["error"].as_str().unwrap().contains(unknown));
}

#[test]
fn one_shot_stops_on_a_closed_stdout_and_on_sigterm() {
    let ws = Workspace::new("oneshot-stop");
    let long: Vec<Event> = (0..20_000)
        .map(|i| Event::Text(format!("line {i}\n")))
        .chain([Event::Finish("stop"), Event::Done])
        .collect();
    let llm = FakeLlm::start(vec![
        Reply::Stream(long),
        Reply::Hang(vec![Event::Text("thinking".into())]),
    ]);
    let mut child = spawn(&ws, &llm, &["-p", "print a lot"]);
    let mut byte = [0u8; 1];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut byte).unwrap();
    drop(child.stdout.take());
    assert_eq!(child.wait().unwrap().code(), Some(141), "a closed stdout cancels the turn");

    let mut child = spawn(&ws, &llm, &["-p", "think"]);
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut byte).unwrap();
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(
        llm.wait_hang_dropped(std::time::Duration::from_secs(10)),
        "the LLM request was dropped"
    );
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario: each `config` subcommand, then a script that uses what it wrote"
)]
fn config_writes_a_settings_file_that_scripts_then_use() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Workspace::new("config-cmd");
    let llm = FakeLlm::start(vec![text_reply("configured")]);
    let dir = ws.root().join("fresh/cfg");
    let file = dir.join("settings.json");
    let dir_env = dir.to_str().unwrap().to_string();
    let cfg = |args: &[&str], env: &[(&str, &str)], stdin: &str| {
        let mut all = vec![("IAC_CODE_CONFIG_DIR", dir_env.as_str())];
        all.extend_from_slice(env);
        let out = run(&ws, None, args, &all, stdin);
        assert!(!stdout(&out).contains("sk-secret") && !stderr(&out).contains("sk-secret"));
        out
    };
    let out = cfg(&["config", "path"], &[], "");
    assert_eq!(stdout(&out), format!("{}\n", file.display()));

    let out = cfg(&["config", "set", "model", "m"], &[], "");
    assert_eq!(out.status.code(), Some(2), "a key needs a provider");
    assert!(stderr(&out).contains("--provider"), "{}", stderr(&out));
    assert!(!file.exists());

    let base = llm.base_url();
    for args in [
        &["config", "set", "provider", "OpenAI Compatible"][..],
        &["config", "set", "baseUrl", &base],
        &["config", "set", "model", "fake-model"],
        &["config", "set", "models", "fake-model,other"],
        &["config", "set", "apiKey", "-"],
        &["config", "set", "--provider", "lm-studio", "model", "qwen"],
    ] {
        let out = cfg(args, &[], "sk-secret-1\n");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty());
    }
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600, "created 0600");
    assert_eq!(mode(&dir), 0o700);
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        saved,
        json!({"provider": "openai_compatible", "providers": {
            "openai_compatible": {"baseUrl": base, "model": "fake-model",
                                  "models": ["fake-model", "other"], "apiKey": "sk-secret-1"},
            "lmstudio": {"model": "qwen"}}})
    );

    // The server reads what was written: nothing else configures the provider here.
    let out = cfg(&["-p", "hello"], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "configured\n");
    assert_eq!(llm.requests()[0].header("authorization"), Some("Bearer sk-secret-1"));

    let out = cfg(&["config", "show"], &[("IAC_CODE_MAX_TOKENS", "4096")], "");
    for line in [
        "provider\topenai_compatible\tsettings",
        "model\tfake-model\tsettings",
        "apiKey\t(hidden)\tsettings",
        "maxTokens\t4096\tenv",
        "contextWindow\t128000\tdefault",
        "caFile\t-\tunset",
    ] {
        assert!(stdout(&out).lines().any(|l| l == line), "{line:?} in {}", stdout(&out));
    }
    let out = cfg(&["config", "show", "--json"], &[("IAC_CODE_PROVIDER", "lmstudio")], "");
    let shown: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        shown["provider"],
        json!({"value": "lmstudio", "source": "env", "variable": "IAC_CODE_PROVIDER"})
    );
    assert_eq!(shown["model"]["value"], "qwen", "the environment picks the section");
    assert_eq!(shown["baseUrl"]["source"], "preset");

    // Refused changes leave the file as it was, byte for byte.
    let before = std::fs::read(&file).unwrap();
    for (args, says) in [
        (&["config", "set", "maxTokens", "lots"][..], "maxTokens must be a whole number"),
        (&["config", "set", "thinkingBudget", "10"], "nothing was changed"),
        (&["config", "set", "baseUrl", "ftp://x"], "nothing was changed"),
        (&["config", "set", "provider", "nope"], "unknown provider 'nope'"),
        (&["config", "set", "modle", "x"], "unknown key 'modle'"),
        (&["config", "set", "model"], "usage: iac-code config set"),
        (&["config", "frob"], "unknown config action"),
    ] {
        let out = cfg(args, &[], "");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
    assert_eq!(std::fs::read(&file).unwrap(), before);

    // Values of a section not usable yet (its key kept in the environment) are checked too.
    for (args, says) in [
        (&["config", "set", "--provider", "anthropic", "thinkingBudget", "10"][..], "1024"),
        (&["config", "set", "--provider", "vllm", "reasoningEffort", "extreme"], "minimal"),
        (&["config", "set", "--provider", "vllm", "caFile", "/no/such.pem"], "cannot read"),
        (
            &["config", "set", "--provider", "vllm", "provider", "vllm"],
            "--provider names a section",
        ),
    ] {
        let out = cfg(args, &[("IAC_CODE_API_KEY", "sk-secret-env")], "");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let out = cfg(&["config", "show", "--json"], &[("IAC_CODE_PROVIDER", "anthropic")], "");
    let shown: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(shown["apiKey"]["value"], Value::Null, "no key anywhere: {shown}");
    assert_eq!(
        shown["baseUrl"],
        json!({"value": "https://api.anthropic.com/v1", "source": "preset", "variable": "IAC_CODE_BASE_URL"}),
        "the preset shows while the provider still lacks its key"
    );

    // A settings.json linked from elsewhere is updated where it lives.
    let elsewhere = ws.root().join("dotfiles.json");
    std::fs::rename(&file, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
    let out = cfg(&["config", "set", "model", "linked"], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(std::fs::symlink_metadata(&file).unwrap().file_type().is_symlink());
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&elsewhere).unwrap()).unwrap();
    assert_eq!(saved["providers"]["openai_compatible"]["model"], "linked");

    let out = cfg(&["config", "unset", "--provider", "LM Studio", "model"], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(saved["providers"].get("lmstudio").is_none(), "an emptied section goes: {saved}");

    // A file that does not parse is never overwritten.
    std::fs::write(&file, "{oops").unwrap();
    let out = cfg(&["config", "set", "model", "x"], &[("IAC_CODE_PROVIDER", "vllm")], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not valid JSON"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{oops");
}

#[test]
fn concurrent_config_edits_all_land() {
    let ws = Workspace::new("config-race");
    let providers = ["openai", "ollama", "lmstudio", "vllm", "llamacpp", "deepseek", "openrouter"];
    let children: Vec<_> = providers
        .iter()
        .map(|p| {
            iac_code(&ws)
                .args(["config", "set", "--provider", p, "model", &format!("m-{p}")])
                .stdin(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let text = std::fs::read_to_string(ws.config().join("settings.json")).unwrap();
    let saved: Value = serde_json::from_str(&text).unwrap();
    for p in providers {
        assert_eq!(saved["providers"][p]["model"], format!("m-{p}"), "{saved}");
    }
}
