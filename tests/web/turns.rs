//! A turn's other faces: the plan as a checklist, the context meter, and cancel (the
//! button and Escape) stopping a reply that is still streaming.

use serde_json::json;

use super::page::{PANEL, new_session, prompt, server, sign_in, wait_idle};
use crate::browser::Driver;
use crate::browser::WAIT;
use crate::browser::keys::ESCAPE;
use crate::support::fake_llm::{Event, FakeLlm, Reply, open_gate, text_reply, tool_reply};
use crate::support::workspace::Workspace;

#[test]
fn the_plan_is_a_checklist_and_the_meter_shows_the_context() {
    let Some(driver) = Driver::start("the_plan_is_a_checklist_and_the_meter_shows_the_context")
    else {
        return;
    };
    let ws = Workspace::new("web-plan");
    let plan = json!({"entries": [
        {"content": "terraform plan", "priority": "high", "status": "completed"},
        {"content": "review the changes", "status": "in_progress"},
        {"content": "terraform apply", "priority": "low"}
    ]});
    let llm = FakeLlm::start(vec![tool_reply("p1", "update_plan", plan), text_reply("planned")]);
    let server = server(&ws, &llm, &[]);
    let browser = driver.session();
    sign_in(&browser, &server.addr);
    new_session(&browser);
    prompt(&browser, "make a plan");
    wait_idle(&browser);
    let items = browser.find_all(&format!("{PANEL} .plan-list li"));
    let texts: Vec<String> = items.iter().map(|i| i.text()).collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert!(
        texts[0].contains("terraform plan") && texts[2].contains("terraform apply"),
        "{texts:?}"
    );
    let done = browser.script(
        &format!(
            "return [...document.querySelectorAll('{PANEL} .plan-list input')].map(i => i.checked)"
        ),
        &[],
    );
    assert_eq!(done, json!([true, false, false]));
    assert_eq!(items[1].attr("aria-current").as_deref(), Some("step"));
    let meter = browser.find(&format!("{PANEL} .meter")).text();
    assert!(meter.starts_with("context ") && meter.contains("/ 128k"), "{meter}");
    browser.screenshot("plan");
}

#[test]
fn cancel_stops_a_reply_that_is_still_streaming() {
    let Some(driver) = Driver::start("cancel_stops_a_reply_that_is_still_streaming") else {
        return;
    };
    let ws = Workspace::new("web-cancel");
    let reply = |gate| {
        Reply::Stream(vec![
            Event::Text("working on it".into()),
            Event::Gate(gate),
            Event::Text(" and never shown".into()),
            Event::Finish("stop"),
            Event::Done,
        ])
    };
    let llm = FakeLlm::start(vec![reply("web-cancel-1"), reply("web-cancel-2")]);
    let server = server(&ws, &llm, &[]);
    let browser = driver.session();
    sign_in(&browser, &server.addr);
    new_session(&browser);
    prompt(&browser, "slow one");
    browser.wait_text(&format!("{PANEL} .msg.agent"), "working on it", WAIT);
    browser.find(&format!("{PANEL} button.cancel")).click();
    wait_idle(&browser);
    browser.wait_text(&format!("{PANEL} .msg.note"), "cancelled", WAIT);
    // Escape in the prompt box cancels too.
    prompt(&browser, "slow two");
    browser
        .wait_until(&format!("document.querySelectorAll('{PANEL} .msg.agent').length === 2"), WAIT);
    browser.keys(ESCAPE);
    wait_idle(&browser);
    // The note comes with the turn's answer, which may be drawn after the idle state.
    let both = format!("document.querySelectorAll('{PANEL} .msg.note').length >= 2");
    browser.wait_until(&both, WAIT);
    let notes = browser.find_all(&format!("{PANEL} .msg.note"));
    assert_eq!(notes.len(), 2, "both turns say they were cancelled");
    assert!(notes.iter().all(|n| n.text().contains("cancelled")), "each note says cancelled");
    open_gate("web-cancel-1");
    open_gate("web-cancel-2");
    let text = browser.find(PANEL).text();
    assert!(!text.contains("never shown"), "{text}");
}
