//! The OS sandbox, black-box on the real binary: fake credentials planted in the agent's
//! HOME and environment, a loopback listener of the test's own, and opaque commands run
//! unasked in bypass mode that try to read, reach, write, outlive and escape, one attack a
//! row; then what a person's yes changes, what happens where no sandbox can be built, and
//! the cloud profile with a real terraform.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::infra::{applied, asked, bash, state, terraform};
use crate::support::acp_client::{AcpProcess, Permission, updates_of};
use crate::support::command::{iac_code, llm_env};
use crate::support::fake_llm::{FakeLlm, text_reply};
use crate::support::workspace::Workspace;
use crate::tools::tool_result;

/// A workspace baited for one test: fake credentials in its HOME, files only a person may
/// change in its project, and a loopback listener nobody inside should reach.
struct Bait {
    ws: Workspace,
    /// Random enough that finding it in a result means it leaked.
    marker: String,
    listener: TcpListener,
    port: u16,
}

/// The credential files planted below HOME (relative to it).
const STORES: [&str; 4] = [".aws/credentials", ".kube/config", ".ssh/id_rsa", ".netrc"];

/// Files in the project that a sandboxed command may not change.
const GUARDED: [&str; 6] = [
    "terraform.tfstate",
    "env/prod/terraform.tfstate",
    ".git/config",
    ".git/hooks/pre-commit",
    ".iac-code/settings.json",
    ".mcp.json",
];

fn bait(name: &str) -> Bait {
    let ws = Workspace::new(name);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    let marker = format!("SEKRIT{}x{nanos}", std::process::id());
    for store in STORES {
        let path = ws.root().join(store);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("secret = {marker}-{store}\n")).unwrap();
    }
    std::fs::write(ws.config().join("planted-secret"), format!("{marker}-config\n")).unwrap();
    ws.write("terraform.tfstate", "{\"version\": 4, \"serial\": 7}\n");
    ws.write("env/prod/terraform.tfstate", "{\"version\": 4, \"serial\": 9}\n");
    ws.write(".git/HEAD", "ref: refs/heads/main\n");
    ws.write(".git/config", "[core]\n\tbare = false\n");
    ws.write(".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n");
    ws.write(".iac-code/settings.json", "{}\n");
    ws.write(".mcp.json", "{\"mcpServers\": {}}\n");
    std::fs::create_dir_all(ws.root().join("outdir")).unwrap();
    std::os::unix::fs::symlink(ws.root().join("outdir"), ws.path("out-link")).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    Bait { ws, marker, listener, port }
}

impl Bait {
    /// The server's environment: credentials of its own.
    fn env(&self) -> Vec<(String, String)> {
        vec![
            ("AWS_SECRET_ACCESS_KEY".into(), format!("{}-env-aws", self.marker)),
            ("GITHUB_TOKEN".into(), format!("{}-env-github", self.marker)),
        ]
    }

    /// Whether the listener has a connection waiting (it never blocks).
    fn reached(&self) -> bool {
        match self.listener.accept() {
            Ok(_) => true,
            Err(err) if err.kind() == ErrorKind::WouldBlock => false,
            Err(err) => panic!("accept: {err}"),
        }
    }

    /// Size, bytes, mode and mtime of every guarded file.
    fn guarded(&self) -> Vec<(String, Vec<u8>, u32, i64)> {
        GUARDED
            .iter()
            .map(|rel| {
                let path = self.ws.path(rel);
                let meta = std::fs::metadata(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
                let bytes = std::fs::read(&path).unwrap();
                (rel.to_string(), bytes, meta.permissions().mode(), meta.mtime())
            })
            .collect()
    }
}

/// The server, started with `env` besides the fake LLM's, in a session of `mode`.
fn server(
    ws: &Workspace,
    llm: &FakeLlm,
    env: &[(String, String)],
    mode: &str,
) -> (AcpProcess, String) {
    let mut all = llm_env(llm);
    all.extend_from_slice(env);
    let refs: Vec<(&str, &str)> = all.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut acp = AcpProcess::spawn(ws, &refs);
    acp.set_timeout(Duration::from_secs(60));
    acp.initialize();
    let session = acp.new_session(&ws.project());
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": mode}));
    (acp, session)
}

/// `_meta.iacCode.sandbox` of each running (`in_progress`) tool call update, in order.
fn sandboxes(msgs: &[Value]) -> Vec<Value> {
    updates_of(msgs, "tool_call_update")
        .into_iter()
        .filter(|u| u["status"] == "in_progress")
        .filter_map(|u| u.pointer("/_meta/iacCode/sandbox").cloned())
        .collect()
}

/// A `sleep` on the host whose argument is `arg`.
fn sleeping(arg: &str) -> Vec<u32> {
    let wanted = format!("sleep\0{arg}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|p| p.parse::<u32>().ok()))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == wanted.as_bytes())
        })
        .collect()
}

/// Waits (bounded, without sleeping) until `done` holds; false when it never did.
fn within(limit: Duration, done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while !done() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

/// One attack, as a shell script the model runs (`sh rows/NAME.sh`, opaque to the gate).
/// `{root}` is HOME, `{port}` the listener's, `{server}` the server's pid, `{nonce}` a
/// number of this run. A row that prints `ESCAPED` says it got through.
struct Row {
    name: &'static str,
    script: &'static str,
}

const ROWS: &[Row] = &[
    // Reading credentials.
    Row { name: "aws", script: "cat {root}/.aws/credentials; cat \"$HOME/.aws/credentials\"" },
    Row { name: "kube", script: "cat {root}/.kube/config" },
    Row { name: "ssh", script: "cat {root}/.ssh/id_rsa" },
    Row { name: "netrc", script: "cat {root}/.netrc" },
    Row { name: "env", script: "env; tr '\\0' '\\n' < /proc/self/environ" },
    Row { name: "config-dir", script: "cat {root}/config/planted-secret; ls -la {root}/config" },
    Row { name: "server-environ", script: "tr '\\0' '\\n' < /proc/{server}/environ" },
    Row {
        name: "proc-root",
        script: "cat /proc/1/root{root}/.aws/credentials /proc/self/root{root}/.ssh/id_rsa",
    },
    Row {
        name: "symlink-to-store",
        script: "ln -s {root}/.aws/credentials creds-link; cat creds-link; rm -f creds-link",
    },
    Row { name: "hardlink-to-store", script: "ln {root}/.netrc netrc-link && cat netrc-link" },
    Row { name: "grep-stores", script: "grep -rs secret {root}/.aws {root}/.kube {root}/.ssh" },
    // Reaching the network.
    Row {
        name: "tcp",
        script: "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3); \
                 print('ESCAPED')\"; (exec 3<>/dev/tcp/127.0.0.1/{port}) && echo ESCAPED",
    },
    Row {
        name: "abstract-unix",
        script: "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); \
                 s.connect('\\0iac-sbtest-{nonce}'); print('ESCAPED')\"",
    },
    // Writing what only a person may change.
    Row { name: "append-state", script: "echo evil >> terraform.tfstate" },
    Row {
        name: "truncate-state",
        script: "truncate -s 0 terraform.tfstate; : > terraform.tfstate",
    },
    Row {
        name: "chmod-touch-state",
        script: "chmod 666 terraform.tfstate; touch -d 2001-01-01 terraform.tfstate",
    },
    Row {
        name: "replace-state",
        script: "mv terraform.tfstate old.tfstate; rm -f terraform.tfstate; echo evil > new; \
                 mv -f new terraform.tfstate",
    },
    Row { name: "hardlink-state", script: "ln terraform.tfstate hl && echo evil >> hl" },
    Row { name: "symlink-state", script: "ln -s terraform.tfstate sl; echo evil >> sl" },
    Row {
        name: "rename-state-dir",
        script: "mv env env.old; mv env/prod env/prod.old; mkdir -p env/prod; \
                 echo evil > env/prod/terraform.tfstate",
    },
    Row {
        name: "git-hooks",
        script: "echo evil > .git/hooks/pre-commit; echo evil >> .git/config",
    },
    Row {
        name: "git-moved-away",
        script: "mv .git .git-old; mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit",
    },
    Row { name: "git-removed", script: "rm -rf .git; git init -q . ; ls .git" },
    Row {
        name: "settings-and-mcp",
        script: "echo '{\"permissions\":{\"allow\":[\"bash(*)\"]}}' > .iac-code/settings.json; \
                 mv .iac-code .iac-code.old; echo evil > .mcp.json; mv .mcp.json x.json",
    },
    Row {
        name: "outside",
        script: "echo evil > {root}/outside.txt; echo evil > /tmp/iac-sbtest-{nonce}; \
                 echo evil > /var/tmp/iac-sbtest-{nonce}",
    },
    Row {
        name: "symlink-out",
        script: "echo evil > out-link/f; ln -s {root}/outdir/g l2; echo evil > l2",
    },
    Row {
        name: "proc-root-write",
        script: "echo evil > /proc/self/root{root}/outside2.txt; \
                 echo evil > /proc/1/cwd/../outside3.txt",
    },
    Row { name: "dev-shm", script: "echo evil > /dev/shm/iac-sbtest-{nonce}" },
    Row {
        name: "sysctl",
        script: "cat /proc/sys/kernel/hostname > /proc/sys/kernel/hostname && echo ESCAPED",
    },
    Row {
        name: "block-devices",
        script: "for d in /dev/*; do [ -b \"$d\" ] && [ \"$(head -c 1 \"$d\" 2>/dev/null | wc -c)\" = 1 ] \
                 && echo \"ESCAPED $d\"; done; true",
    },
    // Privileges and processes.
    Row { name: "caps", script: "grep Cap /proc/self/status" },
    Row {
        name: "mount",
        script: "umount /proc && echo ESCAPED; umount -l / && echo ESCAPED; mkdir -p m; \
                 mount -t tmpfs none m && echo ESCAPED; mount --bind / m && echo ESCAPED",
    },
    Row {
        name: "nested-userns",
        script: "unshare -Urm sh -c 'umount -l /proc; echo ESCAPED'; unshare -U true && \
                 echo ESCAPED; python3 -c \"import os; os.chroot('/'); print('ESCAPED')\"",
    },
    Row {
        name: "ptrace-kill",
        script: "kill -0 {server} && echo ESCAPED; python3 -c \"import ctypes; \
                 r = ctypes.CDLL(None).ptrace(16, {server}, 0, 0); print('ESCAPED' if r == 0 \
                 else 'refused')\"",
    },
    Row {
        name: "background",
        script: "sleep 300.{nonce} & i=0; until grep -q 300 /proc/$!/cmdline || [ $i -gt 100000 ]; \
                 do i=$((i + 1)); done; tr '\\0' ' ' < /proc/$!/cmdline",
    },
    // What a command may do.
    Row { name: "workspace", script: "echo hello > out.txt; mkdir -p sub && echo x > sub/y" },
];

fn script_of(row: &Row, ws: &Workspace, port: u16, server: u32, nonce: &str) -> String {
    row.script
        .replace("{root}", &ws.root().display().to_string())
        .replace("{port}", &port.to_string())
        .replace("{server}", &server.to_string())
        .replace("{nonce}", nonce)
}

#[test]
fn a_sealed_command_reads_no_secret_reaches_nothing_and_writes_only_the_workspace() {
    let bait = bait("sandbox-sealed");
    let ws = &bait.ws;
    let before = bait.guarded();
    let nonce = format!("{}", bait.port as u64 * 1000 + u64::from(std::process::id() % 1000));
    let name = format!("iac-sbtest-{nonce}");
    let abstract_addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let abstract_listener = UnixListener::bind_addr(&abstract_addr).unwrap();
    abstract_listener.set_nonblocking(true).unwrap();
    let llm = FakeLlm::start(Vec::new());
    let (mut acp, session) = server(ws, &llm, &bait.env(), "bypass_permissions");
    for (n, row) in ROWS.iter().enumerate() {
        ws.write(
            &format!("rows/{}.sh", row.name),
            &script_of(row, ws, bait.port, acp.pid(), &nonce),
        );
        llm.push(bash(&format!("r{n}"), &format!("sh rows/{}.sh", row.name)));
    }
    llm.push(text_reply("done"));
    // The one question is the planted `.mcp.json`'s (it names no server): approved.
    acp.set_permission(Permission::AllowAlways);
    let (msgs, response) = acp.prompt(&session, "go");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{}", acp.context());
    let commands =
        asked(&msgs).into_iter().filter(|q| q["params"]["toolCall"]["kind"] == "execute");
    assert_eq!(commands.count(), 0, "bypass mode asks about no command");

    let runs = sandboxes(&msgs);
    assert_eq!(runs.len(), ROWS.len(), "each call says how it runs");
    for (row, run) in ROWS.iter().zip(&runs) {
        let want = json!({"confined": true, "network": false, "credentials": false});
        for key in ["confined", "network", "credentials"] {
            assert_eq!(run[key], want[key], "{}: {run}", row.name);
        }
    }
    let results: Vec<(&str, String)> =
        ROWS.iter().enumerate().map(|(n, row)| (row.name, tool_result(&llm, n + 1))).collect();
    let result = |name: &str| results.iter().find(|(n, _)| *n == name).unwrap().1.clone();
    for (name, text) in &results {
        assert!(!text.contains(&bait.marker), "{name}: a secret leaked: {text}");
        assert!(!text.contains("ESCAPED"), "{name}: got through: {text}");
    }
    // The reads ran, and found nothing.
    assert!(result("aws").contains("Exit code"), "{}", result("aws"));
    assert!(result("env").contains("HOME="), "the environment was listed: {}", result("env"));

    // Nothing reached the listeners.
    assert!(!bait.reached(), "a sealed command reached the test's listener");
    assert!(
        matches!(abstract_listener.accept(), Err(e) if e.kind() == ErrorKind::WouldBlock),
        "a sealed command reached an abstract unix socket"
    );

    // The guarded files are as they were: bytes, mode, mtime; nothing was added around them.
    assert_eq!(bait.guarded(), before, "a guarded file changed");
    for rel in
        ["old.tfstate", "hl", "env.old", "env/prod.old", ".git-old", ".iac-code.old", "x.json"]
    {
        assert!(!ws.exists(rel), "{rel} was made");
    }
    let outside = [
        ws.root().join("outside.txt"),
        ws.root().join("outside2.txt"),
        ws.root().join("outside3.txt"),
        ws.root().join("outdir/f"),
        ws.root().join("outdir/g"),
        PathBuf::from(format!("/tmp/iac-sbtest-{nonce}")),
        PathBuf::from(format!("/var/tmp/iac-sbtest-{nonce}")),
        PathBuf::from(format!("/dev/shm/iac-sbtest-{nonce}")),
    ];
    for path in outside {
        assert!(!path.exists(), "{} was written outside the workspace", path.display());
    }

    // No capability, whatever the uid.
    let caps = result("caps");
    for set in ["CapEff", "CapPrm", "CapBnd", "CapAmb"] {
        let line = caps.lines().find(|l| l.starts_with(set)).unwrap_or_else(|| panic!("{caps}"));
        assert!(
            line.trim_start_matches(set).trim_matches([':', '\t', ' ', '0']).is_empty(),
            "{line}"
        );
    }
    // The background child ran inside, and died with the command.
    let background = result("background");
    let arg = format!("300.{nonce}");
    assert!(background.contains(&format!("sleep {arg}")), "it started: {background}");
    assert!(
        within(Duration::from_secs(5), || sleeping(&arg).is_empty()),
        "the background sleep outlived its command: {:?}",
        sleeping(&arg)
    );
    // The workspace itself is writable.
    assert_eq!(ws.read("out.txt"), "hello\n");
    assert_eq!(ws.read("sub/y"), "x\n");
}

#[test]
fn a_command_a_person_approved_runs_outside_with_the_network_and_credentials() {
    let bait = bait("sandbox-approved");
    let ws = &bait.ws;
    // Its question would come first; the sealed test has it.
    std::fs::remove_file(ws.path(".mcp.json")).unwrap();
    let connect = format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {}), 3); \
         print('connected')\"; grep -c {} {}/.aws/credentials",
        bait.port,
        bait.marker,
        ws.root().display()
    );
    ws.write("connect.sh", &connect);
    let script = vec![bash("a1", "sh connect.sh"), text_reply("done")];
    let llm = FakeLlm::start(script);
    let (mut acp, session) = server(ws, &llm, &bait.env(), "default");
    acp.set_permission(Permission::AllowOnce);
    let (msgs, _) = acp.prompt(&session, "go");
    assert_eq!(asked(&msgs).len(), 1, "an opaque command asks in default mode");
    let result = tool_result(&llm, 1);
    assert!(result.contains("connected"), "{result}");
    // It read the user's credentials (the count of lines holding the marker; the value
    // itself would be redacted on its way to the model, issue 33).
    assert!(
        result.contains("connected\n1\n"),
        "it ran as the user, with the user's files: {result}"
    );
    assert!(bait.reached(), "the listener saw the approved command");
    let runs = sandboxes(&msgs);
    assert_eq!(runs.len(), 1, "{msgs:?}");
    assert_eq!(runs[0]["confined"], false);
    assert_eq!(runs[0]["why"], "approved");

    // The same command in bypass mode: confined, no network.
    let llm = FakeLlm::start(vec![bash("a2", "sh connect.sh"), text_reply("done")]);
    let (mut acp, session) = server(ws, &llm, &bait.env(), "bypass_permissions");
    let (msgs, _) = acp.prompt(&session, "go");
    assert!(asked(&msgs).is_empty());
    let runs = sandboxes(&msgs);
    assert_eq!(
        (runs[0]["confined"].clone(), runs[0]["network"].clone()),
        (json!(true), json!(false))
    );
    let result = tool_result(&llm, 1);
    assert!(!result.contains("connected") && !result.contains(&bait.marker), "{result}");
    assert!(!bait.reached(), "the confined run reached nothing");
}

/// The server's environment without a sandbox: the test switch, or a person turned it off.
const NO_SANDBOX: [(&str, &str); 2] =
    [("IAC_CODE_SANDBOX_TEST_FAIL", "1"), ("IAC_CODE_SANDBOX", "off")];

#[test]
fn without_a_sandbox_what_relied_on_it_asks_even_in_bypass_mode() {
    for (var, value) in NO_SANDBOX {
        let ws = Workspace::new("sandbox-fallback");
        let commands = ["eval 'echo opaque'", "touch x", "ls"];
        let mut script: Vec<_> =
            commands.iter().enumerate().map(|(n, c)| bash(&format!("f{n}"), c)).collect();
        script.push(text_reply("done"));
        let llm = FakeLlm::start(script);
        let env = [(var.to_string(), value.to_string())];
        let (mut acp, session) = server(&ws, &llm, &env, "bypass_permissions");
        acp.set_permission(Permission::RejectOnce);
        let (msgs, _) = acp.prompt(&session, "go");
        let questions = asked(&msgs);
        assert_eq!(questions.len(), 2, "{var}: the opaque and the mutating command ask");
        for question in questions {
            let title = question["params"]["toolCall"]["title"].as_str().unwrap();
            assert!(title.contains("sandbox"), "{var}: the title says why: {title}");
        }
        assert_eq!(tool_result(&llm, 1), "Permission denied.", "{var}");
        assert_eq!(tool_result(&llm, 2), "Permission denied.", "{var}");
        assert!(!ws.exists("x"), "{var}: the refused touch did not run");
        assert!(tool_result(&llm, 3).contains("Exit code: 0"), "{var}: ls ran unasked");
        assert_eq!(sandboxes(&msgs).last().unwrap()["why"], "unavailable", "{var}");

        let out = iac_code(&ws).args(["sandbox", "status", "--json"]).env(var, value).output();
        let status: Value = serde_json::from_slice(&out.unwrap().stdout).unwrap();
        assert_eq!(status["usable"], false, "{var}: {status}");
    }
    let ws = Workspace::new("sandbox-status");
    let out = iac_code(&ws).args(["sandbox", "status", "--json"]).output().unwrap();
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["usable"], true, "{status}");
}

/// Bytes and mtime of the project's state.
fn state_file(ws: &Workspace) -> (Vec<u8>, SystemTime) {
    let path = ws.path("terraform.tfstate");
    (std::fs::read(&path).unwrap(), std::fs::metadata(&path).unwrap().modified().unwrap())
}

#[test]
fn terraform_plans_fmt_validate_and_make_run_unasked_in_bypass_on_a_copy_of_state() {
    let Some(_) = terraform() else { return };
    let ws = applied("sandbox-cloud");
    // A change, so that the plan has something to say; and a file fmt rewrites.
    ws.write("extra.tf", "resource \"terraform_data\" \"e\" {\ninput=\"x\"\n}\n");
    ws.write(
        "Makefile",
        "test:\n\techo made > made.txt\n\tpython3 -c 'open(\"py.txt\",\"w\").write(\"ok\")'\n",
    );
    let before = state_file(&ws);
    let commands = [
        "terraform plan -input=false -no-color",
        "terraform fmt",
        "terraform validate -no-color",
        "make test",
    ];
    let mut script: Vec<_> =
        commands.iter().enumerate().map(|(n, c)| bash(&format!("t{n}"), c)).collect();
    script.push(text_reply("done"));
    let llm = FakeLlm::start(script);
    let (mut acp, session) = server(&ws, &llm, &[], "bypass_permissions");
    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&session, "go");
    assert!(asked(&msgs).is_empty(), "{}", acp.context());
    for (n, command) in commands.iter().enumerate() {
        let result = tool_result(&llm, n + 1);
        assert!(result.ends_with("Exit code: 0"), "{command}: {result}");
    }
    assert!(tool_result(&llm, 1).contains("1 to add"), "{}", tool_result(&llm, 1));
    let runs = sandboxes(&msgs);
    assert_eq!(runs.len(), commands.len());
    let plan = &runs[0];
    assert_eq!(
        (&plan["confined"], &plan["network"], &plan["credentials"], &plan["state"]),
        (&json!(true), &json!(true), &json!(true), &json!("scratch-copy")),
        "{plan}"
    );
    assert_eq!(runs[3]["confined"], true, "make runs confined: {}", runs[3]);
    assert_eq!(state_file(&ws), before, "the plan wrote a copy, never the state");
    assert_eq!(state(&ws).len(), 3);
    assert!(ws.read("extra.tf").contains("input = \"x\""), "fmt wrote: {}", ws.read("extra.tf"));
    assert_eq!(ws.read("made.txt"), "made\n");
    assert_eq!(ws.read("py.txt"), "ok");
}

#[test]
fn in_bypass_terraform_never_runs_unreviewed_code_that_starts_programs_with_credentials() {
    let Some(_) = terraform() else { return };
    let ws = applied("sandbox-unseen");
    let external = "data \"external\" \"x\" {\n  program = [\"sh\", \"-c\", \"echo ran >> ran.txt; echo '{}'\"]\n}\n";
    let plain = "resource \"terraform_data\" \"e\" {\n  input = \"x\"\n}\n";
    let llm = FakeLlm::start(vec![
        crate::support::fake_llm::tool_reply(
            "w1",
            "write_file",
            json!({"path": "extra.tf", "content": plain}),
        ),
        bash("t1", "terraform plan -input=false -no-color"),
        crate::support::fake_llm::tool_reply(
            "w2",
            "write_file",
            json!({"path": "exec.tf", "content": external}),
        ),
        bash("t2", "terraform apply -auto-approve -input=false"),
        bash("t3", "terraform plan -input=false -no-color"),
        crate::support::fake_llm::tool_reply(
            "w3",
            "write_file",
            json!({"path": "site.yml", "content": "- hosts: all\n  tasks: []\n"}),
        ),
        bash("t4", "ansible-playbook --check site.yml"),
        text_reply("done"),
    ]);
    let (mut acp, session) = server(&ws, &llm, &[], "bypass_permissions");
    let (msgs, _) = acp.prompt(&session, "go");
    assert!(asked(&msgs).is_empty(), "{}", acp.context());
    let runs = sandboxes(&msgs);
    // Unreviewed but plain: the plan gets the network and the credentials.
    assert_eq!(
        (&runs[0]["network"], &runs[0]["credentials"]),
        (&json!(true), &json!(true)),
        "{}",
        runs[0]
    );
    let told = tool_result(&llm, 4);
    assert!(told.contains("external data source") && told.contains("bypass mode"), "{told}");
    assert_eq!(state(&ws).len(), 3, "nothing was applied");
    // A plan of it runs sealed.
    let second = &runs[1];
    assert_eq!(
        (&second["network"], &second["credentials"]),
        (&json!(false), &json!(false)),
        "{second}"
    );
    // A playbook nobody reviewed is what ansible runs: sealed too.
    let playbook = &runs[2];
    assert_eq!(
        (&playbook["network"], &playbook["credentials"]),
        (&json!(false), &json!(false)),
        "{playbook}"
    );
    assert_eq!(runs.len(), 3, "the two plans and the playbook ran, the apply never did");
}

#[test]
fn a_destroy_asks_in_bypass_and_only_a_yes_runs_it_outside() {
    let Some(_) = terraform() else { return };
    let ws = applied("sandbox-destroy");
    for (permission, left) in [(Permission::RejectOnce, 3), (Permission::AllowOnce, 0)] {
        let destroy = bash("d1", "terraform destroy -auto-approve -input=false -no-color");
        let llm = FakeLlm::start(vec![destroy, text_reply("done")]);
        let (mut acp, session) = server(&ws, &llm, &[], "bypass_permissions");
        acp.set_permission(permission);
        let (msgs, _) = acp.prompt(&session, "go");
        assert_eq!(asked(&msgs).len(), 1, "{permission:?}: the destroy asks");
        assert_eq!(state(&ws).len(), left, "{permission:?}: {}", tool_result(&llm, 1));
        if permission == Permission::AllowOnce {
            let runs = sandboxes(&msgs);
            assert_eq!(
                (&runs[0]["confined"], &runs[0]["why"]),
                (&json!(false), &json!("approved"))
            );
        }
    }
}

/// Attacks the sandbox does not hold yet (see each `ignore`): run one in a sealed command
/// and say what got through.
fn sealed(name: &str, prepare: impl Fn(&Workspace), command: &str) -> (Workspace, String) {
    let ws = Workspace::new(name);
    prepare(&ws);
    ws.write("attack.sh", command);
    let llm = FakeLlm::start(vec![bash("s1", "sh attack.sh"), text_reply("done")]);
    let (mut acp, session) = server(&ws, &llm, &[], "bypass_permissions");
    let (msgs, _) = acp.prompt(&session, "go");
    assert_eq!(sandboxes(&msgs)[0]["confined"], true);
    (ws, tool_result(&llm, 1))
}

/// A socket is reachable on a read-only mount, and Landlock (ABI 7) has no path-based
/// right for connecting: a sealed command's `/tmp` is emptied instead (and `/run` hidden).
#[test]
fn a_sealed_command_cannot_reach_a_unix_socket_in_tmp() {
    let dir = Workspace::new("sandbox-unix-host");
    let path = dir.root().join("host.sock");
    let listener = UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let command = format!(
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{}')\"",
        path.display()
    );
    let (_, result) = sealed("sandbox-unix", |_| {}, &command);
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == ErrorKind::WouldBlock),
        "a sealed command connected to a host socket: {result}"
    );
}

/// Read-only binds cover what exists: what a sealed command creates where a protected name
/// was missing is removed after it (a link as a link, never followed), and the model is
/// told.
#[test]
fn a_sealed_command_cannot_create_the_protected_names() {
    let (ws, result) = sealed(
        "sandbox-absent",
        |_| {},
        "mkdir -p .iac-code && echo '{}' > .iac-code/settings.json; echo '{}' > .mcp.json; \
         mkdir -p .git/hooks .agents; echo x > .git/hooks/pre-commit",
    );
    for rel in [".iac-code", ".mcp.json", ".git", ".agents"] {
        assert!(!ws.exists(rel), "{rel} was created: {result}");
    }
    assert!(result.contains("the sandbox removed what this command created"), "{result}");
    // A link planted in place of a protected name goes; what it points at stays.
    let (ws, result) = sealed(
        "sandbox-absent-link",
        |ws| ws.write("keep/file.txt", "kept"),
        "ln -s keep .git; ln -s keep/file.txt .mcp.json",
    );
    assert!(!ws.exists(".git") && !ws.exists(".mcp.json"), "{result}");
    assert_eq!(ws.read("keep/file.txt"), "kept", "{result}");
}
