//! What a call is before it runs, as the gate judges it and the client is shown it: its
//! title, the paths it touches (`Invocation`), and for a shell command what the gate
//! knows besides its paths (`Gate`: tier, lines for the rules, the plan shown). Plain
//! data: the gate (`crate::gate`) fills it, the tools run by it.

use std::path::PathBuf;
use std::time::Duration;

use super::Target;
use crate::infra::Tier;

/// The shell command a call runs, as its tool reads its arguments.
#[derive(Debug, Clone)]
pub struct Command<'a> {
    /// The command text, as the model wrote it.
    pub text: &'a str,
    /// How long it may run; `Err`: the arguments ask for an impossible timeout.
    pub timeout: Result<Duration, String>,
}

/// How a particular call will be presented before it runs.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// Human title, e.g. "Read main.tf".
    pub title: String,
    /// Absolute paths the call touches, with an optional line.
    pub locations: Vec<(PathBuf, Option<u32>)>,
    /// Whether a touched path lies outside the session cwd (judged on the real path), or
    /// could not be judged.
    pub outside_cwd: bool,
    /// Why a touched path is sensitive (credentials, `.git` internals, ...), if it is.
    pub sensitive: Option<String>,
    /// The touched paths as judged; the call opens exactly these.
    pub targets: Vec<Target>,
    /// What the infrastructure gate knows of it besides its paths.
    pub gate: Gate,
}

impl Invocation {
    /// A call that touches no path.
    pub fn plain(title: impl Into<String>) -> Invocation {
        Invocation {
            title: title.into(),
            locations: Vec::new(),
            outside_cwd: false,
            sensitive: None,
            targets: Vec::new(),
            gate: Gate::default(),
        }
    }

    /// The invocation of a call that writes its targets: one that an approved program
    /// runs asks like a sensitive file (`Target::writing`).
    pub(crate) fn writing(mut self) -> Invocation {
        self.targets = self.targets.into_iter().map(Target::writing).collect();
        self.sensitive = self.targets.iter().find_map(|t| t.sensitive.clone());
        self
    }
}

/// What the permission gate knows of a call besides its paths: a command's tier and
/// prefixes, what it writes and runs, what the question shows.
#[derive(Debug, Clone, Default)]
pub struct Gate {
    /// A command's tier (`bash`); `None` for other tools.
    pub tier: Option<Tier>,
    /// Why the tier is what it is (for the question's title).
    pub reasons: Vec<String>,
    /// What an "always" answer remembers (`terraform fmt`); `None`: not offered.
    pub prefixes: Option<Vec<String>>,
    /// Each command as one line, for the team's rules.
    pub lines: Vec<String>,
    /// The commands with hidden parts as patterns, for the team's deny and ask rules.
    pub patterns: Vec<String>,
    /// The raw command when it was not understood whole, for the team's deny rules.
    pub opaque: Option<String>,
    /// Its mutations only write files (accept_edits may run it inside the project).
    pub file_only: bool,
    /// Files it writes (remembered as unreviewed when no person answered).
    pub written: Vec<PathBuf>,
    /// Directories whose files it runs as code.
    pub runs_code_in: Vec<PathBuf>,
    /// Why the tool refuses the call in every mode.
    pub refused: Option<String>,
    /// Shown with the question (Markdown): a plan's summary, what the command acts on.
    pub content: Vec<String>,
    /// What runs if the call is allowed, in place of its own command (the plan's apply).
    pub prepared: Option<String>,
    /// Scratch files of the call (a saved plan), removed when it ends.
    pub scratch: Vec<PathBuf>,
    /// A lone terraform apply or destroy, planned before the question.
    pub terraform: Option<crate::infra::TfCall>,
    /// The saved plan shown in the question, byte for byte (`verify`).
    pub shown_plan: Option<(PathBuf, Vec<u8>)>,
    /// The highest tier of the infrastructure clients of a command understood whole whose
    /// other commands only read (`infra::Classified::cloud`): what the sandbox may give
    /// the network and the credentials.
    pub cloud: Option<Tier>,
    /// The command was understood whole (nothing opaque, no hidden program).
    pub whole: bool,
    /// The placeholders whose secret values the call gets (`agent/tool_call.rs`): such a
    /// call is asked, in every mode, and what it writes stays unreviewed.
    pub restores: Vec<String>,
    /// Added to the call's result (the team's policies' warnings).
    pub notes: Vec<String>,
}

impl Gate {
    /// Before the call runs: the saved plan on disk is still, byte for byte, the one the
    /// question showed (a process of the session could have replaced it meanwhile).
    pub fn verify(&self) -> Result<(), String> {
        let Some((path, shown)) = &self.shown_plan else { return Ok(()) };
        match std::fs::read(path) {
            Ok(now) if now == *shown => Ok(()),
            _ => Err("The saved plan changed on disk after it was shown: nothing was applied. \
                      Run the command again to see a new plan."
                .to_string()),
        }
    }
}
