//! STUB (replaced at merge).
pub mod plan;
pub mod scope;
use std::path::{Path, PathBuf};
/// What a command does to infrastructure, from harmless to dangerous. A script's tier is
/// the highest of its commands'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    /// Changes nothing.
    Read,
    /// Computes a change without making it (`terraform plan`, `--dry-run`).
    Plan,
    /// Changes files or infrastructure in a way that can be changed back.
    Mutate,
    /// Can lose data or infrastructure.
    Destroy,
}

impl Tier {
    /// The wire id (`_meta.iacCode.tier`).
    pub fn id(self) -> &'static str {
        match self {
            Tier::Read => "read",
            Tier::Plan => "plan",
            Tier::Mutate => "mutate",
            Tier::Destroy => "destroy",
        }
    }
}
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathUse {
    Read,
    Write,
}
#[derive(Debug, Clone)]
pub struct Classified {
    pub tier: Tier,
    pub reasons: Vec<String>,
    pub prefixes: Option<Vec<String>>,
    pub lines: Vec<String>,
    pub paths: Vec<(PathBuf, PathUse)>,
    pub file_only: bool,
    pub runs_code_in: Vec<PathBuf>,
    pub terraform: Option<TfCall>,
    pub opaque: bool,
}
#[derive(Debug, Clone)]
pub struct TfCall {
    pub program: String,
    pub dir: PathBuf,
    pub global: Vec<String>,
    pub destroy: bool,
    pub plan_file: Option<String>,
    pub plan_args: Vec<String>,
    pub apply_args: Vec<String>,
    pub assigns: Vec<(String, String)>,
    pub unknown: Vec<String>,
}
pub fn classify(src: &str, cwd: &Path, env: &dyn Fn(&str) -> Option<String>) -> Classified {
    let _ = (src, cwd, env);
    Classified {
        tier: Tier::Mutate,
        reasons: vec![],
        prefixes: None,
        lines: vec![],
        paths: vec![],
        file_only: false,
        runs_code_in: vec![],
        terraform: None,
        opaque: true,
    }
}
