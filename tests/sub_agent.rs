//! The `agent` tool: a sub-agent with its own history and tools, whose calls and questions
//! reach the client, which returns its answer with a summary, and which a cancel stops.

use serde_json::{Value, json};

use crate::support::acp_client::{AcpProcess, Permission, updates_of};
use crate::support::fake_llm::{Event, FakeLlm, Reply, text_reply, tool_reply};
use crate::support::workspace::Workspace;
use crate::tools::tool_result;

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

fn start(ws: &Workspace, script: Vec<Reply>) -> (FakeLlm, AcpProcess, String) {
    let llm = FakeLlm::start(script);
    let mut acp = AcpProcess::spawn_with_llm(ws, &llm, &[]);
    acp.set_permission(Permission::AllowOnce);
    acp.initialize();
    let session = acp.new_session(&ws.project());
    (llm, acp, session)
}

#[test]
fn explore_sub_agent_works_read_only_with_its_own_history() {
    let ws = Workspace::new("sub-explore");
    ws.write("modules/vpc/main.tf", "cidr_block = \"10.0.0.0/16\"\n");
    let task = json!({"prompt": "Find the VPC CIDR", "description": "find cidr", "subagent_type": "explore"});
    let (llm, mut acp, session) = start(
        &ws,
        vec![
            tool_reply("p1", "agent", task),
            tool_reply("s1", "grep", json!({"pattern": "cidr_block", "output_mode": "content"})),
            text_reply("The CIDR is 10.0.0.0/16 (modules/vpc/main.tf:1)."),
            text_reply("It is 10.0.0.0/16."),
        ],
    );
    let (msgs, response) = acp.prompt(&session, "what is the vpc cidr?");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    // The turn's usage includes the sub-agent's two requests: (20+10) x 2 in, 5+10+5+4 out.
    assert_eq!(response["result"]["usage"]["inputTokens"], 60, "{response}");
    assert_eq!(response["result"]["usage"]["outputTokens"], 24, "{response}");

    let requests = llm.requests();
    assert_eq!(requests.len(), 4);
    // The sub-agent starts from its task alone, with read-only tools and no `agent`.
    let sub = &requests[1].body;
    let roles: Vec<&str> =
        sub["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user"]);
    assert_eq!(sub["messages"][1]["content"], "Find the VPC CIDR");
    assert!(sub["messages"][0]["content"].as_str().unwrap().contains("You are a sub-agent"));
    let mut names = tool_names(sub);
    names.sort();
    assert_eq!(names, ["glob", "grep", "list_files", "read_file", "read_memory", "web_fetch"]);
    assert!(tool_result(&llm, 2).contains("modules/vpc/main.tf:1:cidr_block"));

    // The parent gets the final answer and a summary.
    let result = tool_result(&llm, 3);
    assert!(result.starts_with("The CIDR is 10.0.0.0/16 (modules/vpc/main.tf:1)."), "{result}");
    assert!(result.contains("Sub-agent (explore) summary: stopped with end_turn, 2 LLM requests, tool calls: grep ×1"), "{result}");

    // The client saw the sub-agent's call, tied to the agent call, and the agent asked once.
    let calls = updates_of(&msgs, "tool_call");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["kind"], "execute");
    assert_eq!(calls[1]["_meta"]["iacCode"]["parentToolCallId"], calls[0]["toolCallId"]);
    assert!(calls[1]["title"].as_str().unwrap().starts_with("find cidr › Grep"));
    let asked: Vec<&Value> =
        msgs.iter().filter(|m| m["method"] == "session/request_permission").collect();
    assert_eq!(asked.len(), 1, "only the agent call itself asks; grep is read-only");
    // Its text went to the agent call's progress, not into the parent's message.
    let text: String = updates_of(&msgs, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "It is 10.0.0.0/16.");
}

#[test]
fn general_sub_agent_asks_the_client_before_writing() {
    let ws = Workspace::new("sub-general");
    let task = json!({"prompt": "Create outputs.tf", "description": "add outputs"});
    let (llm, mut acp, session) = start(
        &ws,
        vec![
            tool_reply("p1", "agent", task),
            tool_reply(
                "s1",
                "write_file",
                json!({"path": "outputs.tf", "content": "output \"id\" {}\n"}),
            ),
            tool_reply("s2", "agent", json!({"prompt": "nested", "description": "nested"})),
            text_reply("Wrote outputs.tf."),
            text_reply("Done."),
        ],
    );
    let (msgs, response) = acp.prompt(&session, "add outputs");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(ws.read("outputs.tf"), "output \"id\" {}\n");
    let asked: Vec<&Value> =
        msgs.iter().filter(|m| m["method"] == "session/request_permission").collect();
    assert_eq!(asked.len(), 2, "the agent call and the sub-agent's write both ask");
    assert!(asked[1]["params"]["toolCall"]["title"].as_str().unwrap().contains("Write outputs.tf"));
    assert!(!tool_names(&llm.requests()[1].body).contains(&"agent".to_string()));
    assert!(tool_result(&llm, 3).starts_with("Unknown tool 'agent'"), "no nesting");
    assert!(tool_result(&llm, 4).contains("failed or denied"), "{}", tool_result(&llm, 4));
}

#[test]
fn cancelling_the_parent_cancels_the_sub_agent() {
    let ws = Workspace::new("sub-cancel");
    let task = json!({"prompt": "think", "description": "think", "subagent_type": "plan"});
    let (llm, mut acp, session) = start(
        &ws,
        vec![tool_reply("p1", "agent", task), Reply::Hang(vec![Event::Text("Considering".into())])],
    );
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "plan"}]}),
    );
    loop {
        let msg = acp.recv();
        if msg["method"] == "session/request_permission" {
            acp.respond(
                msg["id"].clone(),
                json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}),
            );
        }
        if msg["params"]["update"]["sessionUpdate"] == "tool_call_update"
            && msg["params"]["update"]["content"][0]["content"]["text"] == "Considering"
        {
            break;
        }
    }
    acp.notify("session/cancel", json!({"sessionId": session}));
    let (_, response) = acp.until_response(&id);
    assert_eq!(response["result"]["stopReason"], "cancelled");
    assert!(
        llm.wait_hang_dropped(std::time::Duration::from_secs(5)),
        "the sub-agent's stream was dropped"
    );
    assert_eq!(llm.requests().len(), 2);
}
