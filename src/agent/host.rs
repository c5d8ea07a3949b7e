//! The turn as the gate's host (`crate::gate::Host`): the session's standing permissions
//! under its settings' lock, its rules, its asker, its cancel, its `webFetch` policy, its
//! vault, and the client told when a planned call's tier changes.

use super::Turn;
use super::event::AgentEvent;
use crate::cancel::CancelToken;
use crate::config::WebFetch;
use crate::gate::{Asker, Host, Standing};
use crate::infra::Tier;
use crate::rules::RuleSet;
use crate::sync::lock;

impl Host for Turn<'_> {
    fn standing<R>(&self, f: impl FnOnce(Standing<'_>) -> R) -> R {
        let mut settings = lock(self.settings);
        let settings = &mut *settings;
        f(Standing {
            mode: &mut settings.mode,
            always: &mut settings.always,
            unreviewed: &mut settings.unreviewed,
        })
    }
    fn rules(&self) -> &RuleSet {
        self.team.rules
    }
    fn asker(&self) -> &dyn Asker {
        self.client.asker
    }
    fn cancel(&self) -> &CancelToken {
        self.cancel
    }
    fn web_fetch(&self) -> WebFetch {
        self.limits.web_fetch
    }
    fn redact(&self, text: &str) -> String {
        self.record.vault.redact(text).0
    }
    fn retiered(&self, id: &str, tier: Tier) {
        self.client.sink.emit(AgentEvent::ToolTier { id: id.to_string(), tier });
    }
}
