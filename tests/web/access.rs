//! The page for everyone and at every size: a prompt and an approval with the keyboard
//! only, 200 % zoom and dark mode, slash-command completion, an `ask_user` form, the mode
//! switcher, a huge tool output, and a 10,000-message session that stays responsive.

use std::io::Write;

use serde_json::json;

use super::page::{
    PANEL, agent_texts, new_session, prompt, server, sign_in, wait_idle, wait_last_agent,
};
use crate::browser::keys::{ARROW_DOWN, ENTER, TAB};
use crate::browser::{Driver, WAIT};
use crate::support::fake_llm::{FakeLlm, text_reply, tool_reply};
use crate::support::workspace::Workspace;

#[test]
fn a_prompt_and_an_approval_with_the_keyboard_only() {
    let Some(driver) = Driver::start("a_prompt_and_an_approval_with_the_keyboard_only") else {
        return;
    };
    let ws = Workspace::new("web-keys");
    let llm = FakeLlm::start(vec![
        tool_reply("w1", "write_file", json!({"path": "notes.md", "content": "typed\n"})),
        text_reply("saved"),
    ]);
    let server = server(&ws, &llm, &[]);
    let browser = driver.session();
    sign_in(&browser, &server.addr);
    // Tab through the page to "New session", as a keyboard user does.
    let mut presses = 0;
    while browser.active_element().attr("id").as_deref() != Some("new-session") {
        presses += 1;
        assert!(presses < 15, "Tab never reached New session");
        browser.keys(TAB);
    }
    browser.keys(ENTER);
    browser.wait_until(
        "document.activeElement && document.activeElement.matches('textarea.prompt')",
        WAIT,
    );
    browser.keys(&format!("write the notes{ENTER}"));
    let allow = browser.wait(&format!("{PANEL} .permission button[data-kind='allow_once']"), WAIT);
    browser.wait_until(
        "document.activeElement && document.activeElement.dataset.kind === 'allow_once'",
        WAIT,
    );
    assert!(allow.has_focus());
    browser.keys(ENTER);
    wait_idle(&browser);
    assert_eq!(ws.read("notes.md"), "typed\n");
    assert_eq!(agent_texts(&browser), ["saved"]);
    browser.screenshot("keyboard-done");
}

#[test]
fn it_reflows_at_200_percent_zoom_and_follows_dark_mode() {
    let Some(driver) = Driver::start("it_reflows_at_200_percent_zoom_and_follows_dark_mode") else {
        return;
    };
    let ws = Workspace::new("web-zoom");
    let llm = FakeLlm::start(vec![text_reply(
        "| resource | action |\n|---|---|\n| terraform_data.a | create |\n",
    )]);
    let server = server(&ws, &llm, &[]);
    let browser = driver.session();
    sign_in(&browser, &server.addr);
    new_session(&browser);
    prompt(&browser, "table please");
    browser.wait(&format!("{PANEL} .msg.agent table"), WAIT);
    wait_idle(&browser);
    browser.zoom(2.0);
    let overflow = browser.script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth",
        &[],
    );
    assert!(overflow.as_i64().unwrap() <= 0, "no sideways scrolling at 200 %: {overflow}");
    let composer = browser.find(&format!("{PANEL} textarea.prompt"));
    assert!(composer.is_displayed());
    browser.screenshot("zoom-200");
    browser.zoom(1.0);
    let background =
        || browser.script("return getComputedStyle(document.body).backgroundColor", &[]);
    let light = background();
    browser.emulate_dark_mode(true);
    browser
        .wait_until(&format!("getComputedStyle(document.body).backgroundColor !== {light}"), WAIT);
    let dark = background();
    let rgb: Vec<u64> = dark
        .as_str()
        .unwrap()
        .trim_start_matches("rgb(")
        .trim_end_matches(')')
        .split(", ")
        .map(|n| n.parse().unwrap())
        .collect();
    assert!(rgb.iter().all(|c| *c < 64), "a dark background: {dark}");
    browser.screenshot("dark");
}

#[test]
fn slash_commands_complete_and_the_mode_switches() {
    let Some(driver) = Driver::start("slash_commands_complete_and_the_mode_switches") else {
        return;
    };
    let ws = Workspace::new("web-commands");
    let llm = FakeLlm::start(vec![]);
    let server = server(&ws, &llm, &[]);
    let browser = driver.session();
    sign_in(&browser, &server.addr);
    new_session(&browser);
    browser.find(&format!("{PANEL} textarea.prompt")).click();
    browser.keys("/re");
    let list = browser.wait(&format!("{PANEL} ul.commands:not([hidden])"), WAIT);
    let names: Vec<String> =
        list.find_all("li").iter().filter_map(|li| li.attr("data-name")).collect();
    assert!(names.contains(&"rename".to_string()), "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("re")), "{names:?}");
    browser.screenshot("commands");
    let at = names.iter().position(|n| n == "rename").unwrap();
    for _ in 0..at {
        browser.keys(ARROW_DOWN);
    }
    browser.keys(TAB);
    let value = browser.script("return document.activeElement.value", &[]);
    assert_eq!(value, "/rename ");
    browser.keys(&format!("prod network{ENTER}"));
    wait_idle(&browser);
    browser.wait_text(&format!("{PANEL} h2.session-title"), "prod network", WAIT);
    browser.wait_text("[role='tab'][aria-selected='true']", "prod network", WAIT);
    // The mode switcher sets the session's mode through its config option.
    let mode = browser.find(&format!("{PANEL} select[data-config-id='mode']"));
    browser.script(
        "arguments[0].value = 'plan'; arguments[0].dispatchEvent(new Event('change'))",
        &[mode.json()],
    );
    browser.wait_until(
        &format!(
            "document.querySelector(\"{PANEL} select[data-config-id='mode']\").value === 'plan'"
        ),
        WAIT,
    );
    let journal = std::fs::read_dir(ws.config().join("sessions"))
        .unwrap()
        .map(|e| {
            std::fs::read_to_string(e.unwrap().path().join("journal.jsonl")).unwrap_or_default()
        })
        .collect::<String>();
    assert!(journal.contains("\"plan\""), "the mode change is recorded: {journal}");
}

#[test]
fn an_ask_user_question_is_a_form() {
    let Some(driver) = Driver::start("an_ask_user_question_is_a_form") else { return };
    let ws = Workspace::new("web-ask");
    let question = json!({"question": "Which environment?", "options": ["staging", "production"]});
    let llm = FakeLlm::start(vec![tool_reply("q1", "ask_user", question), text_reply("planning")]);
    let server = server(&ws, &llm, &[]);
    let browser = driver.session();
    sign_in(&browser, &server.addr);
    new_session(&browser);
    prompt(&browser, "deploy");
    let form = browser.wait(&format!("{PANEL} .elicit form"), WAIT);
    assert!(browser.find(&format!("{PANEL} .elicit")).text().contains("Which environment?"));
    browser.wait_until("document.activeElement && document.activeElement.closest('.elicit')", WAIT);
    let select = form.find("select");
    browser.script(
        "arguments[0].value = 'staging'; arguments[0].dispatchEvent(new Event('change'))",
        &[select.json()],
    );
    browser.screenshot("ask-user");
    form.find("button[type='submit']").click();
    wait_idle(&browser);
    let results = llm.bodies();
    let sent = results.last().unwrap()["messages"].to_string();
    assert!(sent.contains("staging"), "the answer reached the model: {sent}");
    assert_eq!(agent_texts(&browser), ["planning"]);
}

#[test]
fn a_huge_output_and_a_10000_message_session_stay_capped() {
    let Some(driver) = Driver::start("a_huge_output_and_a_10000_message_session_stay_capped")
    else {
        return;
    };
    let ws = Workspace::new("web-huge");
    let llm = FakeLlm::start(vec![
        tool_reply("s1", "bash", json!({"command": "seq 1 400000"})),
        text_reply("counted"),
    ]);
    let first = server(&ws, &llm, &["--allowed-tools", "bash(seq*)"]);
    let browser = driver.session();
    sign_in(&browser, &first.addr);
    new_session(&browser);
    let id = browser.find(PANEL).attr("data-session-id").unwrap();
    prompt(&browser, "count");
    wait_idle(&browser);
    let shown = browser.script(
        "return Math.max(...[...document.querySelectorAll('.tool pre')].map(p => p.textContent.length))",
        &[],
    );
    assert!(shown.as_u64().unwrap() <= 64 * 1024, "a tool's output is capped on screen: {shown}");
    drop(first);
    // The same session with 10,000 more messages, as a long-lived one has.
    let journal = ws.config().join("sessions").join(&id).join("journal.jsonl");
    let mut file = std::fs::OpenOptions::new().append(true).open(&journal).unwrap();
    for n in 0..5000 {
        let user = json!({"v": 1, "ts": "2026-12-02T10:00:00.000Z", "type": "user",
            "id": format!("u{n}"), "text": format!("question {n}")});
        let answer = json!({"v": 1, "ts": "2026-12-02T10:00:00.000Z", "type": "assistant",
            "id": format!("a{n}"), "text": format!("answer {n}")});
        writeln!(file, "{user}\n{answer}").unwrap();
    }
    drop(file);
    let second = server(&ws, &llm, &[]);
    let browser = driver.session();
    sign_in(&browser, &second.addr);
    browser.wait(&format!("#sessions li[data-session-id='{id}'] button"), WAIT).click();
    wait_last_agent(&browser, "answer 4999");
    let counts = browser.script(
        "const log = iacCode.active.log; \
         return [log.entries.length, document.querySelectorAll(arguments[0] + ' li.entry').length]",
        &[json!(PANEL)],
    );
    let (entries, in_dom) = (counts[0].as_u64().unwrap(), counts[1].as_u64().unwrap());
    assert!(entries >= 10_000, "{entries} entries");
    assert!(in_dom <= 240, "{in_dom} entries in the DOM");
    // Scrolling up brings earlier ones in, and the window stays bounded.
    browser.script(&format!("document.querySelector('{PANEL} .log').scrollTop = 0"), &[]);
    browser.wait_until("iacCode.active.log.start < iacCode.active.log.entries.length - 240", WAIT);
    let in_dom = browser
        .script(&format!("return document.querySelectorAll('{PANEL} li.entry').length"), &[]);
    assert!(in_dom.as_u64().unwrap() <= 240, "{in_dom}");
    browser.screenshot("long-session");
}
