//! What a command's program position tells the parser without knowing any program: a
//! hidden program (`$cmd`, `eval`, `source`, `alias`, `trap`), and the bash builtins that
//! take a number whose `$(…)` would run (`shift`, `return`, `exit`, `ulimit`).

use super::Simple;
use super::{dynamic, short};

/// Builtins that take a number bash reads as arithmetic in some versions: `$(…)` in it is
/// refused. The builtins that take names or expressions (`read`, `printf -v`, `declare`,
/// `let`, `[[` …) are judged in `names.rs`, against what the script set.
const EVALUATING: &[&str] = &["shift", "return", "exit", "ulimit"];

/// Whether a word, after quote removal, still holds what bash would run when it evaluates
/// it as a name or an arithmetic expression.
fn code_like(word: &str) -> bool {
    word.contains("$(") || word.contains('`') || word.contains("${")
}

/// Why the command hides what it runs, if it does.
pub(super) fn hidden(s: &Simple) -> Option<String> {
    let first = s.argv.first()?;
    let reason = match s.program().unwrap_or_default() {
        _ if dynamic(s, 0) => format!("the program is hidden: {}", short(first)),
        "{}" => "the program is hidden: {}".to_string(),
        "eval" => "eval runs a string as a command".to_string(),
        "source" | "." => "source runs a script".to_string(),
        "alias" => "alias redefines a command".to_string(),
        "trap" => "trap runs a string later".to_string(),
        "fc" => "fc runs commands from the history".to_string(),
        "hash" => "hash can rebind a program name".to_string(),
        name if EVALUATING.contains(&name) && s.argv.iter().skip(1).any(|w| code_like(w)) => {
            format!("{name} evaluates code inside its arguments (an array subscript)")
        }
        _ => String::new(),
    };
    (!reason.is_empty()).then_some(reason)
}
