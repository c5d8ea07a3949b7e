//! What a running call may still have to ask: whether it may reach a network target that
//! could not be judged before it ran (a `web_fetch` host or redirect hop), and a choice of the
//! tool's own (`exit_plan_mode`). Implemented by the agent loop; tools never import `agent`.

/// A network target a call is about to reach.
#[derive(Debug, Clone)]
pub struct HostReach {
    /// The whole URL, for the question's title.
    pub url: String,
    /// The host name (or address) as written in the URL.
    pub host: String,
    /// Why the target is internal (loopback, private, link-local, metadata …), if it is.
    pub internal: Option<String>,
}

/// One answer of a question a tool puts to the user.
#[derive(Debug, Clone, Copy)]
pub struct Choice {
    pub id: &'static str,
    /// What the user reads.
    pub name: &'static str,
    /// How the client shows it: an "always" kind of yes, a plain yes, or a no.
    pub kind: ChoiceKind,
}

/// How a client shows a choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChoiceKind {
    AllowAlways,
    AllowOnce,
    Reject,
}

/// A gate for contexts where no call runs (titles of replayed calls): nothing is reached.
pub struct NoNetwork;

impl NetworkGate for NoNetwork {
    fn reach(&self, _target: &HostReach) -> Result<(), String> {
        Err("no network access here".to_string())
    }
}

/// Decides whether a running call may reach a network target, asking the user if the
/// session's policy says so. Implemented by the agent loop (tools never import `agent`).
pub trait NetworkGate {
    /// `Ok` to go on; `Err` carries the message for the model.
    fn reach(&self, target: &HostReach) -> Result<(), String>;

    /// `Err` when no target may be reached at all, asked before any name is resolved.
    fn open(&self) -> Result<(), String> {
        Ok(())
    }

    /// Asks the user to pick one of `options` about the running call: the id picked, or
    /// `None` when the user declined or nobody could be asked. `Err` when the question
    /// cannot be put now (the message is for the model).
    fn choose(&self, _title: &str, _options: &[Choice]) -> Result<Option<&'static str>, String> {
        Err("nobody can be asked here".to_string())
    }
}
