//! The permission gate for network targets a running call meets (web_fetch hosts and
//! redirect hops), `exit_plan_mode`'s choice and `ask_user`'s form: the session's mode and
//! `webFetch` policy, and a question when needed.

use super::{CANCELLED_RESULT, Turn};
use crate::permission::{self, Answer, Decision, Question};
use crate::sync::lock;
use crate::tools::{Choice, ChoiceKind, Elicitation, Elicited, HostReach, NetworkGate, ToolKind};

/// The permission gate for network targets a running call meets (web_fetch hosts and
/// redirect hops): the session's mode and `webFetch` policy, and a question when needed.
pub(super) struct Network<'t> {
    pub(super) turn: &'t Turn<'t>,
    pub(super) id: &'t str,
}

impl NetworkGate for Network<'_> {
    fn choose(&self, title: &str, options: &[Choice]) -> Result<Option<&'static str>, String> {
        if lock(self.turn.settings).mode != permission::Mode::Plan {
            return Err("not in plan mode: nothing to leave".to_string());
        }
        let answer_of = |kind: ChoiceKind| match kind {
            ChoiceKind::AllowAlways => Answer::AllowAlways,
            ChoiceKind::AllowOnce => Answer::AllowOnce,
            ChoiceKind::Reject => Answer::RejectOnce,
        };
        let question = Question {
            tool_call_id: self.id.to_string(),
            tool: "exit_plan_mode".to_string(),
            title: title.to_string(),
            kind: ToolKind::SwitchMode,
            input: serde_json::json!({}),
            locations: Vec::new(),
            offer_always: false,
            remembers: None,
            content: Vec::new(),
            tier: None,
            choices: options
                .iter()
                .map(|c| (c.id, c.name.to_string(), answer_of(c.kind)))
                .collect(),
        };
        let answer = self.turn.asker.ask(&question, self.turn.cancel);
        if answer == Answer::Cancelled && self.turn.cancel.is_cancelled() {
            return Err(CANCELLED_RESULT.to_string());
        }
        Ok(options.iter().find(|c| answer_of(c.kind) == answer && answer.allows()).map(|c| c.id))
    }

    fn elicit(&self, request: &Elicitation) -> Result<Elicited, String> {
        let answer = self.turn.asker.elicit(self.id, request, self.turn.cancel);
        if self.turn.cancel.is_cancelled() {
            return Err(CANCELLED_RESULT.to_string());
        }
        Ok(answer)
    }

    fn open(&self) -> Result<(), String> {
        match permission::network_refused(self.turn.limits.web_fetch) {
            Some(why) => Err(why.to_string()),
            None => Ok(()),
        }
    }

    fn reach(&self, target: &HostReach) -> Result<(), String> {
        let decision = {
            let settings = lock(self.turn.settings);
            permission::decide_network(
                settings.mode,
                &settings.always,
                self.turn.limits.web_fetch,
                &target.host,
                target.internal.as_deref(),
            )
        };
        let offer_always = match decision {
            Decision::Allow => return Ok(()),
            Decision::Deny(message) => return Err(message),
            Decision::Ask { offer_always } => offer_always,
        };
        let why = match &target.internal {
            Some(why) => format!("{} is {why}", target.host),
            None => format!("first request to {}", target.host),
        };
        let question = Question {
            tool_call_id: self.id.to_string(),
            tool: "web_fetch".to_string(),
            title: format!("Fetch {} ({why})", target.url),
            kind: ToolKind::Fetch,
            input: serde_json::json!({"url": target.url}),
            locations: Vec::new(),
            offer_always,
            remembers: None,
            content: Vec::new(),
            tier: None,
            choices: Vec::new(),
        };
        let answer = self.turn.asker.ask(&question, self.turn.cancel);
        if offer_always {
            lock(self.turn.settings).always.record_host(&target.host, answer);
        }
        match answer {
            _ if answer.allows() => Ok(()),
            Answer::Cancelled if self.turn.cancel.is_cancelled() => Err(CANCELLED_RESULT.into()),
            _ => Err(permission::DENIED.to_string()),
        }
    }
}
