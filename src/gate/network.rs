//! The gate for what a running call meets (web_fetch hosts and redirect hops),
//! `exit_plan_mode`'s choice and `ask_user`'s form: the session's mode and `webFetch`
//! policy, and a question when needed.

use super::Always;
use super::{Answer, CANCELLED_RESULT, DENIED, Decision, Host, Mode, Question};
use crate::config::WebFetch;
use crate::tools::{Choice, ChoiceKind, Elicitation, Elicited, HostReach, NetworkGate, ToolKind};

/// Why every fetch is refused under `webFetch = deny`.
pub const DENY_ALL: &str = "web_fetch is turned off here (webFetch = deny); do without the page.";

/// Whether the `webFetch` policy refuses every fetch, before any name is even resolved.
pub fn network_refused(policy: WebFetch) -> Option<&'static str> {
    (policy == WebFetch::Deny).then_some(DENY_ALL)
}

/// Decides whether `web_fetch` may reach `host` now. Internal targets (loopback, private,
/// link-local, metadata …) ask every time, never "always", and are refused in plan mode;
/// public ones follow the `webFetch` policy, where "always" remembers the host.
pub fn decide_network(
    mode: Mode,
    always: &Always,
    policy: WebFetch,
    host: &str,
    internal: Option<&str>,
) -> Decision {
    let host = host.to_ascii_lowercase();
    if policy == WebFetch::Deny {
        return Decision::Deny(DENY_ALL.to_string());
    }
    if let Some(why) = internal {
        return match mode {
            Mode::Plan => Decision::Deny(format!(
                "Plan mode does not reach internal addresses: {host} is {why}. Ask the user \
                 to switch modes if this fetch is meant."
            )),
            Mode::BypassPermissions => Decision::Allow,
            Mode::Default | Mode::AcceptEdits => Decision::Ask { offer_always: false },
        };
    }
    match policy {
        WebFetch::Deny => Decision::Deny(DENY_ALL.to_string()),
        WebFetch::Allow => Decision::Allow,
        WebFetch::Ask if always.rejects_host(&host) => Decision::Deny(DENIED.to_string()),
        WebFetch::Ask if always.allows_host(&host) => Decision::Allow,
        WebFetch::Ask if mode == Mode::BypassPermissions => Decision::Allow,
        WebFetch::Ask => Decision::Ask { offer_always: true },
    }
}

/// The permission gate for network targets a running call meets (web_fetch hosts and
/// redirect hops): the session's mode and `webFetch` policy, and a question when needed.
pub struct Network<'t, H: Host> {
    /// The session.
    pub host: &'t H,
    /// The call that meets the targets.
    pub id: &'t str,
}

impl<H: Host> NetworkGate for Network<'_, H> {
    fn choose(&self, title: &str, options: &[Choice]) -> Result<Option<&'static str>, String> {
        if self.host.standing(|s| *s.mode) != Mode::Plan {
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
        let answer = self.host.asker().ask(&question, self.host.cancel());
        if answer == Answer::Cancelled && self.host.cancel().is_cancelled() {
            return Err(CANCELLED_RESULT.to_string());
        }
        Ok(options.iter().find(|c| answer_of(c.kind) == answer && answer.allows()).map(|c| c.id))
    }

    fn elicit(&self, request: &Elicitation) -> Result<Elicited, String> {
        let answer = self.host.asker().elicit(self.id, request, self.host.cancel());
        if self.host.cancel().is_cancelled() {
            return Err(CANCELLED_RESULT.to_string());
        }
        Ok(answer)
    }

    fn open(&self) -> Result<(), String> {
        match network_refused(self.host.web_fetch()) {
            Some(why) => Err(why.to_string()),
            None => Ok(()),
        }
    }

    fn reach(&self, target: &HostReach) -> Result<(), String> {
        let policy = self.host.web_fetch();
        let decision = self.host.standing(|s| {
            decide_network(*s.mode, s.always, policy, &target.host, target.internal.as_deref())
        });
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
        let answer = self.host.asker().ask(&question, self.host.cancel());
        if offer_always {
            self.host.standing(|s| s.always.record_host(&target.host, answer));
        }
        match answer {
            _ if answer.allows() => Ok(()),
            Answer::Cancelled if self.host.cancel().is_cancelled() => Err(CANCELLED_RESULT.into()),
            _ => Err(DENIED.to_string()),
        }
    }
}
