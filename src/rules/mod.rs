//! STUB
use std::path::PathBuf;
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Allow,
    Ask,
    Deny,
}
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    User(PathBuf),
    Project(PathBuf),
    Flag(&'static str),
    Env(&'static str),
}
#[derive(Debug, Clone)]
pub struct Rule {
    pub verdict: Verdict,
    pub tool: String,
    pub text: String,
    pub source: Source,
}
pub struct Subject<'a> {
    pub tool: &'a str,
    pub commands: &'a [String],
    pub opaque: Option<&'a str>,
    pub paths: &'a [String],
    pub host: Option<&'a str>,
}
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
}
impl RuleSet {
    pub fn new(rules: Vec<Rule>) -> RuleSet {
        RuleSet { rules }
    }
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
    pub fn extend(&mut self, other: RuleSet) {
        self.rules.extend(other.rules)
    }
    pub fn verdict(&self, s: &Subject) -> Option<(Verdict, &Rule)> {
        let _ = s;
        None
    }
}
impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}
