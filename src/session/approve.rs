//! The one question that puts a project's file to the user before it is used (a
//! `.mcp.json`, the project's skills): announced as a tool call, asked with "approve" and
//! "decline", and ended with what came of it.

use std::path::PathBuf;

use serde_json::Value;

use super::PromptIo;
use crate::agent::event::{AgentEvent, ToolCallEnd, ToolCallStart};
use crate::cancel::CancelToken;
use crate::gate::{Answer, Question};
use crate::tools::ToolKind;

/// What is put to the user.
pub(super) struct Approval {
    /// The question's tool name (`mcp_project`, `project_skills`).
    pub tool: &'static str,
    /// The title, already a `text::Title`'s.
    pub title: String,
    pub content: Vec<String>,
    pub input: Value,
    pub locations: Vec<(PathBuf, Option<u32>)>,
    /// The labels of the two answers.
    pub approve: String,
    pub decline: String,
}

/// Announces and asks `approval`; the call ends with `said(approved)`. Whether approved.
pub(super) fn ask(
    approval: Approval,
    io: &PromptIo,
    cancel: &CancelToken,
    said: impl FnOnce(bool) -> String,
) -> bool {
    let id = format!("tc_{}", uuid::Uuid::new_v4().simple());
    io.sink.emit(AgentEvent::ToolCall(ToolCallStart {
        id: id.clone(),
        title: approval.title.clone(),
        kind: ToolKind::Other,
        input: approval.input.clone(),
        locations: approval.locations.clone(),
        parent: None,
        tier: None,
    }));
    let question = Question {
        tool_call_id: id.clone(),
        tool: approval.tool.to_string(),
        title: approval.title,
        kind: ToolKind::Other,
        content: approval.content,
        tier: None,
        input: approval.input,
        locations: approval.locations,
        offer_always: false,
        remembers: None,
        choices: vec![
            ("approve", approval.approve, Answer::AllowAlways),
            ("decline", approval.decline, Answer::RejectOnce),
        ],
    };
    let approved = io.asker.ask(&question, cancel).allows();
    io.sink.emit(AgentEvent::ToolDone(ToolCallEnd {
        id,
        ok: approved,
        text: said(approved),
        raw: Value::Null,
        diff: None,
        terminal: None,
        hooks: Vec::new(),
        redacted: Default::default(),
    }));
    approved
}
