//! What a command's program position tells the parser without knowing any program: a
//! hidden program (`$cmd`, `eval`, `source`, `alias`, `trap`); the bash builtins that take a
//! number whose `$(…)` would run (`shift`, `return`, `exit`, `ulimit`); and how the builtins
//! that take names or arithmetic (`read`, `printf -v`, `declare`, `let`, `[[`, `test -v` …)
//! take them, for `names.rs` to judge.

use super::Simple;
use super::names::{Names, number};
use super::{dynamic, short};

/// `[[`'s binary operators that evaluate both operands as arithmetic.
const COMPARE: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// What may stand before an operator of `[[` or `test` (so the operator is one).
const BEFORE: &[&str] = &["[[", "[", "test", "!", "(", "&&", "||", "-a", "-o"];

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

impl Names {
    /// The reasons a simple command (wrappers peeled) evaluates what may run code: the
    /// builtins that take names or arithmetic, `[[` and `test`.
    pub(super) fn command(&mut self, s: &Simple) -> Vec<String> {
        let mut reasons = Vec::new();
        let Some(program) = s.program().filter(|_| !s.dynamic.first().copied().unwrap_or(true))
        else {
            return reasons;
        };
        let args = s.argv.get(1..).unwrap_or_default();
        let mut check = |r: Result<(), String>| {
            if let Err(reason) = r {
                reasons.push(reason);
            }
        };
        match program {
            "[[" | "test" | "[" => {
                let closer = |w: &str| matches!(w, "]]" | "]");
                for (i, word) in args.iter().enumerate() {
                    let before = if i == 0 { program } else { args[i - 1].as_str() };
                    let Some(next) = args.get(i + 1).filter(|n| !closer(n)) else { continue };
                    let first = BEFORE.contains(&before);
                    if matches!(word.as_str(), "-v" | "-R") && first {
                        check(self.name_arg(next, "-v"));
                    }
                    if program == "[[" && COMPARE.contains(&word.as_str()) && !first {
                        check(self.arith(before));
                        check(self.arith(next));
                    }
                }
            }
            "let" => args.iter().for_each(|a| check(self.arith(a))),
            "read" => check(self.read(args)),
            "printf" => {
                let name = match args.first().map(String::as_str) {
                    Some("-v") => args.get(1).map(String::as_str),
                    Some(a) => a.strip_prefix("-v").filter(|n| !n.is_empty()),
                    None => None,
                };
                if let Some(name) = name {
                    check(self.name_arg(name, "printf -v"));
                }
            }
            "mapfile" | "readarray" => check(self.mapfile(args)),
            "getopts" => {
                if let Some(name) = args.get(1) {
                    check(self.name_arg(name, "getopts"));
                }
            }
            "wait" => {
                let at = args.iter().position(|a| a.starts_with('-') && a.ends_with('p'));
                if let Some(name) = at.and_then(|i| args.get(i + 1)) {
                    check(self.name_arg(name, "wait -p"));
                }
            }
            "unset" if !args.iter().any(|a| a.starts_with('-') && a.contains('f')) => {
                for a in args.iter().filter(|a| !a.starts_with('-')) {
                    check(self.name_arg(a, "unset"));
                }
            }
            "declare" | "typeset" | "local" | "export" | "readonly" => {
                check(self.declare(program, args));
            }
            _ => {}
        }
        reasons
    }

    /// `read [-ers] [-a NAME] [-d D] [-i T] [-n N] [-N N] [-p P] [-t T] [-u FD] [NAME…]`.
    fn read(&mut self, args: &[String]) -> Result<(), String> {
        let mut i = 0;
        while let Some(word) = args.get(i) {
            i += 1;
            if word == "--" {
                break;
            }
            let Some(flags) = word.strip_prefix('-').filter(|f| !f.is_empty()) else {
                i -= 1;
                break;
            };
            for (k, c) in flags.char_indices() {
                if !"adinNptu".contains(c) {
                    continue;
                }
                let attached = flags.get(k + 1..).unwrap_or_default();
                let value = if attached.is_empty() {
                    i += 1;
                    args.get(i - 1).map_or("", String::as_str)
                } else {
                    attached
                };
                if c == 'a' {
                    self.name_arg(value, "read -a")?;
                }
                break;
            }
        }
        for name in args.get(i..).unwrap_or_default() {
            self.name_arg(name, "read")?;
        }
        Ok(())
    }

    /// `mapfile [-t] [-d D] [-n N] [-O O] [-s N] [-u FD] [-C CB] [-c N] [NAME]`.
    fn mapfile(&mut self, args: &[String]) -> Result<(), String> {
        let mut i = 0;
        while let Some(word) = args.get(i) {
            i += 1;
            let Some(flags) = word.strip_prefix('-').filter(|f| !f.is_empty()) else {
                return self.name_arg(word, "mapfile");
            };
            if flags.contains('C') {
                return Err("mapfile -C runs a callback".into());
            }
            if let Some(k) = flags.find(|c| "dnOsuc".contains(c))
                && k + 1 == flags.len()
            {
                i += 1;
            }
        }
        Ok(())
    }

    /// `declare`, `typeset`, `local`, `export`, `readonly`: options, then `NAME[=VALUE]`.
    fn declare(&mut self, program: &str, args: &[String]) -> Result<(), String> {
        let options = || args.iter().filter(|a| a.starts_with(['-', '+']) && a.len() > 1);
        if options().any(|a| a.contains('f') || a.contains('F')) {
            return Ok(());
        }
        if options().any(|a| a.starts_with('-') && a.contains('n')) && program != "export" {
            return Err(format!("{program} -n makes a name refer to another"));
        }
        let integer = options().any(|a| a.starts_with('-') && a.contains('i'));
        for word in args.iter().filter(|a| !(a.starts_with(['-', '+']) && a.len() > 1)) {
            let (target, value) = match word.split_once('=') {
                Some((t, v)) => (t.strip_suffix('+').unwrap_or(t), Some(v)),
                None => (word.as_str(), None),
            };
            let name = self.name_only(target, program)?;
            match value {
                Some(v) if integer || self.integer.contains(name) => {
                    self.arith(v).map_err(|e| format!("{program} -i: {e}"))?;
                }
                Some(v) if number(v) => {}
                Some(_) => self.spoil(name),
                // Without a value the variable keeps its own.
                None => {}
            }
            if integer {
                self.integer.insert(name.to_string());
            }
        }
        Ok(())
    }
}
