//! What a running call may still have to ask: whether it may reach a network target that
//! could not be judged before it ran (a `web_fetch` host or redirect hop), a choice of the
//! tool's own (`exit_plan_mode`), and a question with a form (`ask_user`). Implemented by
//! the agent loop; tools never import `agent`.

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

    /// Puts a question with a form to the user about the running call (`ask_user`) and
    /// waits for the answer. `Err` when the turn was cancelled meanwhile, or the question
    /// cannot be put here (the message is for the model).
    fn elicit(&self, _request: &Elicitation) -> Result<Elicited, String> {
        Err("nobody can be asked here".to_string())
    }
}

/// A question with a form for the user.
#[derive(Debug, Clone, Copy)]
pub struct Elicitation<'a> {
    /// What the user reads.
    pub message: &'a str,
    /// The form: the `requestedSchema` (an object of string, number, integer and boolean
    /// fields), as `tools::form` builds it.
    pub schema: &'a serde_json::Value,
}

/// How a question with a form was answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicited {
    /// The user filled the form in (not yet checked against it).
    Accepted(serde_json::Map<String, serde_json::Value>),
    /// The user said no.
    Declined,
    /// The user dismissed it without a choice.
    Cancelled,
    /// Nobody can render a form here (the client offers no elicitation): the question is
    /// shown as text instead and the turn ends.
    Unsupported,
}

/// The client's own file system, when it offers one (`fs/read_text_file`,
/// `fs/write_text_file`): what the editor has, unsaved changes included. Our path rules are
/// applied before it is asked; its errors reach the model, never a silent local fallback.
pub trait ClientTools: Send + Sync {
    /// Whether reads go to the client.
    fn reads(&self) -> bool;
    /// Whether writes go to the client.
    fn writes(&self) -> bool;
    /// `limit` lines of `path` from `line` (1-based), or all of it.
    fn read(
        &self,
        path: &std::path::Path,
        line: Option<u32>,
        limit: Option<u32>,
        cancel: &crate::cancel::CancelToken,
    ) -> Result<String, String>;
    /// Replaces `path` with `content` (the client creates it if missing).
    fn write(
        &self,
        path: &std::path::Path,
        content: &str,
        cancel: &crate::cancel::CancelToken,
    ) -> Result<(), String>;
    /// Whether commands run in the client's terminals.
    fn terminals(&self) -> bool {
        false
    }
    /// Runs `bash -c command` (`tools::shell`) in a client terminal in `cwd` with `env` added, calling
    /// `started` with the terminal id at once; kills it at `timeout` or a cancel, and always
    /// releases it. `Err` for a client failure, or "cancelled".
    fn run(
        &self,
        _command: &TerminalCommand,
        _cancel: &crate::cancel::CancelToken,
        _started: &dyn Fn(&str),
    ) -> Result<TerminalRun, String> {
        Err("the client offers no terminal".to_string())
    }
}

/// No client file system: every file tool works on the local disk.
pub struct NoClientTools;

impl ClientTools for NoClientTools {
    fn reads(&self) -> bool {
        false
    }
    fn writes(&self) -> bool {
        false
    }
    fn read(
        &self,
        _: &std::path::Path,
        _: Option<u32>,
        _: Option<u32>,
        _: &crate::cancel::CancelToken,
    ) -> Result<String, String> {
        Err("the client offers no file system".to_string())
    }
    fn write(
        &self,
        _: &std::path::Path,
        _: &str,
        _: &crate::cancel::CancelToken,
    ) -> Result<(), String> {
        Err("the client offers no file system".to_string())
    }
}

/// A command to run in the client's terminal.
#[derive(Debug)]
pub struct TerminalCommand<'a> {
    /// For `bash -c`.
    pub command: &'a str,
    pub cwd: &'a std::path::Path,
    /// Added to the terminal's environment.
    pub env: &'a [(&'a str, &'a str)],
    /// Bytes of output the client keeps.
    pub output_limit: u64,
    /// Killed after this long.
    pub timeout: std::time::Duration,
}

/// How a command run in the client's terminal ended.
#[derive(Debug, Clone)]
pub struct TerminalRun {
    /// The client's id of the terminal.
    pub terminal: String,
    /// What it printed (the client's capture, stdout and stderr together).
    pub output: String,
    /// The client cut the output at the byte limit.
    pub truncated: bool,
    /// Its exit code, if it exited.
    pub exit_code: Option<i64>,
    /// The signal that ended it, if one did.
    pub signal: Option<String>,
    /// It ran past the timeout and was killed.
    pub timed_out: bool,
}
