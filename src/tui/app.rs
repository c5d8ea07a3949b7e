//! The client's state and what the agent's frames do to it: the session, its modes and
//! model, the streaming message, the tool cards, the questions, the usage. Everything to
//! keep is pushed to `out`, which the loop prints into the scrollback.

use ratatui::text::{Line, Span};
use serde_json::{Value, json};

use super::Options;
use super::cards::Card;
use super::input::{Editor, History};
use super::markdown::Stream;
use super::question::{Form, Question};
use super::rpc::{Call, Rpc};
use super::theme::{Role, Theme};

/// What is streaming now (a change of kind ends the previous one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    None,
    User,
    Agent,
    Thought,
}

/// The whole client.
pub struct App {
    pub theme: Theme,
    pub opts: Options,
    pub rpc: Rpc,
    pub out: Vec<Line<'static>>,
    pub session: Option<String>,
    pub modes: Vec<(String, String)>,
    pub mode: String,
    pub model: String,
    pub sandbox: String,
    pub used: Option<(u64, u64)>,
    pub cost: Option<String>,
    pub commands: Vec<(String, String)>,
    pub turn: bool,
    pub queued: Vec<String>,
    pub editor: Editor,
    pub history: History,
    /// Ctrl+R: the query and the entry found.
    pub search: Option<(String, Option<usize>)>,
    pub flow: Flow,
    pub stream: Stream,
    pub thought: String,
    pub cards: Vec<Card>,
    pub question: Option<Question>,
    pub form: Option<Form>,
    /// `/resume`: the sessions to choose from, and the one selected.
    pub picker: Option<(Vec<(String, String)>, usize)>,
    /// Ctrl+C pressed once on an empty input.
    pub armed: bool,
    pub notice: Option<String>,
    pub exit: Option<u8>,
    pub title: Option<String>,
}

impl App {
    pub fn new(opts: Options, rpc: Rpc, history: History) -> App {
        let theme = Theme { color: opts.color };
        App {
            theme,
            opts,
            rpc,
            out: Vec::new(),
            session: None,
            modes: Vec::new(),
            mode: String::new(),
            model: String::new(),
            sandbox: String::new(),
            used: None,
            cost: None,
            commands: Vec::new(),
            turn: false,
            queued: Vec::new(),
            editor: Editor::default(),
            history,
            search: None,
            flow: Flow::None,
            stream: Stream::default(),
            thought: String::new(),
            cards: Vec::new(),
            question: None,
            form: None,
            picker: None,
            armed: false,
            notice: None,
            exit: None,
            title: None,
        }
    }

    /// Starts: `initialize`, then a session is opened when it is answered.
    pub fn start(&mut self) {
        let params = json!({
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": false, "writeTextFile": false},
                "terminal": false,
                "elicitation": {"form": {}},
            },
            "clientInfo": {"name": "iac-code-tui", "title": "iac-code terminal", "version": env!("CARGO_PKG_VERSION")},
        });
        self.rpc.request("initialize", params, Call::Initialize);
    }

    /// One frame from the agent.
    pub fn frame(&mut self, frame: &Value) {
        let method = frame["method"].as_str();
        match (method, frame.get("id")) {
            (Some(method), Some(id)) => self.agent_request(method, id, &frame["params"]),
            (Some("session/update"), None) => self.update(&frame["params"]["update"]),
            (Some("$/cancel_request"), None) => {
                let id = &frame["params"]["requestId"];
                if self.question.as_ref().is_some_and(|q| &q.id == id) {
                    self.question = None;
                }
                if self.form.as_ref().is_some_and(|f| &f.id == id) {
                    self.form = None;
                }
            }
            (Some(_), None) => {}
            (None, Some(id)) => {
                if let Some(call) = self.rpc.take(id) {
                    self.answer(call, frame);
                }
            }
            (None, None) => {}
        }
    }

    fn agent_request(&mut self, method: &str, id: &Value, params: &Value) {
        match method {
            "session/request_permission" => {
                self.end_flow();
                let q = Question::new(id.clone(), params);
                self.out.extend(q.intro(&self.theme));
                self.question = Some(q);
            }
            "elicitation/create" => {
                self.end_flow();
                let form = Form::new(id.clone(), params);
                self.out.push(Line::from(vec![
                    self.theme.span(Role::Warn, "? The agent asks: "),
                    Span::raw(params["message"].as_str().unwrap_or("").to_string()),
                ]));
                self.form = Some(form);
            }
            _ => self.rpc.refuse(id, method),
        }
    }

    fn answer(&mut self, call: Call, frame: &Value) {
        let result = &frame["result"];
        if let Some(error) = frame.get("error") {
            let message = error["message"].as_str().unwrap_or("error").to_string();
            self.say(Role::Removed, format!("✗ {message}"));
            match call {
                Call::Prompt => self.turn_ended(None),
                // The message was not taken: it waits for the next prompt.
                Call::Steer(text) => self.retry_unsteered(text),
                Call::Initialize | Call::NewSession | Call::Load(_) | Call::ListContinue
                    if self.session.is_none() =>
                {
                    self.exit = Some(1);
                }
                _ => {}
            }
            return;
        }
        match call {
            Call::Initialize => {
                self.sandbox = sandbox_state(result.pointer("/_meta/iacCode/sandbox"));
                if let Some(id) = self.opts.resume.clone() {
                    self.load(&id);
                } else if self.opts.continue_last {
                    let cwd = self.opts.cwd.display().to_string();
                    self.rpc.request("session/list", json!({"cwd": cwd}), Call::ListContinue);
                } else {
                    let params = json!({"cwd": self.opts.cwd, "mcpServers": []});
                    self.rpc.request("session/new", params, Call::NewSession);
                }
            }
            Call::NewSession | Call::Load(_) => {
                if let Call::Load(id) = &call {
                    self.end_flow();
                    self.session = Some(id.clone());
                    self.say(Role::Dim, format!("— resumed session {id} —"));
                } else {
                    self.session = result["sessionId"].as_str().map(str::to_string);
                }
                self.session_state(result);
                if let Some(mode) = self.opts.mode.clone().filter(|m| *m != self.mode) {
                    self.set_mode(&mode);
                }
                if !self.turn && !self.queued.is_empty() {
                    let text = self.queued.remove(0);
                    self.prompt(&text);
                }
            }
            Call::SetMode(mode) => self.mode = mode,
            Call::Prompt => {
                let reason = result["stopReason"].as_str().map(str::to_string);
                self.turn_ended(reason.as_deref());
            }
            // The turn was finishing and took nothing more (`failed`), or had already ended
            // (`promptRequired`): the message is the next prompt.
            Call::Steer(text)
                if result["outcome"] == "failed" || result["outcome"] == "promptRequired" =>
            {
                self.notice = Some("The turn was ending: sent as the next prompt.".into());
                self.retry_unsteered(text);
            }
            Call::Steer(_) => {}
            Call::ListContinue => {
                let first = result["sessions"][0]["sessionId"].as_str().map(str::to_string);
                match first {
                    Some(id) => self.load(&id),
                    None => {
                        self.say(Role::Dim, "No earlier session here: a new one starts.".into());
                        let params = json!({"cwd": self.opts.cwd, "mcpServers": []});
                        self.rpc.request("session/new", params, Call::NewSession);
                    }
                }
            }
            Call::ListPicker => {
                let sessions: Vec<(String, String)> = result["sessions"]
                    .as_array()
                    .map(|all| {
                        all.iter()
                            .filter(|s| s["sessionId"].as_str() != self.session.as_deref())
                            .map(|s| {
                                let id = s["sessionId"].as_str().unwrap_or("").to_string();
                                let title = s["title"].as_str().unwrap_or("(untitled)").to_string();
                                (id, title)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                if sessions.is_empty() {
                    self.notice = Some("No other session in this directory.".into());
                } else {
                    self.picker = Some((sessions, 0));
                }
            }
        }
    }

    /// Modes, model and commands from a new or loaded session's answer.
    fn session_state(&mut self, result: &Value) {
        if let Some(modes) = result["modes"]["availableModes"].as_array() {
            self.modes = modes
                .iter()
                .filter_map(|m| {
                    Some((m["id"].as_str()?.to_string(), m["name"].as_str()?.to_string()))
                })
                .collect();
        }
        if let Some(mode) = result["modes"]["currentModeId"].as_str() {
            self.mode = mode.to_string();
        }
        self.config_options(&result["configOptions"]);
        if let Some(model) = result["models"]["currentModelId"].as_str() {
            self.model = model.to_string();
        }
    }

    pub(super) fn config_options(&mut self, options: &Value) {
        for option in options.as_array().into_iter().flatten() {
            if option["category"] == "model"
                && let Some(v) = option["currentValue"].as_str()
            {
                self.model = v.to_string();
            }
        }
    }

    pub fn load(&mut self, id: &str) {
        self.cards.clear();
        // The session from now on (what the exit names even before the replay ends).
        self.session = Some(id.to_string());
        let params = json!({"sessionId": id, "cwd": self.opts.cwd, "mcpServers": []});
        self.rpc.request("session/load", params, Call::Load(id.to_string()));
    }

    pub fn set_mode(&mut self, mode: &str) {
        if let Some(session) = &self.session {
            let params = json!({"sessionId": session, "modeId": mode});
            self.rpc.request("session/set_mode", params, Call::SetMode(mode.to_string()));
        }
    }

    /// Sends `text` as a prompt (or queues it until the session exists).
    pub fn prompt(&mut self, text: &str) {
        let Some(session) = self.session.clone() else {
            self.queued.push(text.to_string());
            return;
        };
        self.end_flow();
        self.echo_user(text);
        self.send_prompt(&session, text);
    }

    fn send_prompt(&mut self, session: &str, text: &str) {
        self.turn = true;
        let params = json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]});
        self.rpc.request("session/prompt", params, Call::Prompt);
    }

    /// A steering message the turn did not take (already echoed): sent as a prompt now if
    /// no turn runs, else first in the queue. Never a turn the client cannot see: a
    /// session found idle is not started by steering (`promptRequired`).
    fn retry_unsteered(&mut self, text: String) {
        match self.session.clone() {
            Some(session) if !self.turn => self.send_prompt(&session, &text),
            _ => self.queued.insert(0, text),
        }
    }

    /// Sends the queued messages to the running turn now.
    pub fn steer(&mut self) {
        let Some(session) = self.session.clone() else { return };
        if self.queued.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.queued).join("\n\n");
        self.end_flow();
        self.echo_user(&text);
        // A session already idle answers `promptRequired` instead of starting a turn the
        // client would learn of only by its updates.
        let params = json!({
            "sessionId": session,
            "prompt": text,
            "_meta": {"steering": {"idleBehavior": "promptRequired"}},
        });
        self.rpc.request("_session/steering", params, Call::Steer(text));
    }

    /// Interrupts the running turn: `session/cancel`, and the open question answered
    /// `cancelled`.
    pub fn interrupt(&mut self) {
        if let Some(q) = self.question.take() {
            self.rpc.respond(&q.id, json!({"outcome": {"outcome": "cancelled"}}));
        }
        if let Some(f) = self.form.take() {
            self.rpc.respond(&f.id, json!({"action": "cancel"}));
        }
        if let Some(session) = &self.session {
            self.rpc.notify("session/cancel", json!({"sessionId": session}));
        }
        self.notice = Some("Interrupting…".into());
    }

    fn echo_user(&mut self, text: &str) {
        self.out.push(Line::default());
        for (i, line) in text.lines().enumerate() {
            let mark = if i == 0 { "› " } else { "  " };
            self.out.push(Line::from(vec![
                self.theme.span(Role::User, mark),
                Span::raw(line.to_string()),
            ]));
        }
        self.out.push(Line::default());
    }

    pub(super) fn turn_ended(&mut self, reason: Option<&str>) {
        self.end_flow();
        self.flush_cards(true);
        self.turn = false;
        self.notice = None;
        match reason {
            Some("cancelled") => self.say(Role::Warn, "⏹ Interrupted".into()),
            Some("end_turn") | None => {}
            Some(other) => self.say(Role::Warn, format!("(stopped: {other})")),
        }
        if !self.queued.is_empty() {
            let text = self.queued.remove(0);
            self.prompt(&text);
        }
    }

    pub fn say(&mut self, role: Role, text: String) {
        self.out.push(Line::from(self.theme.span(role, text)));
    }
}

/// `initialize`'s `_meta.iacCode.sandbox` in a few words.
fn sandbox_state(meta: Option<&Value>) -> String {
    match meta {
        Some(m) if m["off"] == true => "sandbox off".into(),
        Some(m) if m["usable"] == true => "sandboxed".into(),
        Some(_) => "no sandbox".into(),
        None => String::new(),
    }
}

#[cfg(test)]
#[path = "app_tests.rs"]
mod tests;
