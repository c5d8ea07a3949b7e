//! The terminal client (issue 35) through a pseudo-terminal, its screen read with `vt100`:
//! streaming Markdown, a diff, a write question, a destroy question with a real terraform
//! plan (Enter alone leaves the state as it was), interrupts by Esc and Ctrl+C, the exits
//! and the resume hint, multi-line input, history across restarts, completion, the mode
//! cycle, resume, resize, NO_COLOR, SIGTERM and SIGINT, the status line, the plan and a
//! coloured diff under TERM=screen, and the fallback without a terminal.

use std::process::{Command, Stdio};

use serde_json::json;

use crate::infra::{applied, bash, state, terraform};
use crate::support::command::{TestCommand, iac_code};
use crate::support::fake_llm::{Event, FakeLlm, Reply, open_gate, text_reply, tool_reply};
use crate::support::screen::Screen;
use crate::support::workspace::Workspace;

/// The status line once the session exists.
const READY: &str = "mode: Default";
const ESC: &str = "\x1b";
const CTRL_C: &str = "\x03";
const CTRL_D: &str = "\x04";

fn client(ws: &Workspace, llm: &FakeLlm, args: &[&str]) -> Command {
    let mut command = iac_code(ws);
    command.fake_llm(llm).env("TERM", "xterm-256color").args(args);
    command
}

fn start(ws: &Workspace, llm: &FakeLlm, args: &[&str]) -> Screen {
    let screen = Screen::spawn(client(ws, llm, args), 24, 80);
    screen.expect(READY);
    screen
}

/// The session id of the resume hint.
fn resume_id(text: &str) -> String {
    let at = text.find("iac-code --resume ").expect("the resume hint") + "iac-code --resume ".len();
    text[at..].split_whitespace().next().expect("an id").to_string()
}

/// The text of the last user message the model got.
fn last_user_text(llm: &FakeLlm) -> String {
    let bodies = llm.bodies();
    let body = bodies.last().expect("a request");
    let messages = body["messages"].as_array().expect("messages");
    let user = messages.iter().rev().find(|m| m["role"] == "user").expect("a user message");
    match &user["content"] {
        serde_json::Value::String(s) => s.clone(),
        other => {
            other.as_array().into_iter().flatten().filter_map(|p| p["text"].as_str()).collect()
        }
    }
}

#[test]
fn without_a_terminal_bare_iac_code_says_how_to_use_p_and_exits_2() {
    let ws = Workspace::new("tui-pipe");
    for args in [&[][..], &["chat"][..], &["--continue"][..]] {
        let out = iac_code(&ws).args(args).stdin(Stdio::null()).output().expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("iac-code -p"), "{err}");
        assert!(out.stdout.is_empty(), "nothing on stdout");
        assert!(!out.stderr.contains(&0x1b), "no escape codes into a pipe: {err}");
    }
}

#[test]
fn a_reply_streams_as_markdown_and_ctrl_d_exits_with_the_resume_hint() {
    let ws = Workspace::new("tui-markdown");
    let reply = "# Findings\n\nThe bucket is **public** and `acl` is wrong.\n\n- first\n- second\n\n\
                 ```hcl\nresource \"aws_s3_bucket\" \"b\" {}\n```\n\n| name | action |\n|---|---|\n| b | update |\n\nDone.";
    let llm = FakeLlm::start(vec![text_reply(reply)]);
    let mut screen = start(&ws, &llm, &[]);
    screen.send("why is the bucket public?\r");
    let text = screen.expect("Done.");
    for shown in [
        "› why is the bucket public?",
        "Findings",
        "The bucket is public and acl is wrong.",
        "• first",
        "• second",
        "  resource \"aws_s3_bucket\" \"b\" {}",
        " name │ action",
        " b    │ update",
    ] {
        assert!(text.contains(shown), "{shown:?} not in:\n{text}");
    }
    assert!(
        !text.contains("**") && !text.contains("| name"),
        "Markdown is drawn, not shown raw:\n{text}"
    );
    let raw = String::from_utf8_lossy(&screen.raw()).into_owned();
    assert!(raw.contains("\x1b[1m") || raw.contains(";1m"), "bold is drawn");
    assert!(raw.contains("\x1b[38;5;4;49mresource"), "keywords are coloured (blue)");
    screen.send(CTRL_D);
    let (status, text) = screen.wait();
    assert_eq!(status.code(), Some(0), "{text}");
    let id = resume_id(&text);
    assert_eq!(id.len(), 36, "a session id: {id}");
}

/// The visible screen, each row without its trailing blanks, blank rows at the end dropped.
fn snapshot(screen: &str) -> String {
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let end = rows.iter().rposition(|r| !r.is_empty()).map_or(0, |i| i + 1);
    rows[..end].join("\n")
}

#[test]
fn a_markdown_reply_draws_this_screen_at_80_by_24() {
    let ws = Workspace::new("tui-snapshot");
    let reply = "## Plan\n\n1. **Tag** the bucket\n2. Run `terraform plan`\n\n\
                 | resource | action |\n|---|---|\n| aws_s3_bucket.logs | update |\n\n\
                 ```diff\n- acl = \"public-read\"\n+ acl = \"private\"\n```\n";
    let llm = FakeLlm::start(vec![text_reply(reply)]);
    let mut command = client(&ws, &llm, &[]);
    command.env("IAC_CODE_SANDBOX", "off");
    let mut screen = Screen::spawn(command, 24, 80);
    screen.expect(READY);
    screen.send("make the logs bucket private\r");
    // The idle status line drawn (a frame caught mid-draw has none).
    let shown = screen.wait_screen("the reply drawn and the turn ended", |t| {
        t.contains("+ acl") && t.contains("sandbox off · context") && !t.contains("working")
    });
    // Fences stay, dimmed, so that what is copied from the scrollback is Markdown again.
    let expected = "\
› make the logs bucket private

Plan

1. Tag the bucket
2. Run terraform plan

 resource           │ action
 ───────────────────┼───────
 aws_s3_bucket.logs │ update

```diff
  - acl = \"public-read\"
  + acl = \"private\"
```
────────────────────────────────────────────────────────────────────────────────
›
fake-model · mode: Default · sandbox off · context 0% (0k/128k)";
    let drawn = snapshot(&shown);
    let from = drawn.find("› make").expect("the prompt on the screen");
    assert_eq!(&drawn[from..], expected, "the screen:\n{shown}");
}

#[test]
fn a_write_question_allows_on_y_and_the_edit_shows_as_a_diff() {
    let ws = Workspace::new("tui-write");
    ws.write("main.tf", "a = 1\nb = 2\n");
    let edit =
        tool_reply("w1", "write_file", json!({"path": "main.tf", "content": "a = 1\nb = 3\n"}));
    let llm = FakeLlm::start(vec![edit, text_reply("written")]);
    let mut screen = start(&ws, &llm, &[]);
    screen.send("change b\r");
    let text = screen.expect("[y] Allow");
    assert!(text.contains("Permission needed"), "{text}");
    assert!(!text.contains("destroys or replaces"), "{text}");
    screen.send("y");
    let text = screen.expect("written");
    assert_eq!(ws.read("main.tf"), "a = 1\nb = 3\n");
    assert!(text.contains("-b = 2") && text.contains("+b = 3"), "a diff:\n{text}");
}

#[test]
fn a_destroy_question_stands_out_and_enter_alone_rejects_it() {
    let Some(_) = terraform() else { return };
    let ws = applied("tui-destroy");
    let llm = FakeLlm::start(vec![
        bash("d1", "terraform destroy -auto-approve"),
        text_reply("left alone"),
    ]);
    let mut screen = Screen::spawn(client(&ws, &llm, &[]), 24, 80);
    screen.expect(READY);
    screen.send("tear it down\r");
    let text = screen.expect("Enter: Reject");
    assert!(text.contains("destroys or replaces infrastructure"), "{text}");
    assert!(text.contains(" terraform_data.c │ delete"), "the plan summary as a table:\n{text}");
    assert!(!text.to_lowercase().contains("always"), "no always for a destroy:\n{text}");
    // A `y` typed ahead only asks again; the next key, not a `y`, takes it back.
    screen.send("y");
    screen.expect("Press y again or Enter to destroy");
    screen.send("e");
    screen.wait_screen("back on Reject", |t| t.contains("Enter: Reject") && !t.contains("again"));
    screen.send("\r");
    screen.expect("left alone");
    assert_eq!(state(&ws).len(), 3, "neither y nor Enter alone destroyed anything");
}

#[test]
fn esc_interrupts_a_streaming_turn() {
    let ws = Workspace::new("tui-esc");
    let held = Reply::Stream(vec![
        Event::Text("still thinking".into()),
        Event::Gate("tui-esc"),
        Event::Done,
    ]);
    let llm = FakeLlm::start(vec![held, text_reply("next answer")]);
    let mut screen = start(&ws, &llm, &[]);
    screen.send("go\r");
    screen.expect("still thinking");
    screen.send(ESC);
    screen.expect("Interrupted");
    open_gate("tui-esc");
    screen.send("again\r");
    screen.expect("next answer");
}

#[test]
fn ctrl_c_interrupts_clears_and_twice_exits_with_the_resume_hint() {
    let ws = Workspace::new("tui-ctrl-c");
    let held = Reply::Stream(vec![
        Event::Text("working on it".into()),
        Event::Gate("tui-ctrl-c"),
        Event::Done,
    ]);
    let llm = FakeLlm::start(vec![held]);
    let mut screen = start(&ws, &llm, &[]);
    screen.send("go\r");
    screen.expect("working on it");
    screen.send(CTRL_C);
    screen.expect("Interrupted");
    open_gate("tui-ctrl-c");
    screen.send("draft text");
    screen.expect("› draft text");
    screen.send(CTRL_C);
    screen.wait_until("cleared the input", |t| !t.contains("› draft text"));
    screen.send(CTRL_C);
    screen.expect("Press Ctrl+C again to exit");
    assert!(screen.raw_mode(), "still running");
    screen.send(CTRL_C);
    let (status, text) = screen.wait();
    assert_eq!(status.code(), Some(0));
    resume_id(&text);
}

#[test]
fn lines_are_added_by_a_backslash_alt_enter_and_a_paste() {
    let ws = Workspace::new("tui-multiline");
    let llm = FakeLlm::start(vec![text_reply("got three lines")]);
    let mut screen = start(&ws, &llm, &[]);
    screen.send("line one\\\r");
    screen.send("line two\x1b\r");
    screen.send("line three");
    let text = screen.expect("line three");
    assert!(text.contains("› line one") && text.contains("  line two"), "{text}");
    // A bracketed paste is text: its newline adds a line, it sends nothing.
    screen.send("\x1b[200~ pasted\nline four\x1b[201~");
    let text = screen.expect("line four");
    assert!(text.contains("line three pasted"), "{text}");
    screen.send("\r");
    screen.expect("got three lines");
    assert_eq!(last_user_text(&llm), "line one\nline two\nline three pasted\nline four");
}

#[test]
fn history_survives_a_restart_and_ctrl_r_finds_it() {
    let ws = Workspace::new("tui-history");
    let llm = FakeLlm::start(vec![text_reply("one"), text_reply("two")]);
    let mut screen = start(&ws, &llm, &[]);
    screen.send("plan the network\r");
    screen.expect("one");
    screen.send("check the buckets\r");
    screen.expect("two");
    screen.send(CTRL_D);
    screen.wait();
    let mut screen = start(&ws, &llm, &[]);
    screen.send("\x1b[A");
    screen.expect("› check the buckets");
    screen.send("\x1b[A");
    screen.expect("› plan the network");
    screen.send(CTRL_C);
    screen.send("\x12netw");
    screen.expect("(search) 'netw': plan the network");
    // Ctrl+G in a search ends it and the keyboard still answers.
    screen.send("\x07");
    screen.send("draft");
    screen.wait_screen("the draft typed", |t| t.contains("› draft") && !t.contains("(search)"));
    // Ctrl+C in a search leaves the draft as it was.
    screen.send("\x12check");
    screen.wait_screen("a search", |t| t.contains("(search) 'check'"));
    screen.send(CTRL_C);
    screen.wait_screen("the draft kept", |t| t.contains("› draft") && !t.contains("(search)"));
}

#[test]
fn slash_commands_complete_from_the_agents_list() {
    let ws = Workspace::new("tui-complete");
    let llm = FakeLlm::start(vec![]);
    let mut screen = start(&ws, &llm, &[]);
    screen.send("/comp");
    screen.expect("/compact  Summarise");
    screen.send("\t");
    screen.wait_until("completed /compact", |t| t.contains("› /compact"));
}

#[test]
fn shift_tab_cycles_the_modes_and_reaches_bypass_only_when_started_in_it() {
    let ws = Workspace::new("tui-modes");
    let llm = FakeLlm::start(vec![]);
    let mut screen = start(&ws, &llm, &[]);
    // Bypass is not in the cycle: the session did not start with it.
    for next in ["Accept edits", "Plan (read-only)", "Default", "Accept edits"] {
        screen.send("\x1b[Z");
        screen.expect(&format!("mode: {next} ·"));
    }
    screen.send(CTRL_D);
    screen.wait();
    let mut screen =
        Screen::spawn(client(&ws, &llm, &["--permission-mode", "bypass_permissions"]), 24, 80);
    screen.expect("mode: Bypass permissions");
    // Started with it allowed, the cycle goes back to it.
    for next in ["Default", "Accept edits", "Plan (read-only)", "Bypass permissions"] {
        screen.send("\x1b[Z");
        screen.wait_screen(next, |t| t.contains(&format!("mode: {next}")));
    }
}

#[test]
fn the_status_line_the_plan_checklist_and_a_coloured_diff_under_screen() {
    let ws = Workspace::new("tui-status");
    ws.write("main.tf", "a = 1\nb = 2\n");
    let pricing = json!({"pricing": {"fake-model": {"input": 3.0, "output": 15.0}}});
    std::fs::write(ws.config().join("settings.json"), pricing.to_string()).unwrap();
    let plan = json!({"entries": [
        {"content": "change b", "status": "completed"},
        {"content": "run the plan", "status": "in_progress"},
        {"content": "tell the team"}]});
    let edit = json!({"path": "main.tf", "content": "a = 1\nb = 3\n"});
    let llm = FakeLlm::start(vec![
        tool_reply("p1", "update_plan", plan),
        tool_reply("w1", "write_file", edit),
        text_reply("all done"),
    ]);
    let mut command = client(&ws, &llm, &["--permission-mode", "accept_edits"]);
    // GNU screen's (and tmux's default) terminal type; the sandbox switched off says so.
    command.env("TERM", "screen-256color").env("IAC_CODE_SANDBOX", "off");
    let mut screen = Screen::spawn(command, 24, 80);
    screen.expect("mode: Accept edits");
    screen.send("change b and plan\r");
    let text = screen.expect("all done");
    for shown in ["☑ change b", "▶ run the plan", "☐ tell the team", "-b = 2", "+b = 3"] {
        assert!(text.contains(shown), "{shown:?} not in:\n{text}");
    }
    let status = screen.wait_screen("the status line after a turn", |t| {
        t.contains("sandbox off") && t.contains("context ") && t.contains("$0.0")
    });
    assert!(status.contains("fake-model"), "the model: {status}");
    let raw = String::from_utf8_lossy(&screen.raw()).into_owned();
    // ratatui writes a palette colour as 38;5;N (1 red, 2 green), so the terminal's own
    // theme, light or dark, decides the shade.
    assert!(raw.contains("\x1b[38;5;1;49m  -b = 2"), "removed lines red");
    assert!(raw.contains("\x1b[38;5;2;49m  +b = 3"), "added lines green");
}

#[test]
fn resume_and_continue_draw_the_earlier_conversation() {
    let ws = Workspace::new("tui-resume");
    let llm = FakeLlm::start(vec![text_reply("the bucket is noted")]);
    let mut screen = start(&ws, &llm, &[]);
    screen.send("remember the bucket\r");
    screen.expect("the bucket is noted");
    screen.send(CTRL_D);
    let (_, text) = screen.wait();
    let id = resume_id(&text);
    for args in [vec!["--resume", id.as_str()], vec!["--continue"]] {
        let mut screen = start(&ws, &llm, &args);
        let text = screen.expect("the bucket is noted");
        assert!(text.contains("› remember the bucket"), "{text}");
        screen.send(CTRL_D);
        let (_, text) = screen.wait();
        assert_eq!(resume_id(&text), id);
    }
}

#[test]
fn a_resize_redraws_the_input_and_the_status_line() {
    let ws = Workspace::new("tui-resize");
    let llm = FakeLlm::start(vec![text_reply("fits")]);
    let mut screen = start(&ws, &llm, &[]);
    screen.resize(20, 50);
    screen.wait_until("redrawn at 50 columns", |t| t.lines().any(|l| l == "─".repeat(50)));
    screen.send("after the resize");
    screen.expect("› after the resize");
    screen.send("\r");
    screen.expect("fits");
    screen.wait_until("the status line at 50 columns", |t| {
        t.lines().any(|l| l.starts_with("fake-model · mode: Default") && l.chars().count() <= 50)
    });
    screen.resize(30, 120);
    screen.wait_until("redrawn at 120 columns", |t| t.contains(&"─".repeat(120)));
    screen.send("x");
    screen.expect("› x");
}

#[test]
fn no_color_draws_no_colours() {
    let ws = Workspace::new("tui-no-color");
    let llm = FakeLlm::start(vec![text_reply("```hcl\nresource \"a\" \"b\" {}\n```\n**plain**")]);
    let mut command = client(&ws, &llm, &[]);
    command.env("NO_COLOR", "1");
    let mut screen = Screen::spawn(command, 24, 80);
    screen.expect(READY);
    screen.send("hi\r");
    screen.expect("plain");
    let raw = String::from_utf8_lossy(&screen.raw()).into_owned();
    for code in 30..=37 {
        assert!(
            !raw.contains(&format!("\x1b[{code}m")) && !raw.contains(&format!(";{code}m")),
            "colour {code}"
        );
    }
    assert!(!raw.contains("38;5;"), "no 256-colour codes");
}

#[test]
fn sigterm_and_sigint_leave_the_terminal_as_it_was() {
    let ws = Workspace::new("tui-sigterm");
    let llm = FakeLlm::start(vec![]);
    for (signal, number) in [("-TERM", 15), ("-INT", 2)] {
        let screen = start(&ws, &llm, &[]);
        assert!(screen.raw_mode(), "raw mode while running");
        let pid = screen.pid().to_string();
        let killed = Command::new("kill").args([signal, &pid]).status().expect("kill");
        assert!(killed.success());
        let (status, text, raw) = screen.wait_with_mode();
        assert!(!raw, "cooked mode after {signal}:\n{text}");
        assert_eq!(status.code(), Some(128 + number), "{text}");
    }
}

#[test]
fn a_message_typed_during_a_turn_is_queued_and_tab_steers_with_it() {
    let ws = Workspace::new("tui-steer");
    let held = Reply::Stream(vec![
        Event::Text("looking".into()),
        Event::Gate("tui-steer"),
        Event::Finish("stop"),
        Event::Done,
    ]);
    let llm = FakeLlm::start(vec![held, text_reply("switching to eu-west-1")]);
    let mut screen = start(&ws, &llm, &[]);
    screen.send("plan the vpc\r");
    screen.expect("looking");
    screen.send("use eu-west-1\r");
    screen.expect("queued: use eu-west-1");
    screen.send("\t");
    screen.wait_until("the queue sent", |t| {
        !t.contains("queued: use eu-west-1") && t.contains("› use eu-west-1")
    });
    open_gate("tui-steer");
    screen.expect("switching to eu-west-1");
    assert_eq!(last_user_text(&llm), "use eu-west-1", "the model got the steering message");
}

#[test]
fn an_ask_user_form_is_answered_field_by_field() {
    let ws = Workspace::new("tui-form");
    let form = crate::ask_user::bucket_form();
    let llm = FakeLlm::start(vec![tool_reply("q1", "ask_user", form), text_reply("bucket made")]);
    let mut screen = start(&ws, &llm, &[]);
    screen.send("make a bucket\r");
    screen.expect("The agent asks: Bucket details?");
    screen.expect("? bucket (string, required): its name");
    screen.send("\r");
    screen.expect("bucket is required");
    screen.send("logs\r");
    screen.expect("? replicas (integer)");
    screen.send("2\r");
    screen.expect("bucket made");
    let result = crate::tools::tool_result(&llm, 1);
    assert!(result.contains("logs") && result.contains('2'), "{result}");
}

#[test]
fn the_resume_picker_reopens_another_session_of_this_directory() {
    let ws = Workspace::new("tui-picker");
    let llm = FakeLlm::start(vec![text_reply("first answer"), text_reply("unused")]);
    let mut screen = start(&ws, &llm, &[]);
    screen.send("the first session\r");
    screen.expect("first answer");
    screen.send(CTRL_D);
    let (_, text) = screen.wait();
    let first = resume_id(&text);
    let mut screen = start(&ws, &llm, &[]);
    screen.send("/resume\r");
    screen.expect("Resume a session");
    screen.expect(&first);
    screen.send("\r");
    let text = screen.expect("first answer");
    assert!(text.contains("› the first session"), "{text}");
    screen.send(CTRL_D);
    let (_, text) = screen.wait();
    assert_eq!(resume_id(&text), first, "the hint names the session reopened:\n{text}");
}

#[test]
fn ctrl_g_edits_the_input_in_the_editor() {
    let ws = Workspace::new("tui-editor");
    let llm = FakeLlm::start(vec![text_reply("edited and sent")]);
    let mut command = client(&ws, &llm, &[]);
    command.env("EDITOR", "sh -c 'printf \"from the editor\" > \"$0\"'");
    let mut screen = Screen::spawn(command, 24, 80);
    screen.expect(READY);
    screen.send("draft");
    screen.expect("› draft");
    screen.send("\x07");
    screen.expect("› from the editor");
    screen.send("\r");
    screen.expect("edited and sent");
    assert_eq!(last_user_text(&llm), "from the editor");
}

#[test]
fn term_dumb_gets_line_mode_without_escape_codes() {
    let ws = Workspace::new("tui-dumb");
    ws.write("main.tf", "a = 1\n");
    let edit = tool_reply("w1", "write_file", json!({"path": "main.tf", "content": "a = 2\n"}));
    let llm = FakeLlm::start(vec![edit, text_reply("# Done\nchanged **a**")]);
    let mut command = client(&ws, &llm, &[]);
    command.env("TERM", "dumb");
    let mut screen = Screen::spawn(command, 24, 80);
    screen.expect("> ");
    screen.send("change a\r");
    screen.expect("[y] Allow once");
    screen.send("y\r");
    screen.expect("changed a");
    assert_eq!(ws.read("main.tf"), "a = 2\n");
    let raw = screen.raw();
    assert!(!raw.contains(&0x1b), "no escape codes: {}", String::from_utf8_lossy(&raw));
    screen.send(CTRL_D);
    let (status, text) = screen.wait();
    assert_eq!(status.code(), Some(0), "{text}");
    resume_id(&text);
}

#[test]
fn a_thought_folds_to_one_line_and_a_command_shows_as_a_card_with_its_output() {
    let ws = Workspace::new("tui-card");
    let thinking = Reply::Stream(vec![
        Event::Reasoning("the user wants\nthree lines".into()),
        Event::ToolCall {
            index: 0,
            id: "b1".into(),
            name: "bash".into(),
            args: json!({"command": "for i in 1 2 3; do echo line$i; done"}),
        },
        Event::Finish("tool_calls"),
        Event::Done,
    ]);
    let llm = FakeLlm::start(vec![thinking, text_reply("printed")]);
    let mut screen = start(&ws, &llm, &["--permission-mode", "bypass_permissions"]);
    screen.send("print three lines\r");
    let text = screen.expect("printed");
    assert!(text.contains("✻ Thinking: the user wants three lines"), "one line:\n{text}");
    assert!(text.contains("● Run "), "a card:\n{text}");
    assert!(text.contains("✓ done"), "its status:\n{text}");
    assert!(text.contains("│ line3"), "its output:\n{text}");
}
