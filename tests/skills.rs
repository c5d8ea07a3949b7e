//! Agent Skills, black-box: the catalog in the system prompt (capped), the `skill` tool,
//! a loaded skill's folder readable without a question, the approval of a project's skills
//! (and again when they change), `/name` commands, `allowed-tools` narrowing, skills kept
//! through compaction, the bundled skills, and `iac-code skills check`.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, Permission};
use crate::support::command::iac_code;
use crate::support::fake_llm::{FakeLlm, Reply, text_reply, tool_reply};
use crate::support::workspace::Workspace;

/// Writes a skill folder `dir/name` with this front matter and body.
fn skill(dir: &Path, name: &str, front: &str, body: &str) {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("SKILL.md"), format!("---\nname: {name}\n{front}\n---\n{body}\n"))
        .unwrap();
}

fn user_skills(ws: &Workspace) -> std::path::PathBuf {
    ws.root().join(".agents/skills")
}

fn server(ws: &Workspace, script: Vec<Reply>, env: &[(&str, &str)]) -> (FakeLlm, AcpProcess) {
    let llm = FakeLlm::start(script);
    let mut acp = AcpProcess::spawn_with_llm(ws, &llm, env);
    acp.initialize();
    (llm, acp)
}

fn system(llm: &FakeLlm, request: usize) -> String {
    llm.requests()[request].body["messages"][0]["content"].as_str().unwrap().to_string()
}

/// The tool results the model was sent in `request`, in order.
fn tool_results(llm: &FakeLlm, request: usize) -> Vec<String> {
    let messages = llm.requests()[request].body["messages"].as_array().unwrap().clone();
    messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn asked(msgs: &[Value]) -> Vec<&Value> {
    msgs.iter().filter(|m| m["method"] == "session/request_permission").collect()
}

#[test]
fn the_catalog_is_in_the_system_prompt_and_capped() {
    let ws = Workspace::new("skills-catalog");
    for i in 0..60 {
        let description = format!("Skill number {i}: {}", "describes a task in detail ".repeat(5));
        skill(
            &user_skills(&ws),
            &format!("team-{i:02}"),
            &format!("description: {description}"),
            "b",
        );
    }
    // 2 % of 100 000 tokens is 2 000 tokens, 8 000 characters: about 50 of the 60 fit.
    let (llm, mut acp) =
        server(&ws, vec![text_reply("ok")], &[("IAC_CODE_CONTEXT_WINDOW", "100000")]);
    let id = acp.new_session(&ws.project());
    acp.prompt(&id, "hello");
    let prompt = system(&llm, 0);
    let at = prompt.find("\n# Skills\n").expect("a skills section");
    let section = &prompt[at..];
    assert!(section.len() <= 8_000, "{} characters", section.len());
    assert!(section.contains("- team-00: Skill number 0"), "{section}");
    let listed = section.lines().filter(|l| l.starts_with("- ")).count();
    assert!((30..66).contains(&listed), "{listed} listed");
    let omitted =
        section.lines().find(|l| l.starts_with("Not listed for room")).expect("omitted named");
    // Every skill is either listed or named as omitted (bundled ones last).
    for name in ["team-59", "terraform-plan-review", "ansible-check"] {
        assert!(
            section.contains(&format!("- {name}:")) || omitted.contains(name),
            "{name}: {section}"
        );
    }
    let commands: Vec<&str> = acp.commands.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert!(commands.contains(&"team-07") && commands.contains(&"helm-chart"), "{commands:?}");
}

#[test]
fn the_skill_tool_returns_the_body_once_and_its_folder_is_readable_while_loaded() {
    let ws = Workspace::new("skills-tool");
    let dir = user_skills(&ws);
    skill(
        &dir,
        "tf-review",
        "description: Review Terraform changes.",
        "Step 1: run terraform validate.",
    );
    std::fs::create_dir_all(dir.join("tf-review/references")).unwrap();
    let notes = dir.join("tf-review/references/notes.md");
    std::fs::write(&notes, "Always check prevent_destroy.").unwrap();
    let read = json!({"path": notes.display().to_string()});
    let (llm, mut acp) = server(
        &ws,
        vec![
            tool_reply("c1", "skill", json!({"name": "tf-review", "arguments": "envs/prod"})),
            tool_reply("c2", "skill", json!({"name": "tf-review"})),
            tool_reply("c3", "read_file", read.clone()),
            text_reply("done"),
            tool_reply("c4", "read_file", read),
            text_reply("done again"),
        ],
        &[],
    );
    acp.set_permission(Permission::RejectOnce);
    let id = acp.new_session(&ws.project());
    let (msgs, _) = acp.prompt(&id, "review my terraform");
    assert!(
        asked(&msgs).is_empty(),
        "loading and reading its folder ask nothing: {:?}",
        asked(&msgs)
    );
    let results = tool_results(&llm, 3);
    assert!(results[0].starts_with("<skill_content name=\"tf-review\" dir=\""), "{}", results[0]);
    assert!(results[0].contains("Step 1: run terraform validate."), "{}", results[0]);
    assert!(
        results[0].contains("Arguments: envs/prod") && results[0].contains("- references/notes.md")
    );
    assert!(results[1].contains("already loaded"), "{}", results[1]);
    assert!(results[2].contains("Always check prevent_destroy."), "{}", results[2]);
    // Next turn the skill is not loaded: its folder is outside the project again.
    let (msgs, _) = acp.prompt(&id, "read it again");
    assert_eq!(asked(&msgs).len(), 1, "outside the project: asked");
    let results = tool_results(&llm, 5);
    assert!(results.last().unwrap().contains("Permission denied"), "{results:?}");
}

#[test]
fn a_project_skill_is_used_only_after_approval_and_asked_again_when_changed() {
    let ws = Workspace::new("skills-approval");
    let dir = ws.path(".agents/skills");
    skill(
        &dir,
        "team-deploy",
        "description: Deploy the team's stacks.",
        "Run scripts/check.sh first.",
    );
    ws.write(".agents/skills/team-deploy/scripts/check.sh", "terraform validate\n");
    let replies = (0..6).map(|i| text_reply(&format!("answer {i}"))).collect();
    let (llm, mut acp) = server(&ws, replies, &[]);
    acp.set_permission(Permission::RejectOnce);
    let id = acp.new_session(&ws.project());
    let (msgs, _) = acp.prompt(&id, "/team-deploy now");
    let questions = asked(&msgs);
    assert_eq!(questions.len(), 1);
    let title = questions[0]["params"]["toolCall"]["title"].as_str().unwrap();
    assert!(title.contains("Use this project's skills (team-deploy)"), "{title}");
    assert!(!system(&llm, 0).contains("team-deploy"), "declined: not in the catalog");
    let prompt = llm.requests()[0].body["messages"][1]["content"].as_str().unwrap().to_string();
    assert_eq!(prompt, "/team-deploy now", "declined: not a command");
    let (msgs, _) = acp.prompt(&id, "again");
    assert!(asked(&msgs).is_empty(), "the answer holds for the session");
    // Another session, approved: used, and remembered.
    acp.set_permission(Permission::AllowAlways);
    let id = acp.new_session(&ws.project());
    let (msgs, _) = acp.prompt(&id, "hello");
    assert_eq!(asked(&msgs).len(), 1);
    assert!(system(&llm, 2).contains("- team-deploy: Deploy the team's stacks."));
    let update = msgs
        .iter()
        .find(|m| m["params"]["update"]["sessionUpdate"] == "available_commands_update")
        .expect("the client hears of the new commands");
    let names = update["params"]["update"]["availableCommands"].to_string();
    assert!(names.contains("\"team-deploy\"") && names.contains("\"compact\""), "{names}");
    let id = acp.new_session(&ws.project());
    let names: Vec<&str> = acp.commands.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"team-deploy"), "approved: announced: {names:?}");
    let (msgs, _) = acp.prompt(&id, "hello");
    assert!(asked(&msgs).is_empty(), "approved before: not asked");
    assert!(system(&llm, 3).contains("- team-deploy:"));
    // A script changes: asked again, naming it.
    ws.write(".agents/skills/team-deploy/scripts/check.sh", "terraform apply -auto-approve\n");
    acp.set_permission(Permission::RejectOnce);
    let id = acp.new_session(&ws.project());
    let (msgs, _) = acp.prompt(&id, "hello");
    let questions = asked(&msgs);
    assert_eq!(questions.len(), 1);
    let title = questions[0]["params"]["toolCall"]["title"].as_str().unwrap();
    assert!(title.contains("Changed since") && title.contains("check.sh"), "{title}");
    assert!(!system(&llm, 4).contains("team-deploy"));
}

#[test]
fn a_slash_command_expands_the_skill_into_the_prompt() {
    let ws = Workspace::new("skills-command");
    skill(
        &user_skills(&ws),
        "tf-fmt",
        "description: Format Terraform code.",
        "Run terraform fmt on $ARGUMENTS.",
    );
    let (llm, mut acp) = server(&ws, vec![text_reply("formatted")], &[]);
    let id = acp.new_session(&ws.project());
    let command = acp.commands.iter().find(|c| c["name"] == "tf-fmt").expect("announced").clone();
    assert_eq!(command["description"], "Format Terraform code.");
    let (_, response) = acp.prompt(&id, "/tf-fmt modules/vpc");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let prompt = llm.requests()[0].body["messages"][1]["content"].as_str().unwrap().to_string();
    assert!(prompt.starts_with("<skill_content name=\"tf-fmt\""), "{prompt}");
    assert!(prompt.contains("Run terraform fmt on modules/vpc."), "{prompt}");
}

#[test]
fn allowed_tools_narrow_what_runs_while_the_skill_is_active() {
    let ws = Workspace::new("skills-narrow");
    skill(
        &user_skills(&ws),
        "read-only",
        "description: Look only.\nallowed-tools: Read Grep",
        "Only read.",
    );
    ws.write("main.tf", "resource \"terraform_data\" \"x\" {}\n");
    let write = json!({"path": "new.tf", "content": "# new\n"});
    let (llm, mut acp) = server(
        &ws,
        vec![
            tool_reply("c1", "skill", json!({"name": "read-only"})),
            tool_reply("c2", "write_file", write.clone()),
            tool_reply("c3", "read_file", json!({"path": "main.tf"})),
            text_reply("looked"),
            tool_reply("c4", "write_file", write),
            text_reply("wrote"),
        ],
        &[],
    );
    let id = acp.new_session(&ws.project());
    let response =
        acp.call("session/set_mode", json!({"sessionId": id, "modeId": "bypass_permissions"}));
    assert!(response.get("error").is_none(), "{response}");
    acp.prompt(&id, "look at main.tf");
    let results = tool_results(&llm, 3);
    assert!(
        results[1].contains("the skill 'read-only' is active") && results[1].contains("Read Grep"),
        "{}",
        results[1]
    );
    assert!(!ws.exists("new.tf"), "refused: nothing written (even in bypass mode)");
    assert!(results[2].contains("terraform_data"), "a covered call runs: {}", results[2]);
    acp.prompt(&id, "now write it");
    assert!(ws.exists("new.tf"), "the next turn has no active skill");
}

#[test]
fn a_loaded_skill_survives_compaction() {
    let ws = Workspace::new("skills-compact");
    skill(
        &user_skills(&ws),
        "keep-me",
        "description: Stays loaded.",
        "KEEP-ME-STEPS: plan, review.",
    );
    ws.write("big.txt", &"terraform state line\n".repeat(400));
    let (llm, mut acp) = server(
        &ws,
        vec![
            tool_reply("c1", "skill", json!({"name": "keep-me"})),
            tool_reply("c2", "read_file", json!({"path": "big.txt"})),
            text_reply("SUMMARY: loaded a skill, read big.txt"),
            text_reply("done"),
        ],
        &[("IAC_CODE_CONTEXT_WINDOW", "4096"), ("IAC_CODE_COMPACT_THRESHOLD", "50")],
    );
    let id = acp.new_session(&ws.project());
    let (_, response) = acp.prompt(&id, "use keep-me then read big.txt");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{}", acp.context());
    let requests = llm.requests();
    let summary_request = requests
        .iter()
        .position(|r| {
            r.body["messages"][0]["content"].as_str().is_some_and(|s| s.starts_with("You compact"))
        })
        .expect("compacted");
    let after = &requests[summary_request + 1].body["messages"];
    let summary = after[1]["content"].as_str().unwrap();
    assert!(summary.contains("SUMMARY: loaded a skill"), "{summary}");
    assert!(
        summary.contains("<skill_content name=\"keep-me\"") && summary.contains("KEEP-ME-STEPS"),
        "{summary}"
    );
}

#[test]
fn every_bundled_skill_parses_and_names_only_tools_we_have() {
    let ws = Workspace::new("skills-bundled");
    let out = iac_code(&ws).args(["skills", "list"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let listing = String::from_utf8_lossy(&out.stdout).to_string();
    let bundled: Vec<&str> = listing
        .lines()
        .filter(|l| l.split('\t').nth(1) == Some("bundled"))
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(bundled.len(), 6, "{listing}");
    assert!(!listing.contains("problem:"), "{listing}");
    // Names of other agents' tools that a skill might mention but we do not have.
    let foreign = [
        "MultiEdit",
        "TodoWrite",
        "WebSearch",
        "NotebookEdit",
        "Task",
        "str_replace_editor",
        "run_terminal_cmd",
        "list_dir",
    ];
    let ours = iac_code::rules::BUILTIN_TOOLS;
    let tool_word = regex::Regex::new(r"`([A-Za-z_]+)` tool|tool `([A-Za-z_]+)`").unwrap();
    for name in bundled {
        let out = iac_code(&ws).args(["skills", "show", name]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(text.starts_with(&format!("<skill_content name=\"{name}\"")), "{text}");
        for word in foreign {
            assert!(
                !text.contains(&format!("`{word}`")),
                "{name} names `{word}`, a tool we do not have"
            );
        }
        for found in tool_word.captures_iter(&text) {
            let tool = found.get(1).or_else(|| found.get(2)).unwrap().as_str();
            // A program (`the \`tflint\` tool`) is not a tool of ours; tool names have an
            // underscore (ours) or a capital (Claude Code's, mapped by the rules).
            if !tool.contains('_') && !tool.starts_with(char::is_uppercase) {
                continue;
            }
            let known = ours.contains(&tool)
                || iac_code::rules::Rule::parse(
                    tool,
                    iac_code::rules::Verdict::Allow,
                    iac_code::rules::Source::Flag("t"),
                )
                .is_ok();
            assert!(known, "{name} names the tool `{tool}`, which we do not have");
        }
    }
}

#[test]
fn skills_check_validates_a_folder_with_exit_codes() {
    let ws = Workspace::new("skills-check");
    let dir = ws.path("skills");
    skill(
        &dir,
        "good-one",
        "description: Does a thing.\nallowed-tools: Bash(terraform plan:*) Read",
        "Steps.",
    );
    skill(&dir, "bad-one", "allowed-tools: Frobnicate", "Steps.");
    let run = |args: &[&str]| iac_code(&ws).args(args).output().unwrap();
    let good = run(&["skills", "check", &dir.join("good-one").display().to_string()]);
    assert_eq!(good.status.code(), Some(0), "{}", String::from_utf8_lossy(&good.stdout));
    let mut here = iac_code(&ws);
    let here = here.args(["skills", "check", "."]).current_dir(dir.join("good-one"));
    let here = here.output().unwrap();
    assert_eq!(here.status.code(), Some(0), "`.` is the folder it names");
    let bad = run(&["skills", "check", &dir.join("bad-one").display().to_string()]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stdout).contains("no description"));
    let missing = run(&["skills", "check", &ws.path("nowhere").display().to_string()]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        run(&["skills", "check"]).status.code(),
        Some(2),
        "a missing argument is a usage error"
    );
    assert_eq!(run(&["skills", "frob"]).status.code(), Some(2));
    // `doctor` reports the broken user skill once found.
    skill(&user_skills(&ws), "no-desc", "license: MIT", "x");
    let shown = String::from_utf8_lossy(&run(&["config", "show"]).stdout).to_string();
    assert!(shown.lines().any(|l| l == "skills.helm-chart\tbundled"), "{shown}");
    let doctor = String::from_utf8_lossy(&run(&["doctor"]).stdout).to_string();
    assert!(doctor.contains("skills: 6 bundled, 0 of the user"), "{doctor}");
    assert!(doctor.contains("no-desc") && doctor.contains("no description"), "{doctor}");
}

#[test]
fn a_skill_kept_under_iac_code_reads_its_files_unasked_but_never_a_secret() {
    let ws = Workspace::new("skills-dotdir");
    // `~/.iac-code/skills/`: below a directory whose name alone makes a path sensitive.
    let dir = ws.root().join(".iac-code/skills");
    skill(&dir, "tf-notes", "description: Team notes for Terraform.", "Read the notes.");
    std::fs::create_dir_all(dir.join("tf-notes/references")).unwrap();
    let notes = dir.join("tf-notes/references/notes.md");
    std::fs::write(&notes, "Tag every resource with owner.").unwrap();
    let secret = dir.join("tf-notes/.env");
    std::fs::write(&secret, "TOKEN=x").unwrap();
    let (llm, mut acp) = server(
        &ws,
        vec![
            tool_reply("c1", "skill", json!({"name": "tf-notes"})),
            tool_reply("c2", "read_file", json!({"path": notes.display().to_string()})),
            tool_reply("c3", "read_file", json!({"path": secret.display().to_string()})),
            text_reply("done"),
        ],
        &[],
    );
    acp.set_permission(Permission::RejectOnce);
    let id = acp.new_session(&ws.project());
    let (msgs, _) = acp.prompt(&id, "use the team notes");
    let questions = asked(&msgs);
    assert_eq!(questions.len(), 1, "only the .env asks: {questions:?}");
    let title = questions[0]["params"]["toolCall"]["title"].as_str().unwrap_or_default();
    assert!(title.contains(".env"), "{title}");
    let results = tool_results(&llm, 3);
    assert!(results[1].contains("Tag every resource with owner."), "{results:?}");
    assert!(results[2].contains("Permission denied"), "{results:?}");
}
