//! What the page survives: the network cut in the middle of a reply (it resumes with
//! `Last-Event-ID`, nothing lost and nothing twice), the server replaced by another node on
//! the same sessions (reported, the session loaded again), two sessions in two tabs of one
//! connection streaming at once without mixing, and more tabs than a browser's six
//! connections to a server.

use serde_json::json;

use super::page::{
    PANEL, agent_texts, new_session, prompt, server, sign_in, wait_idle, wait_journal,
    wait_last_agent,
};
use crate::browser::{Driver, WAIT};
use crate::cut_proxy::CutProxy;
use crate::support::fake_llm::{Event, FakeLlm, Reply, open_gate, text_reply};
use crate::support::workspace::Workspace;

/// `first..last` as words (`w000 w001 …`), each its own streamed piece.
fn words(range: std::ops::Range<usize>) -> Vec<Event> {
    range.map(|n| Event::Text(format!("w{n:03} "))).collect()
}

fn expected(range: std::ops::Range<usize>) -> String {
    range.map(|n| format!("w{n:03}")).collect::<Vec<_>>().join(" ")
}

#[test]
fn a_cut_in_the_middle_of_a_reply_resumes_without_a_gap_or_a_repeat() {
    let Some(driver) =
        Driver::start("a_cut_in_the_middle_of_a_reply_resumes_without_a_gap_or_a_repeat")
    else {
        return;
    };
    let ws = Workspace::new("web-cut");
    let mut events = words(0..60);
    events.push(Event::Gate("web-cut"));
    events.extend(words(60..120));
    events.extend([
        Event::Finish("stop"),
        Event::Usage { prompt: 10, completion: 120 },
        Event::Done,
    ]);
    let llm = FakeLlm::start(vec![Reply::Stream(events)]);
    let server = server(&ws, &llm, &[]);
    let proxy = CutProxy::start(server.addr.parse().unwrap());
    let addr = proxy.addr().to_string();
    let browser = driver.session();
    sign_in(&browser, &addr);
    new_session(&browser);
    browser.script(
        "window.states = []; new MutationObserver(() => window.states.push(\
           document.getElementById('status').dataset.state)).observe(\
           document.getElementById('status'), {attributes: true});",
        &[],
    );
    let id = browser.find(PANEL).attr("data-session-id").unwrap();
    prompt(&browser, "count");
    browser.wait_text(&format!("{PANEL} .msg.agent"), "w059", WAIT);
    // The link dies silently: the rest of the reply leaves the server, which counts it
    // delivered, and never reaches the page. Only `Last-Event-ID` brings it back.
    proxy.swallow();
    open_gate("web-cut");
    wait_journal(&ws, &id, "w119");
    let lost = proxy.wait_swallowed(1, WAIT);
    let cut = proxy.cut();
    assert!(cut >= 1, "the page's stream was cut ({cut} connections)");
    browser.wait_text(&format!("{PANEL} .msg.agent"), "w119", WAIT);
    wait_idle(&browser);
    assert_eq!(
        agent_texts(&browser),
        [expected(0..120)],
        "every word once, in order ({lost} bytes were lost on the way)"
    );
    let states = browser.script("return window.states", &[]);
    assert!(states.as_array().unwrap().contains(&json!("reconnecting")), "{states}");
    assert_eq!(browser.find("#status").attr("data-state").unwrap(), "connected");
    assert!(proxy.connections() > cut, "the page came back on new connections");
    browser.screenshot("resumed");
}

#[test]
fn a_hole_the_replay_buffer_cannot_fill_reloads_the_session() {
    let Some(driver) = Driver::start("a_hole_the_replay_buffer_cannot_fill_reloads_the_session")
    else {
        return;
    };
    let ws = Workspace::new("web-gap");
    // About 200 KB of frames while the page gets none, over a 64 KiB replay buffer: what
    // the page missed is gone from the server's memory, but not from the journal.
    let piece = |n: usize| Event::Text(format!("g{n:03} {} ", "x".repeat(200)));
    let mut events: Vec<Event> = (0..10).map(piece).collect();
    events.push(Event::Gate("web-gap"));
    events.extend((10..600).map(piece));
    events.extend([Event::Finish("stop"), Event::Done]);
    let llm = FakeLlm::start(vec![Reply::Stream(events)]);
    let server = server(&ws, &llm, &["--sse-buffer", "65536"]);
    let proxy = CutProxy::start(server.addr.parse().unwrap());
    let browser = driver.session();
    sign_in(&browser, &proxy.addr().to_string());
    new_session(&browser);
    let id = browser.find(PANEL).attr("data-session-id").unwrap();
    prompt(&browser, "a lot");
    browser.wait_text(&format!("{PANEL} .msg.agent"), "g009", WAIT);
    proxy.swallow();
    open_gate("web-gap");
    wait_journal(&ws, &id, "g599");
    proxy.wait_swallowed(100_000, WAIT);
    proxy.cut();
    browser.wait_until("document.getElementById('banner').innerText.includes('reloaded')", WAIT);
    browser.wait_text(&format!("{PANEL} .msg.note"), "reloaded", WAIT);
    wait_last_agent(&browser, "g599");
    let texts = agent_texts(&browser);
    assert_eq!(texts.len(), 1, "the reply once");
    let words: Vec<&str> = texts[0].split_whitespace().filter(|w| w.starts_with('g')).collect();
    let want: Vec<String> = (0..600).map(|n| format!("g{n:03}")).collect();
    assert_eq!(words, want, "the whole reply, from the journal, in order");
    browser.screenshot("gap-reloaded");
}

#[test]
fn a_new_node_on_the_same_sessions_is_reported_and_the_session_reloaded() {
    let Some(driver) =
        Driver::start("a_new_node_on_the_same_sessions_is_reported_and_the_session_reloaded")
    else {
        return;
    };
    let ws = Workspace::new("web-failover");
    let llm = FakeLlm::start(vec![text_reply("first answer"), text_reply("second answer")]);
    let first = server(&ws, &llm, &[]);
    let proxy = CutProxy::start(first.addr.parse().unwrap());
    let addr = proxy.addr().to_string();
    let browser = driver.session();
    sign_in(&browser, &addr);
    new_session(&browser);
    prompt(&browser, "one");
    browser.wait_text(&format!("{PANEL} .msg.agent"), "first answer", WAIT);
    wait_idle(&browser);
    // The node goes away; another one, on the same session files, takes its place.
    drop(first);
    let second = server(&ws, &llm, &[]);
    proxy.set_backend(second.addr.parse().unwrap());
    proxy.cut();
    let banner = browser.wait_text("#banner", "reloaded", WAIT).text();
    assert!(banner.contains("lost"), "{banner}");
    browser.wait_text(&format!("{PANEL} .msg.note"), "reloaded", WAIT);
    assert_eq!(agent_texts(&browser), ["first answer"], "the history once, from the new node");
    let users = browser.find_all(&format!("{PANEL} .msg.user"));
    assert_eq!(users.len(), 1);
    browser.screenshot("reloaded");
    prompt(&browser, "two");
    wait_last_agent(&browser, "second answer");
    wait_idle(&browser);
    assert_eq!(agent_texts(&browser), ["first answer", "second answer"]);
}

#[test]
fn two_tabs_on_one_connection_stream_at_once_without_mixing() {
    let Some(driver) = Driver::start("two_tabs_on_one_connection_stream_at_once_without_mixing")
    else {
        return;
    };
    let ws = Workspace::new("web-tabs");
    // Whichever prompt reaches the model first gets "alpha" and stops halfway until the
    // other one's "beta" has streamed whole: the two replies interleave on one connection.
    let mut alpha: Vec<Event> = (0..20).map(|n| Event::Text(format!("alpha{n} "))).collect();
    alpha.push(Event::Gate("web-tabs"));
    alpha.extend((20..40).map(|n| Event::Text(format!("alpha{n} "))));
    alpha.extend([Event::Finish("stop"), Event::Done]);
    let beta: Vec<Event> = (0..40)
        .map(|n| Event::Text(format!("beta{n} ")))
        .chain([Event::Finish("stop"), Event::Done])
        .collect();
    let llm =
        FakeLlm::start(vec![Reply::Stream(alpha), Reply::Stream(beta), text_reply("seventh")]);
    let server = server(&ws, &llm, &[]);
    let browser = driver.session();
    sign_in(&browser, &server.addr);
    new_session(&browser);
    let first = browser.find(PANEL).attr("data-session-id").unwrap();
    prompt(&browser, "first tab");
    browser.wait_text(&format!("{PANEL} .msg.agent"), "alpha19", WAIT);
    new_session(&browser);
    let second = browser.find(PANEL).attr("data-session-id").unwrap();
    assert_ne!(first, second);
    prompt(&browser, "second tab");
    browser.wait_text(&format!("{PANEL} .msg.agent"), "beta39", WAIT);
    wait_idle(&browser);
    open_gate("web-tabs");
    let all = |word: &str| (0..40).map(|n| format!("{word}{n}")).collect::<Vec<_>>().join(" ");
    assert_eq!(agent_texts(&browser), [all("beta")]);
    browser.find(&format!("[role='tab'][data-session-id='{first}']")).click();
    browser.wait(&format!("section.session[data-session-id='{first}']:not([hidden])"), WAIT);
    browser.wait_text(&format!("{PANEL} .msg.agent"), "alpha39", WAIT);
    wait_idle(&browser);
    assert_eq!(agent_texts(&browser), [all("alpha")]);
    let tabs = browser.find_all("[role='tab']");
    assert_eq!(tabs.len(), 2);
    assert_eq!(browser.find_all("[role='tab'][aria-selected='true']").len(), 1);
    browser.screenshot("two-tabs");
    // More tabs than the six connections a browser keeps to one server: the page's one
    // stream leaves room for its requests.
    for _ in 0..5 {
        new_session(&browser);
    }
    assert_eq!(browser.find_all("[role='tab']").len(), 7);
    prompt(&browser, "seventh tab");
    browser.wait_text(&format!("{PANEL} .msg.agent"), "seventh", WAIT);
    wait_idle(&browser);
}

/// The page's own connection code, in the page, over a `fetch` that answers what the test
/// says: whether it gives the connection up (and starts a new one) is the server's code's
/// doing alone. Reworded errors with the code do; the old words without it do not.
#[test]
fn the_page_starts_over_on_the_code_never_on_the_words() {
    let Some(driver) = Driver::start("the_page_starts_over_on_the_code_never_on_the_words") else {
        return;
    };
    let ws = Workspace::new("web-codes");
    let llm = FakeLlm::start(Vec::new());
    let server = server(&ws, &llm, &[]);
    let browser = driver.session();
    // Not signed in: the page holds no connection of its own while the test runs.
    browser.goto(&format!("http://{}/", server.addr));
    browser.wait("#token", WAIT);
    let seen = browser.script_async(
        r#"
        const done = arguments[arguments.length - 1];
        import("/web/acp.js").then(async ({ Connection }) => {
          const fresh = () => {
            const conn = new Connection("", { onLost() {}, onState() {}, onNotify() {}, onRequest() {} });
            conn.id = "c1";
            return conn;
          };
          const answer = (status, body) => async () =>
            new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
          const real = window.fetch;
          const post = async (status, body) => {
            const conn = fresh();
            window.fetch = answer(status, body);
            try { await conn.post({ jsonrpc: "2.0", method: "x", params: {} }); } catch {}
            window.fetch = real;
            return conn.lost;
          };
          const event = (name, data) => {
            const conn = fresh();
            conn.onEvent({ lastId: null }, { id: null, event: name, data: JSON.stringify(data) });
            return conn.lost;
          };
          done({
            reworded: await post(400, { error: "we forgot you", code: "unknown_connection" }),
            missing: await post(400, { error: "", code: "no_connection" }),
            closed: await post(400, { error: "bye", code: "connection_closed" }),
            oldWords: await post(400, { error: "Connection not found; the connection is closed", code: "session_mismatch" }),
            noCode: await post(404, { error: "Connection not found" }),
            gap: event("replay_gap", { error: "a hole", code: "replay_gap", from: 3, to: 9 }),
            notice: event("error", { error: "no longer in the replay buffer", code: "buffer_overflow" }),
          });
        }).catch((err) => done({ failed: String(err) }));
        "#,
        &[],
    );
    assert_eq!(
        seen,
        json!({"reworded": true, "missing": true, "closed": true, "oldWords": false,
               "noCode": false, "gap": true, "notice": false}),
        "lost (a new connection) on the codes alone"
    );
}
