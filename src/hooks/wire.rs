//! The JSON document a hook reads on stdin. Its field names are Claude Code's, so that hook
//! scripts teams already have keep working: `session_id`, `transcript_path` (when the
//! session's journal is a file), `cwd`, `permission_mode`, `hook_event_name`, and per
//! event `tool_name`, `tool_input` and `tool_use_id` (`PreToolUse`), with `tool_response`
//! and `status` (`PostToolUse`), `prompt` (`UserPromptSubmit`), `stop_hook_active`
//! (`Stop`), `source` (`SessionStart`). Tool names and inputs are ours (`bash`,
//! `write_file` with `path`). The one serde struct of hooks; it never leaves `hooks/`.

use serde::Serialize;
use serde_json::Value;

use crate::config::hooks::Event;

/// What is the same for every event of a session.
#[derive(Debug, Clone, Copy)]
pub struct Common<'a> {
    pub session_id: &'a str,
    pub transcript_path: Option<&'a str>,
    pub cwd: &'a str,
    /// The session's mode id (`default`, `accept_edits`, `plan`, `bypass_permissions`).
    pub permission_mode: Option<&'a str>,
}

/// What one event is about.
#[derive(Debug, Clone, Copy)]
pub enum About<'a> {
    PreToolUse {
        tool_name: &'a str,
        tool_input: &'a Value,
        tool_use_id: &'a str,
    },
    PostToolUse {
        tool_name: &'a str,
        tool_input: &'a Value,
        tool_use_id: &'a str,
        tool_response: &'a Value,
        /// Whether the call succeeded.
        ok: bool,
    },
    UserPromptSubmit {
        prompt: &'a str,
    },
    Stop {
        stop_hook_active: bool,
    },
    SessionStart {
        source: &'a str,
    },
}

impl About<'_> {
    /// The event this is about.
    pub fn event(&self) -> Event {
        match self {
            About::PreToolUse { .. } => Event::PreToolUse,
            About::PostToolUse { .. } => Event::PostToolUse,
            About::UserPromptSubmit { .. } => Event::UserPromptSubmit,
            About::Stop { .. } => Event::Stop,
            About::SessionStart { .. } => Event::SessionStart,
        }
    }
}

#[derive(Serialize)]
struct Document<'a> {
    session_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    transcript_path: Option<&'a str>,
    cwd: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    permission_mode: Option<&'a str>,
    hook_event_name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_input: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_use_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_response: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stop_hook_active: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a str>,
}

/// The document for `about` in the session `common`, as bytes for the hook's stdin.
pub fn document(common: &Common, about: &About) -> Vec<u8> {
    let mut doc = Document {
        session_id: common.session_id,
        transcript_path: common.transcript_path,
        cwd: common.cwd,
        permission_mode: common.permission_mode,
        hook_event_name: about.event().name(),
        tool_name: None,
        tool_input: None,
        tool_use_id: None,
        tool_response: None,
        status: None,
        prompt: None,
        stop_hook_active: None,
        source: None,
    };
    match *about {
        About::PreToolUse { tool_name, tool_input, tool_use_id } => {
            doc.tool_name = Some(tool_name);
            doc.tool_input = Some(with_aliases(tool_input));
            doc.tool_use_id = Some(tool_use_id);
        }
        About::PostToolUse { tool_name, tool_input, tool_use_id, tool_response, ok } => {
            doc.tool_name = Some(tool_name);
            doc.tool_input = Some(with_aliases(tool_input));
            doc.tool_use_id = Some(tool_use_id);
            doc.tool_response = Some(tool_response);
            doc.status = Some(if ok { "success" } else { "error" });
        }
        About::UserPromptSubmit { prompt } => doc.prompt = Some(prompt),
        About::Stop { stop_hook_active } => doc.stop_hook_active = Some(stop_hook_active),
        About::SessionStart { source } => doc.source = Some(source),
    }
    let mut bytes = serde_json::to_vec(&doc).unwrap_or_else(|_| b"{}".to_vec());
    bytes.push(b'\n');
    bytes
}

/// A tool's input as Claude Code's scripts read it too: a file tool's `path` is also
/// given as `file_path` (what `jq -r .tool_input.file_path` expects).
fn with_aliases(input: &Value) -> Value {
    let mut input = input.clone();
    if let Value::Object(map) = &mut input
        && let Some(path) = map.get("path").filter(|p| p.is_string()).cloned()
    {
        map.entry("file_path").or_insert(path);
    }
    input
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parsed(about: About) -> Value {
        let common = Common {
            session_id: "s1",
            transcript_path: None,
            cwd: "/p",
            permission_mode: Some("default"),
        };
        serde_json::from_slice(&document(&common, &about)).unwrap()
    }

    #[test]
    fn each_event_carries_claude_codes_fields() {
        let input = json!({"command": "terraform apply"});
        let pre = parsed(About::PreToolUse {
            tool_name: "bash",
            tool_input: &input,
            tool_use_id: "call_1",
        });
        assert_eq!(
            pre,
            json!({"session_id": "s1", "cwd": "/p", "permission_mode": "default",
                   "hook_event_name": "PreToolUse", "tool_name": "bash",
                   "tool_input": {"command": "terraform apply"}, "tool_use_id": "call_1"})
        );
        let response = json!({"output": "done"});
        let post = parsed(About::PostToolUse {
            tool_name: "bash",
            tool_input: &input,
            tool_use_id: "call_1",
            tool_response: &response,
            ok: false,
        });
        assert_eq!(post["tool_response"], response);
        assert_eq!(post["status"], "error");
        assert_eq!(post["hook_event_name"], "PostToolUse");
        assert_eq!(parsed(About::UserPromptSubmit { prompt: "hi" })["prompt"], "hi");
        let stop = parsed(About::Stop { stop_hook_active: true });
        assert_eq!(stop["stop_hook_active"], true);
        assert!(stop.get("tool_name").is_none());
        assert_eq!(parsed(About::SessionStart { source: "resume" })["source"], "resume");
    }

    #[test]
    fn a_file_tools_path_is_also_its_file_path() {
        let input = json!({"path": "main.tf", "content": "x"});
        let pre = parsed(About::PreToolUse {
            tool_name: "write_file",
            tool_input: &input,
            tool_use_id: "c",
        });
        assert_eq!(pre["tool_input"]["file_path"], "main.tf");
        assert_eq!(pre["tool_input"]["path"], "main.tf");
        let given = json!({"path": "a.tf", "file_path": "b.tf"});
        let kept =
            parsed(About::PreToolUse { tool_name: "x", tool_input: &given, tool_use_id: "c" });
        assert_eq!(kept["tool_input"]["file_path"], "b.tf", "never overwritten");
    }
}
