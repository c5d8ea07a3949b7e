//! What a person does in the page, against the real server and the fake LLM: sign in and
//! see a reply stream, approve a write and see its diff, refuse a destroy shown with its
//! plan (real terraform), and model output that carries markup stays text.

use std::process::Command;

use serde_json::json;

use super::page::{
    PANEL, TOKEN, agent_texts, console_errors, new_session, prompt, server, sign_in, wait_idle,
};
use crate::browser::{Driver, WAIT};
use crate::support::fake_llm::{Event, FakeLlm, Reply, open_gate, text_reply, tool_reply};
use crate::support::skip::{Ci, program};
use crate::support::workspace::Workspace;

#[test]
fn sign_in_with_the_token_and_a_reply_streams_in_pieces() {
    let Some(driver) = Driver::start("sign_in_with_the_token_and_a_reply_streams_in_pieces") else {
        return;
    };
    let ws = Workspace::new("web-stream");
    // The reply stops halfway until the test has seen its first half on screen.
    let mut events: Vec<Event> = ["Hello **there**", ": the plan is ", "ready"]
        .iter()
        .map(|t| Event::Text(t.to_string()))
        .collect();
    events.push(Event::Gate("web-stream"));
    events.extend(
        [", with three changes", " and no destroys at all."].map(|t| Event::Text(t.into())),
    );
    events.extend([Event::Finish("stop"), Event::Done]);
    let llm = FakeLlm::start(vec![Reply::Stream(events)]);
    let server = server(&ws, &llm, &[]);
    let browser = driver.session();
    browser.goto(&format!("http://{}/", server.addr));
    browser.wait("#signin-box:not([hidden])", WAIT);
    browser.screenshot("sign-in");
    sign_in(&browser, &server.addr);
    assert_eq!(browser.script("return sessionStorage.getItem('iac-code-token')", &[]), TOKEN);
    assert_eq!(browser.script("return document.cookie", &[]), "", "no cookie is set");
    new_session(&browser);
    prompt(&browser, "is the plan ready?");
    let half = browser.wait_text(&format!("{PANEL} .msg.agent"), "the plan is ready", WAIT);
    assert!(!half.text().contains("three changes"), "the first half shows on its own");
    browser.screenshot("streaming");
    open_gate("web-stream");
    browser.wait_text(&format!("{PANEL} .msg.agent"), "no destroys at all", WAIT);
    wait_idle(&browser);
    assert_eq!(
        agent_texts(&browser),
        ["Hello there: the plan is ready, with three changes and no destroys at all."]
    );
    assert_eq!(browser.find(&format!("{PANEL} .msg.agent strong")).text(), "there");
    let user = &llm.bodies()[0]["messages"];
    let last = user.as_array().unwrap().last().unwrap();
    assert!(last.to_string().contains("is the plan ready?"), "{last}");
    browser.screenshot("streamed");
    assert!(console_errors(&browser).is_empty(), "{:?}", console_errors(&browser));
}

#[test]
fn a_write_asks_and_approving_it_shows_the_diff() {
    let Some(driver) = Driver::start("a_write_asks_and_approving_it_shows_the_diff") else {
        return;
    };
    let ws = Workspace::new("web-write");
    ws.write("main.tf", "resource \"terraform_data\" \"a\" {\n  input = \"old\"\n}\n");
    let content = "resource \"terraform_data\" \"a\" {\n  input = \"new\"\n}\n";
    let llm = FakeLlm::start(vec![
        tool_reply("w1", "write_file", json!({"path": "main.tf", "content": content})),
        text_reply("written"),
    ]);
    let server = server(&ws, &llm, &[]);
    let browser = driver.session();
    sign_in(&browser, &server.addr);
    new_session(&browser);
    prompt(&browser, "change the input");
    let allow = browser.wait(&format!("{PANEL} .permission button[data-kind='allow_once']"), WAIT);
    assert!(allow.has_focus(), "the new question takes the focus");
    let question = browser.find(&format!("{PANEL} .permission")).text();
    assert!(question.contains("main.tf"), "{question}");
    assert!(ws.read("main.tf").contains("old"), "nothing is written before the answer");
    browser.screenshot("write-question");
    allow.click();
    let diff = browser.wait(&format!("{PANEL} .tool .diff"), WAIT);
    wait_idle(&browser);
    assert_eq!(ws.read("main.tf"), content);
    let removed = browser.find_all(&format!("{PANEL} .diff tr.del"));
    let added = browser.find_all(&format!("{PANEL} .diff tr.add"));
    assert_eq!(removed.len(), 1, "{}", diff.text());
    assert_eq!(added.len(), 1, "{}", diff.text());
    assert!(removed[0].text().contains("\"old\"") && added[0].text().contains("\"new\""));
    // Unified: the old line, then the new one; side by side: both on one row.
    let order: Vec<String> = browser
        .find_all(&format!("{PANEL} .diff tr.del, {PANEL} .diff tr.add"))
        .iter()
        .map(|r| r.attr("class").unwrap())
        .collect();
    assert_eq!(order, ["del", "add"]);
    browser.find(&format!("{PANEL} .diff-head button")).click();
    let row = browser.wait(&format!("{PANEL} .diff-table.split tr:has(td.del):has(td.add)"), WAIT);
    assert!(row.text().contains("\"old\"") && row.text().contains("\"new\""), "{}", row.text());
    browser.screenshot("write-diff");
    assert!(browser.find(&format!("{PANEL} .permission")).text().contains("Answered"));
}

fn tf(ws: &Workspace, args: &[&str]) -> String {
    let out = Command::new("terraform")
        .args(args)
        .current_dir(ws.project())
        .env("TF_IN_AUTOMATION", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "terraform {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_destroy_question_shows_the_plan_table_and_rejecting_it_keeps_the_state() {
    let test = "a_destroy_question_shows_the_plan_table_and_rejecting_it_keeps_the_state";
    let Some(_) = program("terraform", Ci::Fails) else { return };
    let Some(driver) = Driver::start(test) else { return };
    let ws = Workspace::new("web-destroy");
    ws.write(
        "main.tf",
        "resource \"terraform_data\" \"a\" {}\nresource \"terraform_data\" \"b\" {}\n",
    );
    tf(&ws, &["init", "-input=false", "-no-color"]);
    tf(&ws, &["apply", "-auto-approve", "-input=false", "-no-color"]);
    let command = "terraform destroy -auto-approve -input=false";
    let llm = FakeLlm::start(vec![
        tool_reply("d1", "bash", json!({"command": command})),
        text_reply("I did not destroy anything."),
    ]);
    let server = server(&ws, &llm, &[]);
    let browser = driver.session();
    sign_in(&browser, &server.addr);
    new_session(&browser);
    prompt(&browser, "tear it down");
    let question = browser.wait(&format!("{PANEL} .permission.destroy"), WAIT);
    let heading = question.find("h3").text();
    assert!(heading.to_lowercase().contains("destroys"), "{heading}");
    assert_eq!(question.css("border-top-style"), "solid");
    let rows: Vec<String> = question.find_all("table tbody tr").iter().map(|r| r.text()).collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows[0].contains("terraform_data.a") && rows[0].contains("delete"), "{rows:?}");
    assert!(rows[1].contains("terraform_data.b"), "{rows:?}");
    let kinds: Vec<String> =
        question.find_all("button").iter().filter_map(|b| b.attr("data-kind")).collect();
    assert_eq!(kinds, ["allow_once", "reject_once"], "no \"always\" for a destroy");
    let allow = question.find("button[data-kind='allow_once']");
    assert!(allow.attr("class").unwrap().contains("danger"));
    assert!(allow.text().contains("destroy"), "{}", allow.text());
    assert!(
        question.find("button[data-kind='reject_once']").has_focus(),
        "the safe answer has the focus"
    );
    let tier = browser.find(&format!("{PANEL} .tool .tier")).text();
    assert_eq!(tier, "destroy");
    browser.screenshot("destroy-question");
    question.find("button[data-kind='reject_once']").click();
    wait_idle(&browser);
    let state = tf(&ws, &["state", "list"]);
    assert_eq!(state.lines().count(), 2, "rejected: nothing was destroyed\n{state}");
    assert!(browser.find(&format!("{PANEL} .permission")).text().contains("Answered: Reject"));
    browser.screenshot("destroy-rejected");
}

#[test]
fn markup_from_the_model_or_a_tool_is_text_and_runs_nothing() {
    let Some(driver) = Driver::start("markup_from_the_model_or_a_tool_is_text_and_runs_nothing")
    else {
        return;
    };
    let ws = Workspace::new("web-markup");
    let evil = "Look: <img src=x onerror=\"window.pwned=1\"> <script>window.pwned=2</script> \
                [click me](javascript:window.pwned=3) <a href=\"javascript:window.pwned=4\">a</a>";
    let echo = "printf '%s\\n' '<img src=x onerror=window.pwned=5>' '<svg onload=window.pwned=6>'";
    let llm =
        FakeLlm::start(vec![tool_reply("e1", "bash", json!({"command": echo})), text_reply(evil)]);
    let server = server(&ws, &llm, &["--allowed-tools", "bash(printf*)"]);
    let browser = driver.session();
    sign_in(&browser, &server.addr);
    new_session(&browser);
    prompt(&browser, "<b>bold?</b> <img src=y onerror=window.pwned=7>");
    browser.wait_text(&format!("{PANEL} .msg.agent"), "click me", WAIT);
    wait_idle(&browser);
    let log = format!("{PANEL} .log");
    for tag in ["img", "script", "svg", "b", "iframe"] {
        assert!(
            browser.find_all(&format!("{log} {tag}")).is_empty(),
            "a <{tag}> got into the page"
        );
    }
    let links = browser.script(
        "return [...document.querySelectorAll('.log a')].map(a => a.getAttribute('href'))",
        &[],
    );
    assert_eq!(links, json!([]), "no link to javascript:");
    assert_eq!(browser.script("return typeof window.pwned", &[]), "undefined");
    let text = browser.find(&format!("{PANEL} .msg.agent")).text();
    assert!(text.contains("<img src=x onerror=\"window.pwned=1\">"), "{text}");
    assert!(text.contains("<script>window.pwned=2</script>"), "{text}");
    let output = browser.find(&format!("{PANEL} .tool pre")).text();
    assert!(output.contains("<svg onload=window.pwned=6>"), "{output}");
    let user = browser.find(&format!("{PANEL} .msg.user")).text();
    assert!(user.contains("<b>bold?</b>"), "{user}");
    browser.screenshot("markup-as-text");
    assert!(console_errors(&browser).is_empty(), "{:?}", console_errors(&browser));
}
