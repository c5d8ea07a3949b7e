//! Permission rules a team writes (`bash(terraform plan*)`, `write_file(*.tf)`,
//! `web_fetch(domain:registry.terraform.io)`, `mcp__docs__*`) and the verdict a set of
//! them gives one tool call: deny over ask over allow. Pure: reads no file, no variable,
//! imports nothing of the crate (where rules come from is `config`'s business, what a
//! verdict does is `permission`'s).
//!
//! A bash call is judged command by command: the caller passes each simple command as a
//! normalised line (`git status`), and the raw text when it could not parse the whole
//! command. Allow needs every command allowed and the whole understood; deny and ask need
//! one match, and for text not understood a deny or ask rule also matches when the
//! pattern's literal prefix occurs anywhere in it, or when a command with hidden parts
//! (given as a pattern, `* M` for `$t M`) may be one the rule matches.

mod parse;
mod pattern;

use std::fmt;
use std::path::PathBuf;

pub use parse::{BUILTIN_TOOLS, split_list};
pub use pattern::{CommandPattern, Domain, PathPattern};

/// What a rule says about the calls it matches. Ordered by strength: `Deny` wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Run without asking.
    Allow,
    /// Ask the user, whatever else would allow it.
    Ask,
    /// Refuse.
    Deny,
}

impl Verdict {
    /// `allow`, `ask` or `deny`: the settings key that lists such rules.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        }
    }
}

/// Where a rule was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The user's `settings.json`.
    User(PathBuf),
    /// A project's `.iac-code/settings.json`.
    Project(PathBuf),
    /// A command-line flag (`--allowed-tools`).
    Flag(&'static str),
    /// An environment variable (`IAC_CODE_ALLOWED_TOOLS`).
    Env(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::User(path) | Source::Project(path) => write!(f, "{}", path.display()),
            Source::Flag(name) | Source::Env(name) => write!(f, "{name}"),
        }
    }
}

/// What a rule matches inside a tool's calls (the text in its parentheses).
#[derive(Debug, Clone)]
pub enum Spec {
    /// bash: a pattern over each simple command.
    Command(CommandPattern),
    /// File tools: a glob over each path.
    Path(PathPattern),
    /// web_fetch: a host and its subdomains.
    Domain(Domain),
}

/// One rule as written, compiled.
#[derive(Debug, Clone)]
pub struct Rule {
    pub verdict: Verdict,
    /// Our tool name (`bash`, `write_file`), or a glob over MCP tool names
    /// (`mcp__srv__*`).
    pub tool: String,
    /// What it matches inside the calls; `None`: every call of the tool.
    pub spec: Option<Spec>,
    /// The rule as written (trimmed).
    pub text: String,
    pub source: Source,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} rule '{}' ({})", self.verdict.name(), self.text, self.source)
    }
}

/// One tool call as the rules see it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Subject<'a> {
    /// The tool's name (`bash`, `mcp__srv__tool`).
    pub tool: &'a str,
    /// bash: each simple command as a normalised line (`git status`).
    pub commands: &'a [String],
    /// bash: the raw command when it was not parsed whole.
    pub opaque: Option<&'a str>,
    /// bash: the commands not known word for word, as patterns (`*` for each hidden part:
    /// `$t M` → "* M"); a deny or ask rule matches one when some command it stands for
    /// matches the rule.
    pub patterns: &'a [String],
    /// File tools: the paths, relative to the cwd (`infra/main.tf`), absolute outside it.
    pub paths: &'a [String],
    /// web_fetch: the host.
    pub host: Option<&'a str>,
}

/// Rules from every source, judged together.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

impl RuleSet {
    /// A set of `rules`.
    pub fn new(rules: Vec<Rule>) -> RuleSet {
        RuleSet { rules }
    }

    /// Every rule, in the order added.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether there is no rule.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Adds `other`'s rules after these.
    pub fn extend(&mut self, other: RuleSet) {
        self.rules.extend(other.rules);
    }

    /// The verdict on `s` and the rule that gave it: `Deny` if any deny rule matches any
    /// command, path or host (for a bash command not parsed whole, a deny or ask rule also
    /// matches when its pattern's literal prefix occurs in the raw text); else `Ask` if
    /// any ask rule matches; else `Allow` only if every command (bash) or every path (file
    /// tools) is matched by some allow rule and the command was parsed whole (an empty
    /// list never allows; a rule naming the tool alone allows every call); else `None`.
    /// Allow looks at a call's commands if it has any, else its paths, else its host.
    pub fn verdict(&self, s: &Subject) -> Option<(Verdict, &Rule)> {
        let of = |verdict: Verdict| {
            self.rules.iter().filter(move |r| r.verdict == verdict && r.tool_matches(s.tool))
        };
        if let Some(rule) = of(Verdict::Deny).find(|r| r.matches_any(s)) {
            return Some((Verdict::Deny, rule));
        }
        if let Some(rule) = of(Verdict::Ask).find(|r| r.matches_any(s)) {
            return Some((Verdict::Ask, rule));
        }
        if let Some(rule) = of(Verdict::Allow).find(|r| r.spec.is_none()) {
            return Some((Verdict::Allow, rule));
        }
        let items: Vec<String> = if !s.commands.is_empty() {
            if s.opaque.is_some() {
                return None;
            }
            s.commands.iter().map(|c| pattern::normalise(c)).collect()
        } else if !s.paths.is_empty() {
            s.paths.to_vec()
        } else {
            return s.host.and_then(|host| {
                of(Verdict::Allow).find(|r| r.spec_matches(&Item::Host(host))).map(allow)
            });
        };
        let is_command = !s.commands.is_empty();
        let mut first = None;
        for item in &items {
            let item = if is_command { Item::Command(item) } else { Item::Path(item) };
            let rule = of(Verdict::Allow).find(|r| r.spec_matches(&item))?;
            first.get_or_insert(rule);
        }
        first.map(allow)
    }
}

fn allow(rule: &Rule) -> (Verdict, &Rule) {
    (Verdict::Allow, rule)
}

/// One thing of a call a spec is matched against.
enum Item<'a> {
    Command(&'a str),
    Path(&'a str),
    Host(&'a str),
}

impl Rule {
    /// Whether the rule matches the call `s` as a deny or ask rule would (its tool, and
    /// one of its commands, paths or host, or the raw text of a command not parsed
    /// whole): what a hook's matcher, a rule outside any list, asks.
    pub fn matches(&self, s: &Subject) -> bool {
        self.tool_matches(s.tool) && self.matches_any(s)
    }

    /// Whether the rule's tool is `tool` (or, for an MCP glob, covers it).
    fn tool_matches(&self, tool: &str) -> bool {
        if self.tool.contains('*') {
            pattern::name_matches(&self.tool, tool)
        } else {
            self.tool == tool
        }
    }

    /// Whether the rule matches some part of `s` (deny and ask: one match is enough).
    fn matches_any(&self, s: &Subject) -> bool {
        let Some(spec) = &self.spec else { return true };
        if let (Spec::Command(pattern), Some(raw)) = (spec, s.opaque)
            && pattern.occurs_in(raw)
        {
            return true;
        }
        if let Spec::Command(pattern) = spec
            && s.patterns.iter().any(|p| pattern.meets(&pattern::normalise(p)))
        {
            return true;
        }
        s.commands.iter().any(|c| self.spec_matches(&Item::Command(&pattern::normalise(c))))
            || s.paths.iter().any(|p| self.spec_matches(&Item::Path(p)))
            || s.host.is_some_and(|h| self.spec_matches(&Item::Host(h)))
    }

    /// Whether the rule's spec matches `item` (a rule without one matches nothing here).
    fn spec_matches(&self, item: &Item) -> bool {
        match (&self.spec, item) {
            (Some(Spec::Command(p)), Item::Command(line)) => p.matches(line),
            (Some(Spec::Path(p)), Item::Path(path)) => p.matches(path),
            (Some(Spec::Domain(d)), Item::Host(host)) => d.matches(host),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests;
