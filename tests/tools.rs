//! The file and search tools, end to end: what the model gets back, what the client sees,
//! caps, gitignore, binary files, and paths judged by where they really point.

use std::fs::{File, FileTimes};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, Permission, updates_of};
use crate::support::fake_llm::{FakeLlm, text_reply, tool_reply};
use crate::support::workspace::Workspace;

/// One tool call in a fresh session.
pub struct ToolRun {
    /// Every message the client received during the prompt.
    pub msgs: Vec<Value>,
    /// The tool result the model got.
    pub result: String,
    /// The last tool_call_update status.
    pub status: String,
    /// The permission requests made.
    pub asked: Vec<Value>,
}

/// Runs `name(args)` as the model's only tool call, answering questions with `permission`.
pub fn run_tool(ws: &Workspace, name: &str, args: Value, permission: Permission) -> ToolRun {
    let llm = FakeLlm::start(vec![tool_reply("call_1", name, args), text_reply("done")]);
    let mut acp = AcpProcess::spawn_with_llm(ws, &llm, &[]);
    acp.set_permission(permission);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    let (msgs, response) = acp.prompt(&session, "go");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{}", acp.context());
    ToolRun {
        result: tool_result(&llm, 1),
        status: last_status(&msgs),
        asked: msgs
            .iter()
            .filter(|m| m["method"] == "session/request_permission")
            .cloned()
            .collect(),
        msgs,
    }
}

/// The content of the last tool message in LLM request `index`.
pub fn tool_result(llm: &FakeLlm, index: usize) -> String {
    let body = &llm.requests()[index].body;
    let messages = body["messages"].as_array().expect("messages");
    let tool = messages.iter().rev().find(|m| m["role"] == "tool").expect("a tool result");
    tool["content"].as_str().expect("text content").to_string()
}

pub fn last_status(msgs: &[Value]) -> String {
    let updates = updates_of(msgs, "tool_call_update");
    let last = updates.iter().rev().find(|u| u.get("status").is_some()).expect("an update");
    last["status"].as_str().unwrap().to_string()
}

fn set_mtime(ws: &Workspace, rel: &str, secs_ago: u64) {
    let file = File::options().write(true).open(ws.path(rel)).unwrap();
    let time = SystemTime::now() - Duration::from_secs(secs_ago);
    file.set_times(FileTimes::new().set_modified(time)).unwrap();
}

#[test]
fn read_file_numbers_lines_windows_and_caps() {
    let ws = Workspace::new("read-file");
    let body: String = (1..=2500).map(|n| format!("line {n}\n")).collect();
    ws.write("big.tf", &body);
    let run = run_tool(&ws, "read_file", json!({"path": "big.tf"}), Permission::AllowOnce);
    assert!(run.asked.is_empty(), "reading inside the project does not ask");
    assert!(run.result.contains("     1\tline 1\n"), "{}", &run.result[..200]);
    assert!(run.result.contains("  2000\tline 2000\n"));
    assert!(!run.result.contains("line 2001\n"));
    assert!(run.result.contains("truncated"), "a visible note");

    ws.write("min.json", &format!("{}\nshort\n", "z".repeat(2500)));
    let run = run_tool(&ws, "read_file", json!({"path": "min.json"}), Permission::AllowOnce);
    let expected = format!(
        "     1\t{} [... line truncated, 500 more characters]\n     2\tshort\n",
        "z".repeat(2000)
    );
    assert!(run.result.ends_with(&expected), "{}", run.result);

    let args = json!({"file_path": "big.tf", "start_line": 2499, "end_line": 9999});
    let run = run_tool(&ws, "read_file", args, Permission::AllowOnce);
    assert!(run.result.contains("  2499\tline 2499\n  2500\tline 2500\n"), "{}", run.result);
    assert_eq!(run.status, "completed");
}

#[test]
fn read_file_refuses_binary_and_replaces_bad_utf8() {
    let ws = Workspace::new("read-binary");
    std::fs::write(ws.path("plan.bin"), b"\x00\x01\x02tfplan").unwrap();
    std::fs::write(ws.path("latin1.txt"), b"caf\xe9\n").unwrap();
    let run = run_tool(&ws, "read_file", json!({"path": "plan.bin"}), Permission::AllowOnce);
    assert_eq!(run.status, "failed");
    assert!(run.result.contains("binary"), "{}", run.result);
    let run = run_tool(&ws, "read_file", json!({"path": "latin1.txt"}), Permission::AllowOnce);
    assert_eq!(run.status, "completed");
    assert!(run.result.contains("caf\u{fffd}"), "{}", run.result);
    let run = run_tool(&ws, "read_file", json!({"path": "nope.tf"}), Permission::AllowOnce);
    assert_eq!(run.status, "failed");
    assert!(run.result.contains("nope.tf"), "{}", run.result);
}

#[test]
fn list_files_is_sorted_with_dirs_and_sizes() {
    let ws = Workspace::new("list-files");
    ws.write("b.tf", &"x".repeat(2048));
    ws.write("a.tf", "x");
    ws.write("modules/vpc/main.tf", "");
    let run = run_tool(&ws, "list_files", json!({}), Permission::AllowOnce);
    let lines: Vec<&str> = run.result.lines().skip(1).collect();
    assert_eq!(lines, ["  a.tf (1 B)", "  b.tf (2.0 KB)", "  modules/"], "{}", run.result);
}

#[test]
fn glob_is_recursive_gitignore_aware_and_newest_first() {
    let ws = Workspace::new("glob");
    ws.write(".gitignore", ".terraform/\n*.tfstate\n");
    for (rel, age) in [("main.tf", 30), ("modules/vpc/vpc.tf", 10), ("env/prod/prod.tf", 20)] {
        ws.write(rel, "");
        set_mtime(&ws, rel, age);
    }
    ws.write(".terraform/modules/x/cached.tf", "");
    ws.write("terraform.tfstate", "{}");
    ws.write(".github/workflows/plan.yml", "");
    ws.write(".env", "SECRET=1");
    ws.write(".config/gh/hosts.yml", "oauth_token: x");
    std::os::unix::fs::symlink(ws.root(), ws.path("rootlink")).unwrap();
    std::fs::write(ws.root().join("outside.tf"), "").unwrap();
    let run = run_tool(&ws, "glob", json!({"pattern": "**/*.tf"}), Permission::AllowOnce);
    let files: Vec<&str> = run.result.lines().skip(1).collect();
    assert_eq!(files, ["modules/vpc/vpc.tf", "env/prod/prod.tf", "main.tf"], "{}", run.result);

    let run = run_tool(&ws, "glob", json!({"pattern": "*.tf"}), Permission::AllowOnce);
    assert_eq!(run.result.lines().skip(1).collect::<Vec<_>>(), ["main.tf"]);
    let run = run_tool(&ws, "glob", json!({"pattern": "**/*"}), Permission::AllowOnce);
    assert!(run.result.contains(".github/workflows/plan.yml"), "hidden files are searched");
    assert!(!run.result.contains(".env") && !run.result.contains("tfstate"), "{}", run.result);
    assert!(!run.result.contains("hosts.yml") && !run.result.contains("outside"), "{}", run.result);
    let run = run_tool(&ws, "grep", json!({"pattern": "oauth_token"}), Permission::AllowOnce);
    assert!(run.result.starts_with("No matches"), "secrets are not searched: {}", run.result);
    let run = run_tool(&ws, "glob", json!({"pattern": "*.yaml"}), Permission::AllowOnce);
    assert!(run.result.starts_with("No files found"), "{}", run.result);
    assert!(run.result.contains("**/*.yaml"), "suggests a recursive pattern");
}

#[test]
fn glob_caps_the_list_and_counts_the_rest() {
    let ws = Workspace::new("glob-cap");
    for n in 0..620 {
        ws.write(&format!("f/{n}.yaml"), "");
    }
    let run = run_tool(&ws, "glob", json!({"pattern": "f/*.yaml"}), Permission::AllowOnce);
    assert!(run.result.starts_with("Found 620 files"), "{}", &run.result[..80]);
    assert_eq!(run.result.lines().filter(|l| l.ends_with(".yaml")).count(), 500);
    assert!(run.result.contains("120 more files not shown"));
}

#[test]
fn grep_modes_context_filters_and_errors() {
    let ws = Workspace::new("grep");
    ws.write("main.tf", "resource \"aws_s3_bucket\" \"logs\" {\n  bucket = \"logs\"\n}\n");
    ws.write("vars.tf", "variable \"region\" {}\n# S3 buckets below\n");
    ws.write("notes.md", "aws_s3_bucket in docs\n");
    ws.write("ignored/x.tf", "aws_s3_bucket\n");
    ws.write(".gitignore", "ignored/\n");
    std::fs::write(ws.path("blob.bin"), b"aws_s3_bucket\x00\x00").unwrap();

    let run = run_tool(&ws, "grep", json!({"pattern": "aws_s3_\\w+"}), Permission::AllowOnce);
    assert_eq!(run.result, "Found 2 files\nmain.tf\nnotes.md\n");

    let args = json!({"pattern": "s3", "case_insensitive": true, "glob": "*.tf", "output_mode": "content"});
    let run = run_tool(&ws, "grep", args, Permission::AllowOnce);
    assert_eq!(
        run.result,
        "main.tf:1:resource \"aws_s3_bucket\" \"logs\" {\nvars.tf:2:# S3 buckets below\n"
    );

    let args = json!({"pattern": "bucket =", "output_mode": "content", "context": 1});
    let run = run_tool(&ws, "grep", args, Permission::AllowOnce);
    assert_eq!(
        run.result,
        "main.tf-1-resource \"aws_s3_bucket\" \"logs\" {\nmain.tf:2:  bucket = \"logs\"\nmain.tf-3-}\n"
    );

    let run = run_tool(
        &ws,
        "grep",
        json!({"pattern": "s", "output_mode": "count"}),
        Permission::AllowOnce,
    );
    assert!(run.result.starts_with("4 matching lines in 3 files\n"), "{}", run.result);
    assert!(run.result.contains("vars.tf:1\n"));

    let args = json!({"pattern": "e", "output_mode": "content", "max_results": 2});
    let run = run_tool(&ws, "grep", args, Permission::AllowOnce);
    assert!(run.result.contains("[showing 2 of 6 results"), "{}", run.result);

    let run = run_tool(&ws, "grep", json!({"pattern": "(unclosed"}), Permission::AllowOnce);
    assert_eq!(run.status, "failed");
    assert!(run.result.starts_with("invalid regex"), "{}", run.result);
    let run = run_tool(&ws, "grep", json!({"pattern": "zzz_none"}), Permission::AllowOnce);
    assert!(run.result.starts_with("No matches found"), "{}", run.result);
}

#[test]
fn reads_outside_the_project_or_of_secrets_ask_every_time() {
    let ws = Workspace::new("read-paths");
    std::fs::write(ws.root().join("outside.txt"), "outside\n").unwrap();
    ws.write(".env", "TOKEN=abc\n");
    ws.write("ok.tf", "fine\n");
    std::os::unix::fs::symlink(ws.root().join("outside.txt"), ws.path("link.txt")).unwrap();
    let cases = [
        ("read_file", json!({"path": "../outside.txt"})),
        ("read_file", json!({"path": ws.root().join("outside.txt")})),
        ("read_file", json!({"path": "link.txt"})),
        ("read_file", json!({"path": "sub/../../outside.txt"})),
        ("read_file", json!({"path": ".env"})),
        ("list_files", json!({"path": ".."})),
        ("grep", json!({"pattern": "outside", "path": ".."})),
        ("glob", json!({"pattern": "../*.txt"})),
        ("glob", json!({"pattern": " \n../*.txt"})),
        ("glob", json!({"pattern": "*", "path": ws.root()})),
    ];
    for (tool, args) in cases {
        let run = run_tool(&ws, tool, args.clone(), Permission::RejectOnce);
        assert_eq!(run.asked.len(), 1, "{tool} {args} must ask");
        let options: Vec<&str> = run.asked[0]["params"]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["optionId"].as_str().unwrap())
            .collect();
        assert_eq!(options, ["allow_once", "reject_once"], "{tool} {args}: never 'always'");
        assert_eq!(run.result, "Permission denied.", "{tool} {args}");
    }
    let run = run_tool(&ws, "read_file", json!({"path": "link.txt"}), Permission::AllowOnce);
    assert!(run.result.contains("outside"), "allowed once, it runs");
    let title = run.asked[0]["params"]["toolCall"]["title"].as_str().unwrap();
    assert!(title.contains("outside the project"), "{title}");
    let run = run_tool(&ws, "read_file", json!({"path": "./sub/../ok.tf"}), Permission::RejectOnce);
    assert!(run.asked.is_empty() && run.result.contains("fine"));
}

#[test]
fn edit_file_reports_a_diff_and_ambiguous_matches() {
    let ws = Workspace::new("edit-file");
    ws.write("main.tf", "a = 1\nb = 1\n");
    let args = json!({"path": "main.tf", "old_string": "= 1", "new_string": "= 2"});
    let run = run_tool(&ws, "edit_file", args.clone(), Permission::AllowOnce);
    assert_eq!(run.status, "failed");
    assert!(run.result.contains("matches 2 places"), "{}", run.result);
    assert_eq!(ws.read("main.tf"), "a = 1\nb = 1\n", "nothing changed");

    let mut all = args;
    all["replace_all"] = json!(true);
    let run = run_tool(&ws, "edit_file", all, Permission::AllowOnce);
    assert_eq!(ws.read("main.tf"), "a = 2\nb = 2\n");
    let done = updates_of(&run.msgs, "tool_call_update");
    let diff = done
        .iter()
        .flat_map(|u| u["content"].as_array().cloned().unwrap_or_default())
        .find(|c| c["type"] == "diff")
        .expect("a diff");
    assert_eq!(diff["path"], ws.path("main.tf").display().to_string());
    assert_eq!(diff["oldText"], "a = 1\nb = 1\n");
    assert_eq!(diff["newText"], "a = 2\nb = 2\n");

    let args = json!({"path": "main.tf", "old_string": "zzz", "new_string": "y"});
    let run = run_tool(&ws, "edit_file", args, Permission::AllowOnce);
    assert!(run.result.contains("not found"), "{}", run.result);
}
