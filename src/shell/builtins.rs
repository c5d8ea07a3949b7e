//! What a command's program position tells the parser without knowing any program: a
//! hidden program (`$cmd`, `eval`, `source`, `alias`, `trap`), and the bash builtins that
//! evaluate their arguments as names or arithmetic, so that `$(…)` inside a value runs
//! (`printf -v 'a[$(…)]'`, `[[ $x -eq 1 ]]`).

use super::Simple;
use super::{dynamic, short};

/// `[[`'s operators that evaluate their operands as arithmetic (or as a name, `-v`).
const ARITHMETIC: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v", "-R"];

/// Builtins that evaluate an argument as a variable name, subscripts included: bash runs
/// `$(…)` found in `a[$(…)]` (`printf -v`, `read`, `test -v`, `declare`, `let` …).
const EVALUATING: &[&str] = &[
    "printf",
    "read",
    "test",
    "[",
    "unset",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "let",
    "mapfile",
    "readarray",
    "getopts",
    "wait",
    "shift",
    "return",
    "exit",
    "ulimit",
];

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
        "[[" if s.dynamic.iter().any(|d| *d)
            && s.argv.iter().any(|w| ARITHMETIC.contains(&w.as_str())) =>
        {
            "[[ evaluates arithmetic and array subscripts of values".to_string()
        }
        name if EVALUATING.contains(&name) && s.argv.iter().skip(1).any(|w| code_like(w)) => {
            format!("{name} evaluates code inside its arguments (an array subscript)")
        }
        _ => String::new(),
    };
    (!reason.is_empty()).then_some(reason)
}
