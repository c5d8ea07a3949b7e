//! What `session/update` notifications do to the client: the streaming message (Markdown,
//! its finished lines to the scrollback), a thought folded to one line, the user's own
//! lines when a session is replayed, tool cards, the plan, commands, mode, usage, and the
//! end of a turn that steering started.

use ratatui::text::Line;
use serde_json::Value;

use super::app::{App, Flow};
use super::cards::{self, Card};
use super::rpc::Call;
use super::theme::Role;

impl App {
    /// Ends what is streaming: the message's last line, a thought folded to one line.
    pub fn end_flow(&mut self) {
        match self.flow {
            Flow::Agent => {
                let rest = self.stream.finish(&self.theme);
                self.out.extend(rest);
            }
            Flow::User => {
                let rest = self.stream.finish(&self.theme);
                self.out.extend(rest.into_iter().map(|l| {
                    let mut spans = vec![self.theme.span(Role::User, "› ")];
                    spans.extend(l.spans);
                    Line::from(spans)
                }));
            }
            Flow::Thought => {
                let thought = std::mem::take(&mut self.thought);
                let one: String = thought.split_whitespace().collect::<Vec<_>>().join(" ");
                let short: String = one.chars().take(100).collect();
                let more = if one.chars().count() > 100 { "…" } else { "" };
                self.say(Role::Comment, format!("✻ Thinking: {short}{more}"));
            }
            Flow::None => {}
        }
        self.flow = Flow::None;
    }

    fn flow_to(&mut self, flow: Flow) {
        if self.flow != flow {
            self.end_flow();
            if flow == Flow::User {
                self.out.push(Line::default());
            }
            self.flow = flow;
        }
    }

    pub(super) fn update(&mut self, u: &Value) {
        let text = u["content"]["text"].as_str().unwrap_or("");
        match u["sessionUpdate"].as_str().unwrap_or("") {
            "agent_message_chunk" => {
                self.flow_to(Flow::Agent);
                let lines = self.stream.push(text, &self.theme);
                self.out.extend(lines);
            }
            "user_message_chunk" => {
                self.flow_to(Flow::User);
                let lines = self.stream.push(text, &self.theme);
                self.out.extend(lines.into_iter().map(|l| {
                    let mut spans = vec![self.theme.span(Role::User, "› ")];
                    spans.extend(l.spans);
                    Line::from(spans)
                }));
            }
            "agent_thought_chunk" => {
                self.flow_to(Flow::Thought);
                self.thought.push_str(text);
            }
            "tool_call" => {
                self.end_flow();
                self.cards.push(Card::new(u));
                self.flush_cards(false);
            }
            "tool_call_update" => {
                let id = u["toolCallId"].as_str().unwrap_or("");
                if let Some(card) = self.cards.iter_mut().find(|c| c.id == id) {
                    card.update(u);
                }
                self.flush_cards(false);
            }
            "plan" => {
                self.end_flow();
                let entries = u["entries"].as_array().cloned().unwrap_or_default();
                self.out.extend(cards::plan_lines(&entries, &self.theme));
            }
            "available_commands_update" => {
                self.commands = u["availableCommands"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| {
                        Some((
                            c["name"].as_str()?.to_string(),
                            c["description"].as_str().unwrap_or("").to_string(),
                        ))
                    })
                    .collect();
            }
            "current_mode_update" => {
                if let Some(m) = u["currentModeId"].as_str() {
                    self.mode = m.to_string();
                }
            }
            "config_option_update" => self.config_options(&u["configOptions"]),
            "usage_update" => {
                if let (Some(used), Some(size)) = (u["used"].as_u64(), u["size"].as_u64()) {
                    self.used = Some((used, size));
                }
                if let Some(amount) = u["cost"]["amount"].as_f64() {
                    let currency = u["cost"]["currency"].as_str().unwrap_or("USD");
                    let sign =
                        if currency == "USD" { "$".to_string() } else { format!("{currency} ") };
                    self.cost = Some(format!("{sign}{amount:.4}"));
                }
            }
            "session_info_update" => {
                if let Some(t) = u["title"].as_str() {
                    self.title = Some(t.to_string());
                }
                if let Some(ended) = u.pointer("/_meta/iacCode/turnEnded") {
                    let reason = ended["stopReason"].as_str().map(str::to_string);
                    if !self.rpc.waiting(&Call::Prompt) {
                        self.turn_ended(reason.as_deref());
                    }
                }
            }
            _ => {}
        }
    }

    /// Prints finished cards into the scrollback (all of them at a turn's end).
    pub(super) fn flush_cards(&mut self, all: bool) {
        let mut kept = Vec::new();
        for card in std::mem::take(&mut self.cards) {
            if card.finished() || all {
                self.out.extend(card.lines(&self.theme, false));
            } else {
                kept.push(card);
            }
        }
        self.cards = kept;
    }
}
