//! The token economy against the fake LLM: a byte-stable prompt prefix (consecutive
//! requests of a 20-call turn extend each other byte for byte, the system prompt and its
//! date frozen for the session, across a reload), Anthropic's breakpoints (never more than
//! 4, none with `IAC_CODE_PROMPT_CACHE=off`), the OpenAI cache key, cached and reasoning
//! tokens summed into PromptResponse `usage`, a `usage_update` with the session's cost
//! after every call (none when a price is unknown), the totals in `sessions show` and
//! `-p`, and tool output never re-sent bigger than it was shown.

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, Permission, updates_of};
use crate::support::command::{iac_code, on_file_store};
use crate::support::fake_llm::{Event, FakeLlm, Recorded, Reply, text_reply};
use crate::support::workspace::Workspace;

/// A reply calling `read_file` on `path`, with usage as a caching provider reports it.
fn read_call(id: &str, path: &str, usage: Event) -> Reply {
    Reply::Stream(vec![
        Event::ToolCall {
            index: 0,
            id: id.into(),
            name: "read_file".into(),
            args: json!({"path": path}),
        },
        Event::Finish("tool_calls"),
        usage,
        Event::Done,
    ])
}

fn text_with(text: &str, usage: Event) -> Reply {
    Reply::Stream(vec![Event::Text(text.into()), Event::Finish("stop"), usage, Event::Done])
}

/// Usage of call `i` of a growing conversation: the previous call's prompt read from the
/// cache, the rest written to it (even counts: every price below gives whole micro-units).
fn usage_of(i: u64) -> (u64, u64, u64, u64) {
    let prompt = 2_000 + 200 * i;
    let read = if i == 0 { 0 } else { 2_000 + 200 * (i - 1) };
    (prompt, read, prompt - read, 20)
}

fn cached(i: u64) -> Event {
    let (prompt, read, write, completion) = usage_of(i);
    Event::CachedUsage { prompt, completion, cached_read: read, cached_write: write, reasoning: 4 }
}

fn write_settings(ws: &Workspace, text: &str) {
    std::fs::create_dir_all(ws.config()).unwrap();
    std::fs::write(ws.config().join("settings.json"), text).unwrap();
}

/// The agent on the `preset` API at the fake, with `model`.
fn spawn(
    ws: &Workspace,
    llm: &FakeLlm,
    preset: &str,
    model: &str,
    extra: &[(&str, &str)],
) -> AcpProcess {
    let base = llm.base_url();
    let mut env = vec![
        ("IAC_CODE_PROVIDER", preset),
        ("IAC_CODE_BASE_URL", base.as_str()),
        ("IAC_CODE_API_KEY", "sk-test"),
        ("IAC_CODE_MODEL", model),
    ];
    env.extend_from_slice(extra);
    let mut acp = AcpProcess::spawn(ws, &env);
    acp.set_permission(Permission::AllowOnce);
    acp.initialize();
    acp
}

/// Each request's bytes up to the end of its last message begin the next request.
fn assert_extends(requests: &[Recorded], strip: &dyn Fn(&[u8]) -> Vec<u8>) {
    for (i, pair) in requests.windows(2).enumerate() {
        let (earlier, later) = (strip(&pair[0].raw), strip(&pair[1].raw));
        assert!(earlier.ends_with(b"]}"), "request {i} ends with its messages");
        let head = &earlier[..earlier.len() - 2];
        let at = head.iter().zip(&later).position(|(a, b)| a != b).unwrap_or(head.len());
        assert!(
            later.starts_with(head),
            "request {} differs from request {i} at byte {at}: {}",
            i + 1,
            String::from_utf8_lossy(&later[at.saturating_sub(60)..(at + 60).min(later.len())])
        );
    }
}

#[test]
fn a_twenty_call_turn_sends_requests_that_extend_each_other_byte_for_byte() {
    let ws = Workspace::new("tokens-twenty");
    ws.write("main.tf", "resource \"null_resource\" \"x\" {}\n");
    let mut script: Vec<Reply> =
        (0..20).map(|i| read_call(&format!("call_{i}"), "main.tf", cached(i))).collect();
    script.push(text_with("All read.", cached(20)));
    let llm = FakeLlm::start(script);
    let mut acp = spawn(&ws, &llm, "openai", "gpt-4.1", &[]);
    let session = acp.new_session(&ws.project());
    let (msgs, response) = acp.prompt(&session, "read main.tf twenty times");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{}", acp.context());
    let requests = llm.requests();
    assert_eq!(requests.len(), 21);
    assert_extends(&requests, &|b| b.to_vec());
    for request in &requests {
        assert_eq!(request.body["prompt_cache_key"], session.as_str(), "OpenAI routes by session");
    }
    // Summed over the turn: cached reads and writes apart, inputTokens at full price only.
    let (mut read, mut input, mut output, mut micros) = (0, 0, 0, 0);
    let write = 0;
    for i in 0..21 {
        let (p, r, _, o) = usage_of(i);
        // OpenAI reports no cache writes: all but the reads is full price ($2, $0.50, $8).
        (read, input, output) = (read + r, input + p - r, output + o);
        micros += (p - r) * 2 + r / 2 + o * 8;
    }
    let usage = &response["result"]["usage"];
    assert_eq!(usage["cachedReadTokens"], read, "{usage}");
    assert_eq!(usage["cachedWriteTokens"], write, "{usage}");
    assert_eq!(usage["inputTokens"], input, "{usage}");
    assert_eq!(usage["outputTokens"], output, "{usage}");
    assert_eq!(usage["thoughtTokens"], 4 * 21, "{usage}");
    assert_eq!(usage["totalTokens"], input + read + output, "{usage}");
    // A usage_update after every call, with the session's cost so far.
    let updates = updates_of(&msgs, "usage_update");
    assert_eq!(updates.len(), 21, "one per model call");
    let costs: Vec<f64> =
        updates.iter().map(|u| u["cost"]["amount"].as_f64().expect("priced")).collect();
    assert!(costs.windows(2).all(|w| w[0] < w[1]), "cumulative: {costs:?}");
    assert_eq!(updates[20]["cost"]["currency"], "USD");
    assert!(
        (costs[20] - micros as f64 / 1e6).abs() < 1e-9,
        "{} vs {micros} micro-dollars",
        costs[20]
    );
}

#[test]
fn anthropic_marks_tools_system_and_the_last_two_ends_and_reports_the_cache() {
    let ws = Workspace::new("tokens-anthropic");
    ws.write("main.tf", "terraform {}\n");
    let script = vec![
        read_call("toolu_1", "main.tf", cached(0)),
        read_call("toolu_2", "main.tf", cached(1)),
        text_with("Done.", cached(2)),
    ];
    let llm = FakeLlm::start(script);
    let mut acp = spawn(&ws, &llm, "anthropic", "claude-sonnet-4-5", &[]);
    let session = acp.new_session(&ws.project());
    let (msgs, response) = acp.prompt(&session, "read it twice");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{}", acp.context());
    let requests = llm.requests();
    for (i, request) in requests.iter().enumerate() {
        let body = &request.body;
        let raw = String::from_utf8_lossy(&request.raw);
        assert!(raw.matches("cache_control").count() <= 4, "request {i}: {raw}");
        let tools = body["tools"].as_array().unwrap();
        assert_eq!(tools.last().unwrap()["cache_control"], json!({"type": "ephemeral"}));
        assert!(tools[..tools.len() - 1].iter().all(|t| t.get("cache_control").is_none()));
        assert_eq!(body["system"][0]["cache_control"], json!({"type": "ephemeral"}));
        let messages = body["messages"].as_array().unwrap();
        let marked: Vec<usize> = (0..messages.len())
            .filter(|m| {
                messages[*m]["content"]
                    .as_array()
                    .unwrap()
                    .last()
                    .unwrap()
                    .get("cache_control")
                    .is_some()
            })
            .collect();
        let want = if i == 0 { vec![0] } else { vec![messages.len() - 3, messages.len() - 1] };
        assert_eq!(marked, want, "request {i}: the newest message, and where the last one ended");
    }
    let unmark = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .replace(r#","cache_control":{"type":"ephemeral"}"#, "")
            .replace(r#""cache_control":{"type":"ephemeral"},"#, "")
            .into_bytes()
    };
    assert_extends(&requests, &unmark);
    let usage = &response["result"]["usage"];
    let (read, write): (u64, u64) =
        (0..3).map(|i| (usage_of(i).1, usage_of(i).2)).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    assert_eq!(usage["cachedReadTokens"], read, "{usage}");
    assert_eq!(usage["cachedWriteTokens"], write, "{usage}");
    assert_eq!(usage["inputTokens"], 0, "everything was read or written: {usage}");
    // $3 / $0.30 / $3.75 / $15 per million tokens.
    let micros: u64 = (0..3)
        .map(|i| {
            let (_, r, w, o) = usage_of(i);
            r * 3 / 10 + w * 375 / 100 + o * 15
        })
        .sum();
    let last = updates_of(&msgs, "usage_update").pop().cloned().unwrap();
    assert!(
        (last["cost"]["amount"].as_f64().unwrap() - micros as f64 / 1e6).abs() < 1e-9,
        "{last}"
    );
}

#[test]
fn prompt_cache_off_sends_no_cache_control_and_no_cache_key() {
    let ws = Workspace::new("tokens-off");
    let llm = FakeLlm::start(vec![text_reply("Hi."), text_reply("Hi.")]);
    let mut acp =
        spawn(&ws, &llm, "anthropic", "claude-sonnet-4-5", &[("IAC_CODE_PROMPT_CACHE", "off")]);
    let session = acp.new_session(&ws.project());
    acp.prompt(&session, "hello");
    let request = &llm.requests()[0];
    assert!(!String::from_utf8_lossy(&request.raw).contains("cache_control"), "{:?}", request.body);
    assert!(request.body["system"].is_string());
    let ws = Workspace::new("tokens-off-openai");
    let llm = FakeLlm::start(vec![text_reply("Hi.")]);
    let mut acp = spawn(&ws, &llm, "openai", "gpt-4.1", &[("IAC_CODE_PROMPT_CACHE", "off")]);
    let session = acp.new_session(&ws.project());
    acp.prompt(&session, "hello");
    assert!(llm.requests()[0].body.get("prompt_cache_key").is_none());
}

#[test]
fn an_unknown_price_sends_no_cost_and_settings_can_name_one() {
    let ws = Workspace::new("tokens-unknown-price");
    let llm = FakeLlm::start(vec![text_reply("One."), text_reply("Two.")]);
    let mut acp = spawn(&ws, &llm, "openai_compatible", "fake-model", &[]);
    let session = acp.new_session(&ws.project());
    let (msgs, _) = acp.prompt(&session, "hello");
    let update = updates_of(&msgs, "usage_update")[0].clone();
    assert!(update.get("cost").is_none(), "no price, no cost: {update}");
    drop(acp);
    write_settings(
        &ws,
        r#"{"pricing": {"fake-model": {"input": 1000000, "output": 0, "currency": "EUR"}}}"#,
    );
    let mut acp = spawn(&ws, &llm, "openai_compatible", "fake-model", &[]);
    let session = acp.new_session(&ws.project());
    let (msgs, _) = acp.prompt(&session, "hello");
    let update = updates_of(&msgs, "usage_update")[0].clone();
    // text_reply reports 10 prompt tokens, at a million euros per million tokens.
    assert_eq!(update["cost"], json!({"amount": 10.0, "currency": "EUR"}), "{update}");
}

#[test]
fn bad_pricing_is_a_configuration_error() {
    let ws = Workspace::new("tokens-bad-pricing");
    write_settings(&ws, r#"{"pricing": {"m": {"input": "cheap", "output": 1}}}"#);
    let out = iac_code(&ws).args(["config", "show"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pricing.m.input"));
}

/// The system message of an OpenAI request.
fn system_of(request: &Recorded) -> String {
    request.body["messages"][0]["content"].as_str().unwrap().to_string()
}

#[test]
fn the_system_prompt_and_its_date_stay_the_sessions_across_turns_and_a_reload() {
    let ws = Workspace::new("tokens-frozen");
    ws.write("AGENTS.md", "Pin versions.");
    let llm = FakeLlm::start(vec![text_reply("One."), text_reply("Two."), text_reply("Three.")]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    acp.prompt(&session, "first");
    // A change of AGENTS.md mid-session waits for the next session: the prefix holds.
    ws.write("AGENTS.md", "Something else.");
    acp.prompt(&session, "second");
    let requests = llm.requests();
    assert_eq!(system_of(&requests[0]), system_of(&requests[1]));
    assert_extends(&requests, &|b| b.to_vec());
    drop(acp);
    if !on_file_store() {
        return;
    }
    // Loaded again (on another day, as far as the prompt can tell): the creation date.
    let dir = ws.config().join("sessions").join(&session);
    for file in ["journal.jsonl", "meta.json"] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let day = &system_of(&requests[0]).split("Date: ").nth(1).unwrap()[..10].to_string();
        std::fs::write(dir.join(file), text.replace(&format!("\"{day}T"), "\"2020-02-29T"))
            .unwrap();
    }
    ws.write("AGENTS.md", "Pin versions.");
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    acp.open_session("session/load", &session, &ws.project());
    acp.prompt(&session, "third");
    let third = system_of(&llm.requests()[2]);
    assert!(third.contains("- Date: 2020-02-29\n"), "{third}");
}

#[test]
fn session_totals_survive_a_reload_and_sessions_show_prints_them() {
    let ws = Workspace::new("tokens-totals");
    let llm = FakeLlm::start(vec![text_with("One.", cached(0)), text_with("Two.", cached(1))]);
    let mut acp = spawn(&ws, &llm, "anthropic", "claude-haiku-4-5", &[]);
    let session = acp.new_session(&ws.project());
    acp.prompt(&session, "first");
    drop(acp);
    let mut acp = spawn(&ws, &llm, "anthropic", "claude-haiku-4-5", &[]);
    acp.open_session("session/load", &session, &ws.project());
    let (msgs, _) = acp.prompt(&session, "second");
    // $1 / $0.10 / $1.25 / $5 per million, both calls.
    let micros: u64 = (0..2)
        .map(|i| {
            let (_, r, w, o) = usage_of(i);
            r / 10 + w * 125 / 100 + o * 5
        })
        .sum();
    let last = updates_of(&msgs, "usage_update").pop().cloned().unwrap();
    assert!(
        (last["cost"]["amount"].as_f64().unwrap() - micros as f64 / 1e6).abs() < 1e-9,
        "the first call counts: {last}"
    );
    drop(acp);
    let out = iac_code(&ws).args(["sessions", "show", &session, "--json"]).output().unwrap();
    let shown: Value = serde_json::from_slice(&out.stdout).expect("json");
    let usage = &shown["usage"];
    assert_eq!(usage["cachedReadTokens"], usage_of(0).1 + usage_of(1).1, "{usage}");
    assert_eq!(usage["cachedWriteTokens"], usage_of(0).2 + usage_of(1).2, "{usage}");
    assert!(
        (usage["cost"]["amount"].as_f64().unwrap() - micros as f64 / 1e6).abs() < 1e-9,
        "{usage}"
    );
    // The metadata keeps the totals too, for listings.
    let out = iac_code(&ws).args(["sessions", "list", "--json"]).output().unwrap();
    let listed: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(listed[0]["usage"]["cachedReadTokens"], usage["cachedReadTokens"], "{listed}");
    assert_eq!(listed[0]["usage"]["cost"], usage["cost"], "{listed}");
    let out = iac_code(&ws).args(["sessions", "show", &session]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("usage   ") && text.contains(" USD"), "{text}");
}

#[test]
fn tool_output_goes_back_to_the_model_as_it_was_shown_even_after_a_reload() {
    let ws = Workspace::new("tokens-tool-output");
    let big: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    ws.write("big.txt", &big);
    let llm = FakeLlm::start(vec![
        read_call("call_1", "big.txt", Event::Usage { prompt: 10, completion: 1 }),
        text_reply("Read."),
        text_reply("Again."),
    ]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    let (msgs, _) = acp.prompt(&session, "read big.txt");
    let done = updates_of(&msgs, "tool_call_update")
        .into_iter()
        .rfind(|u| u["status"] == "completed")
        .cloned()
        .unwrap();
    let shown = done["content"][0]["content"]["text"].as_str().unwrap().to_string();
    assert!(shown.len() < big.len(), "the output was cut to what the model may see");
    drop(acp);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[]);
    acp.initialize();
    acp.open_session("session/load", &session, &ws.project());
    acp.prompt(&session, "again");
    for request in &llm.requests()[1..] {
        let sent = request.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool")
            .unwrap();
        assert_eq!(sent["content"].as_str().unwrap(), shown, "never bigger than it was shown");
    }
}

#[test]
fn one_shot_json_and_stream_json_carry_the_cache_figures_and_the_cost() {
    let ws = Workspace::new("tokens-oneshot");
    let llm = FakeLlm::start(vec![text_with("Fine.", cached(1)), text_with("Fine.", cached(1))]);
    let base = llm.base_url();
    let env = [
        ("IAC_CODE_PROVIDER", "openai"),
        ("IAC_CODE_BASE_URL", base.as_str()),
        ("IAC_CODE_API_KEY", "sk-test"),
        ("IAC_CODE_MODEL", "gpt-4.1"),
    ];
    // 200 at full price ($2), 2,000 read ($0.50), 20 out ($8) per million tokens.
    let (prompt, read, _, completion) = usage_of(1);
    let micros = (prompt - read) * 2 + read / 2 + completion * 8;
    let run = |format: &str| {
        let out = iac_code(&ws)
            .args(["-p", "check the plan", "--output-format", format])
            .envs(env)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let result: Value = serde_json::from_str(run("json").trim()).unwrap();
    let usage = &result["usage"];
    assert_eq!(usage["inputTokens"], prompt - read, "{usage}");
    assert_eq!(usage["cachedReadTokens"], read, "{usage}");
    assert_eq!(usage["thoughtTokens"], 4, "{usage}");
    assert_eq!(usage["cost"]["currency"], "USD", "{usage}");
    assert!((usage["cost"]["amount"].as_f64().unwrap() - micros as f64 / 1e6).abs() < 1e-9);
    let lines: Vec<Value> =
        run("stream-json").lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let update = lines.iter().find(|l| l["type"] == "usage").expect("a usage line per call");
    assert!((update["cost"]["amount"].as_f64().unwrap() - micros as f64 / 1e6).abs() < 1e-9);
    let end = lines.last().unwrap();
    assert_eq!(end["usage"]["cachedReadTokens"], read, "{end}");
}

#[test]
fn the_prefix_is_built_again_only_for_a_reason_the_log_names() {
    let ws = Workspace::new("tokens-rebuilt");
    let llm = FakeLlm::start(vec![text_reply("One."), text_reply("Two."), text_reply("Three.")]);
    let mut acp = AcpProcess::spawn_with_llm(&ws, &llm, &[("IAC_CODE_MODELS", "other-model")]);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    acp.prompt(&session, "first");
    acp.prompt(&session, "second");
    assert!(!acp.stderr().contains("built again"), "nothing changed: {}", acp.stderr());
    let set = json!({"sessionId": session, "configId": "model", "value": "other-model"});
    acp.call("session/set_config_option", set);
    acp.prompt(&session, "third");
    assert!(
        acp.stderr().contains("system prompt built again: the model changed"),
        "{}",
        acp.stderr()
    );
    let requests = llm.requests();
    assert_eq!(system_of(&requests[0]), system_of(&requests[1]));
    assert!(system_of(&requests[2]).contains("- Model: other-model"));
}
