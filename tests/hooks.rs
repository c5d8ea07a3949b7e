//! Hooks, black-box with real hook scripts: a `PreToolUse` block that holds in bypass mode
//! (and in `-p`, and for a sub-agent's calls), `terraform fmt` after a `.tf` write (real
//! terraform), a hook killed at its timeout with its children, a hook's "allow" that never
//! lifts a deny rule, `Stop` loops that end, `UserPromptSubmit` and `SessionStart`, and
//! project hooks that wait for approval.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::infra::terraform;
use crate::support::acp_client::{AcpProcess, Permission, agent_text, updates_of};
use crate::support::command::{TestCommand, iac_code};
use crate::support::fake_llm::{FakeLlm, Reply, text_reply, tool_reply};
use crate::support::procs;
use crate::support::workspace::Workspace;
use crate::tools::tool_result;

/// Writes the user's `settings.json` with these `hooks` (and `permissions`, if any).
fn settings(ws: &Workspace, hooks: Value, permissions: Option<Value>) {
    let mut root = json!({ "hooks": hooks });
    if let Some(permissions) = permissions {
        root["permissions"] = permissions;
    }
    std::fs::write(ws.config().join("settings.json"), root.to_string()).unwrap();
}

fn bash(id: &str, command: &str) -> Reply {
    tool_reply(id, "bash", json!({ "command": command }))
}

/// A session in `mode` over a fake LLM playing `script`.
fn session(ws: &Workspace, script: Vec<Reply>, mode: &str) -> (FakeLlm, AcpProcess, String) {
    let llm = FakeLlm::start(script);
    let (acp, session) = AcpProcess::session_in_mode(ws, &llm, mode);
    (llm, acp, session)
}

/// The text of every `tool_call_update` content block, in order.
fn tool_call_texts(msgs: &[Value]) -> Vec<String> {
    let updates = updates_of(msgs, "tool_call_update");
    let blocks = updates.iter().filter_map(|u| u["content"].as_array()).flatten();
    blocks.filter_map(|c| c["content"]["text"].as_str().map(str::to_string)).collect()
}

/// The last user message of an LLM request.
fn last_user(llm: &FakeLlm, index: usize) -> String {
    let body = &llm.requests()[index].body;
    let messages = body["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    user["content"].as_str().unwrap().to_string()
}

const GUARD: &str = "cat > \"$CLAUDE_PROJECT_DIR/../pre.json\"; \
                     echo 'terraform apply runs only in CI' >&2; exit 2";

#[test]
fn a_pre_tool_use_block_stops_terraform_apply_in_bypass_mode_and_the_model_hears_why() {
    let ws = Workspace::new("hook-guard");
    settings(
        &ws,
        json!({"PreToolUse": [{"matcher": "bash(terraform apply*)", "command": GUARD}]}),
        None,
    );
    let script = vec![
        bash("a1", "echo harmless"),
        bash("a2", "cd . && terraform apply -auto-approve"),
        text_reply("ok"),
    ];
    let (llm, mut acp, session) = session(&ws, script, "bypass_permissions");
    let (msgs, response) = acp.prompt(&session, "apply it");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(tool_result(&llm, 1).contains("harmless"), "an unmatched call runs unhooked");
    let result = tool_result(&llm, 2);
    assert!(
        result.starts_with("Blocked by the PreToolUse hook `cat > ")
            && result.ends_with(": terraform apply runs only in CI"),
        "{result}"
    );
    let texts = tool_call_texts(&msgs);
    assert!(texts.iter().any(|t| t.contains("terraform apply runs only in CI")), "{texts:?}");
    assert!(
        texts.iter().any(|t| t.starts_with("hook PreToolUse `cat > ") && t.contains("blocked"))
    );
    // The hook read Claude Code's fields on its stdin.
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.root().join("pre.json")).unwrap())
            .unwrap();
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["session_id"], session.as_str());
    assert_eq!(input["cwd"], ws.project().display().to_string());
    assert_eq!(input["tool_name"], "bash");
    assert_eq!(input["tool_input"]["command"], "cd . && terraform apply -auto-approve");
    assert_eq!(input["tool_use_id"], "a2");
    assert_eq!(input["permission_mode"], "bypass_permissions");
}

#[test]
fn hooks_hold_in_one_shot_mode_and_for_a_sub_agents_calls() {
    let ws = Workspace::new("hook-oneshot");
    settings(
        &ws,
        json!({"PreToolUse": [{"matcher": "bash(terraform apply*)", "command": GUARD}]}),
        None,
    );
    let task =
        json!({"prompt": "apply", "description": "apply", "subagent_type": "general-purpose"});
    let llm = FakeLlm::start(vec![
        tool_reply("p1", "agent", task),
        bash("s1", "terraform apply -auto-approve"),
        text_reply("sub done"),
        text_reply("ok"),
    ]);
    let mut command = iac_code(&ws);
    command.args(["-p", "apply", "--permission-mode", "bypass_permissions"]).fake_llm(&llm);
    let out = command.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sub_result = tool_result(&llm, 2);
    assert!(sub_result.contains("terraform apply runs only in CI"), "{sub_result}");
}

#[test]
fn a_post_tool_use_hook_runs_terraform_fmt_after_a_tf_write() {
    let Some(_) = terraform() else { return };
    let ws = Workspace::new("hook-fmt");
    let matcher = "write_file(*.tf)|edit_file(*.tf)";
    let command = "terraform fmt -list=false . && echo formatted";
    settings(&ws, json!({"PostToolUse": [{"matcher": matcher, "command": command}]}), None);
    let messy =
        "resource \"terraform_data\" \"a\" {\ninput=\"one\"\n    triggers_replace=[\"v1\"]\n}\n";
    let script = vec![
        tool_reply("w1", "write_file", json!({"path": "main.tf", "content": messy})),
        tool_reply("w2", "write_file", json!({"path": "notes.md", "content": "a  =  b\n"})),
        text_reply("ok"),
    ];
    let (llm, mut acp, session) = session(&ws, script, "accept_edits");
    let (msgs, _) = acp.prompt(&session, "write it");
    let written = ws.read("main.tf");
    assert!(written.contains("  input            = \"one\"\n"), "{written}");
    assert!(written.contains("  triggers_replace = [\"v1\"]\n"), "{written}");
    let result = tool_result(&llm, 1);
    assert!(result.contains("[the PostToolUse hook `terraform fmt"), "{result}");
    assert!(result.ends_with("says]\nformatted"), "{result}");
    assert!(!tool_result(&llm, 2).contains("PostToolUse"), "notes.md matched nothing");
    let texts = tool_call_texts(&msgs);
    assert_eq!(texts.iter().filter(|t| t.starts_with("hook PostToolUse")).count(), 2, "{texts:?}");
}

/// Waits (bounded) until `pid` is gone.
fn gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while procs::alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

#[test]
fn a_hook_past_its_timeout_is_killed_with_its_children_and_the_call_goes_on() {
    let ws = Workspace::new("hook-timeout");
    let command = "echo $$ > \"$CLAUDE_PROJECT_DIR/../hook.pid\"; \
                   sleep 300 & echo $! > \"$CLAUDE_PROJECT_DIR/../child.pid\"; sleep 300";
    settings(&ws, json!({"PreToolUse": [{"command": command, "timeout": 1}]}), None);
    let script = vec![bash("b1", "echo the call ran"), text_reply("ok")];
    let (llm, mut acp, session) = session(&ws, script, "bypass_permissions");
    let started = Instant::now();
    let (msgs, _) = acp.prompt(&session, "go");
    assert!(started.elapsed() < Duration::from_secs(9), "{:?}", started.elapsed());
    assert!(tool_result(&llm, 1).contains("the call ran"), "a timeout warns and goes on");
    let text = agent_text(&msgs);
    assert!(text.contains("timed out after 1 s; it was killed with every process"), "{text}");
    for file in ["hook.pid", "child.pid"] {
        let pid: u32 =
            std::fs::read_to_string(ws.root().join(file)).unwrap().trim().parse().unwrap();
        assert!(gone(pid), "{file}: {pid} outlived the hook");
    }
}

#[test]
fn a_hooks_allow_skips_the_ordinary_question_but_never_lifts_a_deny_rule() {
    let ws = Workspace::new("hook-allow");
    let allow = r#"echo '{"decision": "allow", "reason": "reviewed by the hook"}'"#;
    let deny = json!({"deny": ["bash(rm *)"]});
    settings(&ws, json!({"PreToolUse": [{"matcher": "*", "command": allow}]}), Some(deny));
    ws.write("keep.txt", "x");
    let script = vec![
        bash("d1", "rm keep.txt"),
        tool_reply("w1", "write_file", json!({"path": "new.txt", "content": "y"})),
        text_reply("ok"),
    ];
    let (llm, mut acp, session) = session(&ws, script, "default");
    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&session, "clean up");
    assert!(tool_result(&llm, 1).starts_with("Denied by the permission rule `bash(rm *)`"));
    assert!(ws.exists("keep.txt"));
    let asked = msgs.iter().filter(|m| m["method"] == "session/request_permission").count();
    assert_eq!(asked, 0, "the write's ordinary question was skipped");
    assert_eq!(ws.read("new.txt"), "y");
}

#[test]
fn a_pre_tool_use_ask_asks_even_in_bypass_mode() {
    let ws = Workspace::new("hook-ask");
    let ask = r#"echo '{"hookSpecificOutput": {"permissionDecision": "ask",
                                               "permissionDecisionReason": "prod context"}}'"#;
    settings(&ws, json!({"PreToolUse": [{"matcher": "bash(kubectl *)", "command": ask}]}), None);
    let (llm, mut acp, session) =
        session(&ws, vec![bash("k1", "kubectl get pods"), text_reply("ok")], "bypass_permissions");
    acp.set_permission(Permission::RejectOnce);
    let (msgs, _) = acp.prompt(&session, "look");
    let asked: Vec<&Value> =
        msgs.iter().filter(|m| m["method"] == "session/request_permission").collect();
    assert_eq!(asked.len(), 1, "a read the mode would run unasked");
    let title = asked[0]["params"]["toolCall"]["title"].as_str().unwrap();
    assert!(
        title.contains("asked by the PreToolUse hook") && title.contains("prod context"),
        "{title}"
    );
    assert_eq!(tool_result(&llm, 1), "Permission denied.");
}

#[test]
fn a_stop_hook_that_always_blocks_ends_after_three_continuations() {
    let ws = Workspace::new("hook-stop");
    settings(&ws, json!({"Stop": [{"command": "echo 'run the tests first' >&2; exit 2"}]}), None);
    let script = (0..6).map(|n| text_reply(&format!("done {n}"))).collect();
    let (llm, mut acp, session) = session(&ws, script, "default");
    let (_, response) = acp.prompt(&session, "work");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(llm.requests().len(), 4, "the first reply and three continuations");
    for n in 1..4 {
        let instruction = last_user(&llm, n);
        assert!(
            instruction.starts_with("The turn is not over: the Stop hook `echo"),
            "{instruction}"
        );
        assert!(instruction.ends_with(": run the tests first"), "{instruction}");
    }
}

#[test]
fn user_prompt_submit_refuses_or_adds_context_and_session_start_reaches_the_system_prompt() {
    let ws = Workspace::new("hook-prompt");
    let check = "grep -q deploy && { echo 'deploys go through the pipeline' >&2; exit 2; }; \
                 echo 'context: ticket ABC-1'";
    settings(
        &ws,
        json!({"UserPromptSubmit": [{"command": check}],
               "SessionStart": [{"matcher": "startup", "command": "echo 'branch: feature-x'"}]}),
        None,
    );
    let (llm, mut acp, session) = session(&ws, vec![text_reply("hi")], "default");
    let (msgs, response) = acp.prompt(&session, "please deploy now");
    assert_eq!(response["result"]["stopReason"], "refusal");
    assert!(agent_text(&msgs).contains("deploys go through the pipeline"), "{}", agent_text(&msgs));
    assert!(llm.requests().is_empty(), "the model was not called");
    let (msgs, response) = acp.prompt(&session, "hello");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(agent_text(&msgs).contains("hook UserPromptSubmit"), "{}", agent_text(&msgs));
    assert!(last_user(&llm, 0).starts_with("hello\n\n[the UserPromptSubmit hook `grep"));
    assert!(last_user(&llm, 0).ends_with("says]\ncontext: ticket ABC-1"));
    let system = llm.requests()[0].body["messages"][0]["content"].as_str().unwrap().to_string();
    assert!(
        system.contains("SessionStart hook `echo 'branch: feature-x'` says]\nbranch: feature-x"),
        "{system}"
    );
}

#[test]
fn project_hooks_do_not_run_before_approval() {
    let ws = Workspace::new("hook-project");
    let marker = ws.root().join("ran");
    let command = format!("touch {}; echo 'project says no' >&2; exit 2", marker.display());
    let file = json!({"hooks": {"PreToolUse": [{"matcher": "bash", "command": command}]}});
    ws.write(".iac-code/settings.json", &file.to_string());
    let script = vec![
        bash("b1", "echo first"),
        text_reply("ok"),
        bash("b2", "echo second"),
        text_reply("ok"),
    ];
    let (llm, mut acp, session) = session(&ws, script, "bypass_permissions");
    acp.prompt(&session, "one");
    assert!(tool_result(&llm, 1).contains("first"));
    assert!(!marker.exists(), "an unapproved project hook never runs");
    let out = iac_code(&ws).args(["config", "approve"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("hook\tPreToolUse\tbash\ttouch "));
    acp.prompt(&session, "two");
    assert!(marker.exists());
    assert!(tool_result(&llm, 3).ends_with(": project says no"), "{}", tool_result(&llm, 3));
}

#[test]
fn malformed_hooks_are_configuration_errors_and_config_show_lists_hooks_with_their_source() {
    let ws = Workspace::new("hook-config");
    settings(&ws, json!({"PreToolUse": [{"matcher": "Shell(rm*)", "command": "x"}]}), None);
    for args in [&["config", "show"][..], &["-p", "hello"], &["acp"]] {
        let out = iac_code(&ws).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("settings.json: hooks.PreToolUse[0].matcher: rule 'Shell(rm*)'"));
    }
    let guard = json!([{"matcher": "bash(terraform apply*)", "command": "./guard.sh"}]);
    settings(&ws, json!({"PreToolUse": guard}), None);
    let check = json!({"type": "command", "command": "make check", "timeout": 5});
    let project = json!({"hooks": {"Stop": [{"hooks": [check]}]}});
    ws.write(".iac-code/settings.json", &project.to_string());
    let out = iac_code(&ws).args(["config", "show"]).output().unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    let (user, file) = (ws.config().join("settings.json"), ws.path(".iac-code/settings.json"));
    for line in [
        format!(
            "hooks.PreToolUse\tbash(terraform apply*) → ./guard.sh (timeout 60 s)\t{}",
            user.display()
        ),
        format!(
            "hooks.Stop\t* → make check (timeout 5 s)\t{} (not approved: iac-code config approve)",
            file.display()
        ),
    ] {
        assert!(shown.lines().any(|l| l == line), "{line:?} in {shown}");
    }
    // A malformed project section stops the prompt, approved or not.
    ws.write(".iac-code/settings.json", r#"{"hooks": {"Stop": [{"command": 1}]}}"#);
    let llm = FakeLlm::start(vec![text_reply("never")]);
    let out = iac_code(&ws).args(["-p", "hello"]).fake_llm(&llm).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("hooks.Stop[0].command: must be a string"), "{stderr}");
    assert!(llm.requests().is_empty());
    let out = iac_code(&ws).args(["config", "approve"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "a malformed section is never approved");
    assert!(!ws.config().join("project-approvals.json").exists());
}

fn write_file(id: &str, path: &str, content: &str) -> Reply {
    tool_reply(id, "write_file", json!({ "path": path, "content": content }))
}

/// A project whose approved `PreToolUse` hook (`sh hooks/guard.sh`, for bash calls) sources
/// `hooks/lib.sh`, which appends `said` to `<workspace>/hook.log`: the library's line.
fn lib_line(ws: &Workspace, said: &str) -> String {
    format!("say() {{ echo {said} >> '{}'; }}\n", ws.root().join("hook.log").display())
}

fn guarded_project(ws: &Workspace) {
    let file =
        json!({"hooks": {"PreToolUse": [{"matcher": "bash", "command": "sh hooks/guard.sh"}]}});
    ws.write(".iac-code/settings.json", &file.to_string());
    ws.write("hooks/guard.sh", ". hooks/lib.sh\nsay\nexit 0\n");
    ws.write("hooks/lib.sh", &lib_line(ws, "original"));
    let out = iac_code(ws).args(["config", "approve"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn hook_log(ws: &Workspace) -> String {
    std::fs::read_to_string(ws.root().join("hook.log")).unwrap_or_default()
}

#[test]
fn in_accept_edits_a_write_into_an_approved_hooks_directory_asks() {
    let ws = Workspace::new("hook-dir-ask");
    guarded_project(&ws);
    let evil = lib_line(&ws, "changed");
    let script = vec![
        write_file("w1", "hooks/lib.sh", &evil),
        write_file("w2", "hooks/new.sh", "echo new\n"),
        write_file("w3", "notes.md", "a project file\n"),
        bash("b1", &format!("printf '%s' \"{}\" > hooks/lib.sh", evil.trim_end())),
        text_reply("done"),
    ];
    let (_llm, mut acp, session) = session(&ws, script, "accept_edits");
    acp.set_permission(Permission::RejectOnce);
    let (msgs, response) = acp.prompt(&session, "go");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let asked: Vec<&Value> =
        msgs.iter().filter(|m| m["method"] == "session/request_permission").collect();
    assert_eq!(asked.len(), 3, "the two writes into hooks/ and the redirect ask: {asked:#?}");
    for question in &asked {
        assert!(question.to_string().contains("the hooks of"), "{question}");
    }
    assert_eq!(ws.read("hooks/lib.sh"), lib_line(&ws, "original"), "refused: unchanged");
    assert!(!ws.exists("hooks/new.sh"));
    assert!(ws.exists("notes.md"), "a write elsewhere in the project runs unasked");
    assert_eq!(hook_log(&ws), "original\n", "the approved hook ran, as approved");
}

#[test]
fn in_bypass_a_changed_or_new_file_in_the_hooks_directory_stops_the_hooks_at_the_next_call() {
    let ws = Workspace::new("hook-dir-bypass");
    guarded_project(&ws);
    let script = vec![
        bash("b1", "echo one"),
        write_file("w1", "hooks/lib.sh", &lib_line(&ws, "changed")),
        bash("b2", "echo two"),
        text_reply("done"),
        bash("b3", "echo three"),
        write_file("w2", "hooks/extra.sh", "echo extra\n"),
        bash("b4", "echo four"),
        text_reply("done"),
    ];
    let (llm, mut acp, session) = session(&ws, script, "bypass_permissions");
    let (msgs, _) = acp.prompt(&session, "one");
    assert_eq!(ws.read("hooks/lib.sh"), lib_line(&ws, "changed"), "bypass: the write ran");
    assert!(tool_result(&llm, 3).contains("two"), "the call itself went on");
    assert_eq!(hook_log(&ws), "original\n", "the changed library never ran");
    let said = agent_text(&msgs);
    assert!(
        said.contains("did not run")
            && said.contains("hooks/lib.sh changed since they were approved"),
        "{said}"
    );
    assert!(said.contains("iac-code config approve"), "{said}");

    // Approved again (as changed), then a new file beside the scripts.
    let out = iac_code(&ws).args(["config", "approve"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (msgs, _) = acp.prompt(&session, "two");
    assert!(ws.exists("hooks/extra.sh"));
    assert_eq!(hook_log(&ws), "original\nchanged\n", "approved: it runs, once, before the write");
    let said = agent_text(&msgs);
    assert!(said.contains("hooks/extra.sh changed since they were approved"), "{said}");
}
