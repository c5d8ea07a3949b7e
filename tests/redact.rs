//! Issue 33, black-box with a real terraform (`terraform_data`, a `sensitive` variable and
//! output, local state, offline): random markers planted in state, plan JSON, `.env`, a
//! kubeconfig, a Secret manifest, a service-account JSON with a PEM key, a credentials file
//! and the agent's environment are read in every way the tools allow, the person answering
//! yes to every question; no marker reaches a request the model gets, the journal, the
//! export, the logs or the client, and the tool results hold placeholders. A placeholder
//! the model writes through bash and write_file lands as the value; one it invents is an
//! error; memory refuses secrets and placeholders.

use std::hash::{BuildHasher, Hasher};
use std::path::Path;
use std::process::Stdio;

use base64::Engine;
use serde_json::{Value, json};

use crate::infra::{bash, terraform, tf};
use crate::support::acp_client::{AcpProcess, updates_of};
use crate::support::fake_llm::{FakeLlm, Reply, text_reply, tool_reply};
use crate::support::http_fixture::HttpFixture;
use crate::support::workspace::Workspace;

/// A random marker of `len` letters and digits, mixed case (so every shape takes it).
fn marker(len: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    let mut out = String::from("Mk7q");
    while out.len() < len {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_usize(out.len());
        let n = hasher.finish() as usize;
        out.push(char::from(ALPHABET[n % ALPHABET.len()]));
    }
    out
}

/// Every file below `dir`, as text.
fn files_text(dir: &Path) -> String {
    let mut out = String::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.push_str(&files_text(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    out
}

/// What every marker must never reach: the requests' bodies, the journal, the export, the
/// log, the agent's messages.
fn assert_nowhere(
    ws: &Workspace,
    llm: &FakeLlm,
    acp: &AcpProcess,
    session: &str,
    markers: &[&str],
) {
    let bodies: Vec<String> =
        llm.requests().iter().map(|r| String::from_utf8_lossy(&r.raw).into_owned()).collect();
    // The file store's journal on disk; in Redis (`IAC_TEST_SESSION_STORE`) the export below
    // reads the same records from the store.
    let journal = files_text(&ws.config().join("sessions"));
    if crate::support::command::store_under_test().is_none() {
        assert!(journal.contains(session) || !journal.is_empty(), "a journal was written");
    }
    let export = crate::support::command::iac_code(ws)
        .args(["sessions", "export", session])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let export = String::from_utf8_lossy(&export.stdout).into_owned();
    assert!(export.contains("tool"), "the export holds the session: {export:.200}");
    let from_agent: String =
        acp.transcript().lines().filter(|l| l.starts_with("<--")).collect::<Vec<_>>().join("\n");
    for marker in markers {
        for (n, body) in bodies.iter().enumerate() {
            assert!(!body.contains(marker), "request {n} holds {marker}");
        }
        assert!(!journal.contains(marker), "the journal holds {marker}");
        assert!(!export.contains(marker), "the export holds {marker}");
        assert!(!acp.stderr().contains(marker), "the log holds {marker}");
        assert!(!from_agent.contains(marker), "the client got {marker}");
    }
}

const MAIN_TF: &str = r#"
variable "db_password" {
  type      = string
  sensitive = true
}
resource "terraform_data" "db" {
  input = { user = "admin", password = var.db_password }
}
output "pw" {
  value     = var.db_password
  sensitive = true
}
"#;

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario followed through every place a secret could land"
)]
fn no_marker_reaches_the_model_the_journal_the_export_or_the_log() {
    let Some(_) = terraform() else { return };
    let ws = Workspace::new("redact-markers");
    let tf_marker = marker(24);
    ws.write("main.tf", MAIN_TF);
    let project = ws.project();
    tf(&project, &["init", "-input=false"]);
    tf(
        &project,
        &["apply", "-auto-approve", "-input=false", &format!("-var=db_password={tf_marker}")],
    );
    let plan_args = format!("-var=db_password={tf_marker}");
    tf(&project, &["plan", "-input=false", "-out=tfplan", &plan_args]);
    let env_marker = marker(22);
    ws.write(".env", &format!("API_TOKEN={env_marker}\nREGION=eu-west-1\n"));
    let kube_marker = marker(32);
    let home = ws.root();
    std::fs::create_dir_all(home.join(".kube")).unwrap();
    std::fs::write(
        home.join(".kube/config"),
        format!("apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: {kube_marker}\n"),
    )
    .unwrap();
    let (data_marker, string_marker) = (marker(20), marker(21));
    let encoded = base64::engine::general_purpose::STANDARD.encode(&data_marker);
    ws.write(
        "k8s/secret.yaml",
        &format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {encoded}\nstringData:\n  api: {string_marker}\n"
        ),
    );
    let pem_marker = marker(48);
    ws.write(
        "sa.json",
        &format!(
            "{{\"type\": \"service_account\", \"project_id\": \"p\", \"private_key_id\": \"k1\", \"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{pem_marker}\\n-----END PRIVATE KEY-----\\n\", \"client_email\": \"a@p.iam.gserviceaccount.com\"}}\n"
        ),
    );
    let aws_marker = marker(40);
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::write(
        home.join(".aws/credentials"),
        format!("[default]\naws_access_key_id = AKIAZ7QW4N2KX5RT3HVB\naws_secret_access_key = {aws_marker}\n"),
    )
    .unwrap();
    let agent_marker = marker(26);

    let reads = [
        "cat terraform.tfstate",
        "terraform output -raw pw; echo; terraform output -json",
        "terraform show -json tfplan",
        "terraform show -json",
        "cat .env k8s/secret.yaml sa.json ~/.kube/config ~/.aws/credentials",
        "grep -rn . .env k8s sa.json",
        "base64 -d <<< $(grep password: k8s/secret.yaml | awk '{print $2}')",
        // The key's body without its header, after the whole file was shown.
        "grep -o 'KEY-----.n[A-Za-z0-9]*' sa.json | cut -c11-",
    ];
    let mut script: Vec<Reply> =
        reads.iter().enumerate().map(|(n, c)| bash(&format!("b{n}"), c)).collect();
    for (n, path) in
        ["terraform.tfstate", ".env", "k8s/secret.yaml", "sa.json", "main.tf"].iter().enumerate()
    {
        script.push(tool_reply(&format!("r{n}"), "read_file", json!({ "path": path })));
    }
    script.push(tool_reply("g1", "grep", json!({ "pattern": "Mk7q", "path": "." })));
    script.push(text_reply("done"));
    let llm = FakeLlm::start(script);
    // The log at trace holds every frame in and out: the values restored and read too.
    let env = [("MY_SERVICE_TOKEN", agent_marker.as_str()), ("IAC_CODE_LOG", "trace")];
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &env);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    // The user embeds a resource holding the agent's own credential, bare.
    let prompt = json!({"sessionId": session, "prompt": [
        {"type": "text", "text": "read everything"},
        {"type": "resource", "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain",
            "text": format!("the service runs with {agent_marker} today")}}
    ]});
    let id = acp.request("session/prompt", prompt);
    let (msgs, response) = acp.until_response(&id);
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    // The tools did print the markers (each read is a real chance to leak).
    assert!(ws.read("terraform.tfstate").contains(&tf_marker));
    let results: Vec<String> =
        (1..llm.requests().len()).map(|i| crate::tools::tool_result(&llm, i)).collect();
    let all = results.join("\n");
    for kind in
        ["terraform-sensitive", "kubernetes-secret", "private-key", "aws-secret-key", "token"]
    {
        assert!(all.contains(&format!("__SECRET:{kind}:")), "no {kind} placeholder in {all}");
    }
    let redacted: Vec<&Value> = updates_of(&msgs, "tool_call_update")
        .into_iter()
        .filter(|u| u["_meta"]["iacCode"]["redacted"]["count"].as_u64().is_some_and(|c| c > 0))
        .collect();
    assert!(redacted.len() >= 5, "each call that redacted says so in _meta");
    let markers = [
        &tf_marker,
        &env_marker,
        &kube_marker,
        &data_marker,
        &string_marker,
        &pem_marker,
        &aws_marker,
        &agent_marker,
    ];
    let markers: Vec<&str> = markers.iter().map(|m| m.as_str()).collect();
    assert!(acp.stderr().contains("\"jsonrpc\""), "the log traced the frames");
    assert_nowhere(&ws, &llm, &acp, &session, &markers);
}

/// A workspace whose `.env` holds a fresh token (returned), and a fake LLM whose first
/// turn reads it with `cat`.
fn token_in_env(name: &str) -> (Workspace, String, FakeLlm) {
    let ws = Workspace::new(name);
    let value = marker(24);
    ws.write(".env", &format!("DEPLOY_TOKEN={value}\n"));
    let llm = FakeLlm::start(vec![bash("c1", "cat .env"), text_reply("read")]);
    (ws, value, llm)
}

/// Has the agent read `.env` in `session`: the placeholder the model got for its token.
fn read_env(acp: &mut AcpProcess, session: &str, llm: &FakeLlm) -> String {
    acp.prompt(session, "read .env");
    placeholder_in(&crate::tools::tool_result(llm, 1))
}

/// The placeholder of `.env`'s token in the text `result`.
fn placeholder_in(result: &str) -> String {
    let at = result.find("__SECRET:").expect("a placeholder");
    let end = result[at + 9..].find("__").expect("its end") + at + 11;
    result[at..end].to_string()
}

#[test]
fn a_placeholder_the_model_writes_lands_as_the_value_and_never_comes_back() {
    let (ws, value, llm) = token_in_env("redact-restore");
    let (mut acp, session) = AcpProcess::session_in_mode(&ws, &llm, "default");
    let placeholder = read_env(&mut acp, &session, &llm);
    assert!(placeholder.starts_with("__SECRET:token:"), "{placeholder}");
    llm.push(bash(
        "c2",
        &format!("printf '%s' {placeholder} > from_bash.txt && cat from_bash.txt"),
    ));
    llm.push(tool_reply(
        "w1",
        "write_file",
        json!({ "path": "from_write.txt", "content": format!("token={placeholder}\n") }),
    ));
    let edit = json!({ "path": "from_write.txt", "old_string": "token=", "new_string": format!("token={placeholder}\nagain=") });
    llm.push(tool_reply("e1", "edit_file", edit));
    llm.push(bash("c3", "echo __SECRET:token:9999__ > invented.txt"));
    llm.push(tool_reply("m1", "write_memory", json!({ "name": "deploy", "type": "project", "description": "the token", "content": format!("use {placeholder}") })));
    llm.push(text_reply("written"));
    let (msgs, _) = acp.prompt(&session, "write it");
    assert_eq!(ws.read("from_bash.txt"), value, "bash got the value");
    let written = ws.read("from_write.txt");
    assert_eq!(
        written,
        format!("token={value}\nagain={value}\n"),
        "write_file and edit_file got it"
    );
    assert!(!ws.exists("invented.txt"), "an unknown placeholder runs nothing");
    let invented = crate::tools::tool_result(&llm, 6);
    assert!(
        invented.contains("__SECRET:token:9999__")
            && invented.contains("not a secret of this session"),
        "{invented}"
    );
    let memory = crate::tools::tool_result(&llm, 7);
    assert!(memory.contains("Refused"), "{memory}");
    assert!(!ws.config().join("memory").exists(), "nothing remembered");
    // The output of `cat` came back as the placeholder; no later request holds the value.
    assert!(crate::tools::tool_result(&llm, 3).contains(&placeholder));
    let questions: Vec<&Value> =
        msgs.iter().filter(|m| m["method"] == "session/request_permission").collect();
    for question in &questions {
        assert!(!question.to_string().contains(&value), "the question shows placeholders");
    }
    // Each call that gets the value is asked, names the placeholder, and offers no always.
    let giving: Vec<&&Value> = questions
        .iter()
        .filter(|q| {
            q["params"]["toolCall"]["title"].as_str().unwrap_or("").contains("with the values of")
        })
        .collect();
    assert_eq!(giving.len(), 3, "bash, write_file and edit_file: {questions:?}");
    for question in giving {
        assert!(question.to_string().contains(&placeholder));
        assert!(!question["params"]["options"].to_string().contains("always"), "{question}");
    }
    assert_nowhere(&ws, &llm, &acp, &session, &[&value]);
}

#[test]
fn a_placeholder_never_changes_what_a_command_is_nor_names_what_was_never_shown() {
    let ws = Workspace::new("redact-hostile");
    let value = marker(24);
    // A hostile project: its token's value is shell syntax.
    ws.write(".env", &format!("API_TOKEN=\"{value};touch pwned\"\n"));
    let host = marker(40);
    let llm = FakeLlm::start(vec![bash("c1", "cat .env"), text_reply("read")]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[("DEPLOY_SECRET", &host)]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    acp.call("session/set_mode", json!({"sessionId": session, "modeId": "bypass_permissions"}));
    let placeholder = read_env(&mut acp, &session, &llm);
    llm.push(bash("c2", &format!("echo {placeholder}")));
    // The host's credential was learned at start and never shown: its number is guessed.
    llm.push(bash("c3", "printf '%s' __SECRET:credential:1__ > guessed.txt"));
    let site = HttpFixture::start(vec![]);
    let url = site.url(&format!("/{placeholder}"));
    llm.push(tool_reply("f1", "web_fetch", json!({ "url": url })));
    // A path never takes a value (it would be a path nobody judged).
    llm.push(tool_reply("p1", "write_file", json!({ "path": placeholder, "content": "x" })));
    llm.push(text_reply("done"));
    acp.prompt(&session, "use it");
    let told = crate::tools::tool_result(&llm, 6);
    assert!(told.contains("never takes a secret's value"), "{told}");
    // web_fetch never gets a value: the URL it sends keeps the placeholder.
    let fetched = crate::tools::tool_result(&llm, 5);
    assert_eq!(site.hits(), [format!("/{placeholder}")], "{fetched}");
    assert!(!ws.exists("pwned"), "the value ran as a command");
    let told = crate::tools::tool_result(&llm, 3);
    assert!(told.contains("shell syntax"), "{told}");
    assert!(!ws.exists("guessed.txt"), "an unseen value is never restored");
    let told = crate::tools::tool_result(&llm, 4);
    assert!(told.contains("not a secret of this session"), "{told}");
    assert_nowhere(&ws, &llm, &acp, &session, &[&value, &host]);
}

#[test]
fn the_title_and_the_system_prompt_are_made_from_redacted_text() {
    let ws = Workspace::new("redact-title");
    let value = marker(24);
    // The project's instructions hold a secret too.
    let told = marker(24);
    ws.write("AGENTS.md", &format!("Tests use api_key = \"{told}\" against the sandbox.\n"));
    let llm = FakeLlm::start(vec![text_reply("noted")]);
    let (mut acp, session) = AcpProcess::session_in_mode(&ws, &llm, "default");
    acp.prompt(&session, &format!("db_password = \"{value}\" is the one to use"));
    let body = String::from_utf8_lossy(&llm.requests()[0].raw).into_owned();
    assert!(body.contains("Tests use api_key"), "AGENTS.md is in the system prompt");
    assert!(!body.contains(&told) && !body.contains(&value), "{body:.400}");
    let list = acp.call("session/list", json!({}));
    let title = list["result"]["sessions"][0]["title"].as_str().unwrap_or_default().to_string();
    assert!(title.contains("__SECRET:"), "the title holds the placeholder: {title}");
    let from_agent: Vec<String> =
        acp.transcript().lines().filter(|l| l.starts_with("<--")).map(str::to_string).collect();
    assert!(!from_agent.iter().any(|l| l.contains(&value)), "no frame of the agent's holds it");
    assert!(!files_text(&ws.config().join("sessions")).contains(&value), "nor the journal");
}

#[test]
fn hooks_sub_agents_and_fetched_pages_reach_the_model_redacted() {
    let ws = Workspace::new("redact-paths");
    let (hook_marker, page_marker, file_marker) = (marker(24), marker(25), marker(26));
    ws.write("notes.txt", &format!("db_password = \"{file_marker}\"\n"));
    // A PostToolUse hook whose words reach the model (and whose command, shown to the
    // client as it runs, holds one too).
    let hook = format!("echo 'token: {hook_marker}'");
    let settings = json!({"hooks": {"PostToolUse": [{"matcher": "read_file", "command": hook}]}});
    std::fs::write(ws.config().join("settings.json"), settings.to_string()).unwrap();
    let page = format!("<html><body><p>api_key = \"{page_marker}\"</p></body></html>");
    let site = HttpFixture::start(vec![(
        "/docs",
        crate::support::http_fixture::Route::ok("text/html", page.as_str()),
    )]);
    let task =
        json!({"prompt": "read notes.txt", "description": "notes", "subagent_type": "explore"});
    let llm = FakeLlm::start(vec![
        tool_reply("f1", "web_fetch", json!({ "url": site.url("/docs") })),
        tool_reply("a1", "agent", task),
        tool_reply("s1", "read_file", json!({ "path": "notes.txt" })),
        text_reply(&format!("the file says {file_marker}")),
        text_reply("done"),
    ]);
    let (mut acp, session) = AcpProcess::session_in_mode(&ws, &llm, "bypass_permissions");
    acp.prompt(&session, "look around");
    let fetched = crate::tools::tool_result(&llm, 1);
    assert!(fetched.contains("__SECRET:"), "the page came back redacted: {fetched}");
    // The sub-agent's own result (what its model wrote, quoting the file) is redacted too.
    let reported = crate::tools::tool_result(&llm, 4);
    assert!(reported.contains("__SECRET:"), "{reported}");
    let hooked = crate::tools::tool_result(&llm, 3);
    assert!(hooked.contains("PostToolUse") && hooked.contains("__SECRET:"), "{hooked}");
    assert_nowhere(&ws, &llm, &acp, &session, &[&hook_marker, &page_marker, &file_marker]);
}

#[test]
fn a_secrets_data_read_without_its_kind_is_still_redacted() {
    let ws = Workspace::new("redact-window");
    let (a, b) = (marker(20), marker(21));
    let encoded = base64::engine::general_purpose::STANDARD.encode(&a);
    ws.write(
        "k8s/base/db.yaml",
        &format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  DB_URL: {encoded}\nstringData:\n  api: {b}\n"),
    );
    let llm = FakeLlm::start(vec![
        tool_reply("r1", "read_file", json!({ "path": "k8s/base/db.yaml", "start_line": 6 })),
        bash("g1", "grep -h -A1 DB_URL k8s/base/db.yaml; tail -n1 k8s/base/db.yaml"),
        text_reply("done"),
    ]);
    let (mut acp, session) = AcpProcess::session_in_mode(&ws, &llm, "default");
    acp.prompt(&session, "look at the secret");
    for n in [1, 2] {
        let result = crate::tools::tool_result(&llm, n);
        assert!(result.contains("__SECRET:kubernetes-secret:"), "{result}");
    }
    assert_nowhere(&ws, &llm, &acp, &session, &[&encoded, &b]);
}

#[test]
fn redaction_off_lets_output_through_and_says_so() {
    let (ws, value, llm) = token_in_env("redact-off");
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[("IAC_CODE_REDACT", "off")]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    acp.prompt(&session, "read .env");
    assert!(crate::tools::tool_result(&llm, 1).contains(&value));
    assert!(acp.stderr().contains("IAC_CODE_REDACT=off"), "a warning in the log");
}

#[test]
fn an_mcp_call_gets_the_value_and_its_result_comes_back_redacted() {
    use crate::support::fake_mcp::{Behaviour, FakeTool, Script, stdio_entry, with_method};
    let (ws, value, llm) = token_in_env("redact-mcp");
    let script = Script::with_tools(vec![FakeTool::new("echo", Behaviour::Echo)]);
    let (entry, server) = stdio_entry("fs", &script, ws.root());
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let (session, _) = crate::mcp::open(&mut acp, &ws.project(), json!([entry]));
    let placeholder = read_env(&mut acp, &session, &llm);
    llm.push(tool_reply("m1", "mcp__fs__echo", json!({ "text": format!("token {placeholder}") })));
    llm.push(text_reply("echoed"));
    let (msgs, _) = acp.prompt(&session, "echo it");
    let received = server.received();
    let sent = with_method(&received, "tools/call");
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0]["params"]["arguments"]["text"],
        format!("token {value}"),
        "the server got the value"
    );
    let echoed = crate::tools::tool_result(&llm, 3);
    assert_eq!(echoed, format!("token {placeholder}"), "the result is redacted again");
    let done = updates_of(&msgs, "tool_call_update");
    let meta = done.iter().rev().find(|u| u.get("status").is_some()).unwrap()["_meta"]["iacCode"]["redacted"].clone();
    assert_eq!(meta, json!({ "count": 1, "kinds": ["token"] }));
    assert_nowhere(&ws, &llm, &acp, &session, &[&value]);
}

#[test]
fn a_loaded_session_restores_what_this_node_sealed_and_another_key_cannot() {
    use std::os::unix::fs::PermissionsExt;
    let (ws, value, llm) = token_in_env("redact-load");
    let (mut acp, session) = AcpProcess::session_in_mode(&ws, &llm, "default");
    let placeholder = read_env(&mut acp, &session, &llm);
    acp.kill();
    let kept = ws.config().join("vaults").join(&session);
    let sealed = std::fs::read(&kept).expect("the vault is kept");
    assert!(!String::from_utf8_lossy(&sealed).contains(&value), "sealed, not in clear");
    assert_eq!(std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777, 0o600);
    let load = |llm: &FakeLlm, out: &str| {
        llm.push(bash("c", &format!("printf '%s' {placeholder} > {out}")));
        llm.push(text_reply("tried"));
        let mut acp = AcpProcess::spawn_with_llm(&ws, llm, &[]);
        acp.initialize();
        let (_, response) = acp.open_session("session/load", &session, &ws.project());
        assert!(response.get("error").is_none(), "{response}");
        acp.prompt(&session, "write it");
        acp
    };
    // This node: its key opens the vault; the placeholder lands as the value.
    let mut again = load(&llm, "here.txt");
    assert_eq!(ws.read("here.txt"), value);
    again.kill();
    // Another node's key (this one's replaced): the placeholder is an error, nothing runs.
    std::fs::remove_file(ws.config().join("session-key")).unwrap();
    let elsewhere = load(&llm, "elsewhere.txt");
    let result = crate::tools::tool_result(&llm, 5);
    assert!(result.contains(&placeholder) && result.contains("cannot be opened"), "{result}");
    assert!(!ws.exists("elsewhere.txt"), "nothing ran");
    assert!(elsewhere.stderr().contains("cannot be restored"), "the log says so");
}

#[test]
fn a_fork_keeps_the_placeholders_of_the_session_it_copies() {
    let (ws, value, llm) = token_in_env("redact-fork");
    let (mut acp, session) = AcpProcess::session_in_mode(&ws, &llm, "default");
    let placeholder = read_env(&mut acp, &session, &llm);
    let (_, forked) = acp.open_session("session/fork", &session, &ws.project());
    let fork = forked["result"]["sessionId"].as_str().expect("a fork").to_string();
    assert_ne!(fork, session);
    // Kept under the fork's own id at once (a later load of the fork restores it too).
    assert!(ws.config().join("vaults").join(&fork).is_file(), "the fork's vault is kept");
    llm.push(bash("c2", &format!("printf '%s' {placeholder} > forked.txt")));
    llm.push(text_reply("written"));
    acp.prompt(&fork, "write it");
    assert_eq!(ws.read("forked.txt"), value, "{}", crate::tools::tool_result(&llm, 3));
}
