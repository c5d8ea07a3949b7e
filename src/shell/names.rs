//! What bash evaluates as arithmetic or as a variable name, and whether that is safe: bash
//! reads a variable's value again when it evaluates it as arithmetic (`$((x))`, `${a[x]}`,
//! `${s:x}`, `$[x]`, `((x))`, `let`, `[[ x -eq 1 ]]`, `declare -i`), and runs the `$(…)` of a
//! subscript it finds there (`x='a[$(id)]'`); the same holds for a name given to `read`,
//! `printf -v`, `unset`, `declare` and their kin, and to `[[ -v`. Such an expression is safe
//! only when every operand is a literal number or a variable this script set to a literal
//! number before (a bare assignment at the top level) and never sets to anything else.
//! Knows syntax; which words of a builtin are names or arithmetic is `builtins.rs`'s.

use std::collections::HashSet;

use super::short;

/// What the script does with its variables, as far as arithmetic needs to know.
#[derive(Debug, Default, Clone)]
pub(super) struct Names {
    /// Set to a literal number by a bare assignment at the top level, before the cursor.
    known: HashSet<String>,
    /// Somewhere set to what may not be a literal number (or in a way not followed here).
    spoiled: HashSet<String>,
    /// Known variables evaluated somewhere: each must stay unspoiled to the end.
    used: Vec<String>,
    /// Given the integer attribute (`declare -i`): every assignment to them is arithmetic.
    pub(super) integer: HashSet<String>,
    /// Literal numbers assigned by the command being read, at the top level: known once
    /// the command is certain to have run in this shell (`and_or`).
    pub(super) pending: Vec<String>,
}

/// How many known variables a nested parse is given.
const MAX_INHERITED: usize = 64;

/// Variables bash itself keeps as numbers (unless the script sets them, checked at the end).
const NUMERIC: &[&str] = &[
    "RANDOM",
    "SRANDOM",
    "SECONDS",
    "EPOCHSECONDS",
    "LINENO",
    "BASHPID",
    "PPID",
    "UID",
    "EUID",
    "OPTIND",
    "BASH_SUBSHELL",
];

impl Names {
    /// A copy for a nested parse (a backtick, a here-document): what is known so far, when
    /// that is little (copies stay linear in the input; past it, nothing is known there).
    pub(super) fn child(&self) -> Names {
        let known =
            if self.known.len() <= MAX_INHERITED { self.known.clone() } else { HashSet::new() };
        Names { known, ..Names::default() }
    }

    /// Takes in what a nested parse learnt.
    pub(super) fn absorb(&mut self, child: Names) {
        self.spoiled.extend(child.spoiled);
        self.used.extend(child.used);
        self.integer.extend(child.integer);
    }

    /// Makes the pending literal assignments known (the command ran in this shell).
    pub(super) fn commit(&mut self) -> Vec<String> {
        let names = std::mem::take(&mut self.pending);
        self.known.extend(names.iter().cloned());
        names
    }

    /// The pending assignments did not run in this shell for sure: never known.
    pub(super) fn drop_pending(&mut self) {
        let names = std::mem::take(&mut self.pending);
        self.spoiled.extend(names);
    }

    /// A variable known so far is not: it was set in a subshell.
    pub(super) fn forget(&mut self, name: &str) {
        self.known.remove(name);
        self.spoil(name);
    }

    /// `name` may be set to anything from here on.
    pub(super) fn spoil(&mut self, name: &str) {
        self.spoiled.insert(name.to_string());
    }

    /// An assignment `name=value` of a simple command (`bare`: without a program) at the
    /// top level (`top`).
    pub(super) fn assign(&mut self, name: &str, value: &str, bare: bool, top: bool) {
        if !number(value) && !arithmetic(value) {
            self.spoil(name);
        } else if bare && top {
            self.pending.push(name.to_string());
        }
    }

    /// Why the script is opaque, after the last command: a known variable evaluated
    /// somewhere is set to something else elsewhere (a loop may come back), or a variable
    /// with the integer attribute is.
    pub(super) fn finish(&self) -> Vec<String> {
        let mut reasons = Vec::new();
        let mut seen = HashSet::new();
        for name in self.used.iter().chain(&self.integer) {
            if self.spoiled.contains(name) && seen.insert(name) {
                reasons.push(format!(
                    "{} is evaluated as arithmetic and set to what may not be a number",
                    short(name)
                ));
            }
        }
        reasons
    }

    /// Checks an arithmetic expression (`$((…))`, `((…))`, `$[…]`, a subscript, a
    /// `[[ … -eq … ]]` operand, a `let` argument): every operand a literal number or a known
    /// variable.
    pub(super) fn arith(&mut self, expr: &str) -> Result<(), String> {
        let b = expr.as_bytes();
        let mut i = 0;
        while let Some(&c) = b.get(i) {
            match c {
                b'0'..=b'9' => {
                    i += 1;
                    while b.get(i).is_some_and(|c| c.is_ascii_alphanumeric() || b"_#@".contains(c))
                    {
                        i += 1;
                    }
                }
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                    let end = ident_end(b, i);
                    let name = expr.get(i..end).unwrap_or_default();
                    i = end;
                    let mut j = i;
                    while b.get(j).is_some_and(|c| *c == b' ' || *c == b'\t') {
                        j += 1;
                    }
                    match (b.get(j), b.get(j + 1)) {
                        (Some(b'['), _) => return Err(array(name)),
                        // The target of an assignment is set to a number, not read.
                        (Some(b'='), next) if next != Some(&b'=') => {}
                        _ => self.use_name(name)?,
                    }
                }
                b'$' => i = self.dollar_operand(expr, i)?,
                b'[' | b']' => return Err(array(expr)),
                b'\'' | b'"' | b'`' | b'\\' | b'{' | b'}' | b';' => {
                    return Err(format!("arithmetic holds what may run code: {}", short(expr)));
                }
                _ => i += 1,
            }
        }
        Ok(())
    }

    /// A `$…` operand of an arithmetic expression at `at`: its value is evaluated in turn.
    fn dollar_operand(&mut self, expr: &str, at: usize) -> Result<usize, String> {
        let b = expr.as_bytes();
        let opaque = || format!("arithmetic on an expansion can run code: {}", short(expr));
        match b.get(at + 1) {
            Some(b'#' | b'?' | b'$' | b'!') => Ok(at + 2),
            Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
                let end = ident_end(b, at + 1);
                self.use_name(expr.get(at + 1..end).unwrap_or_default())?;
                Ok(end)
            }
            Some(b'{') => {
                let close = b.iter().skip(at).position(|c| *c == b'}').ok_or_else(opaque)? + at;
                let inner = expr.get(at + 2..close).unwrap_or_default();
                // A length is a number: `${#x}`, `${#a[@]}`.
                if let Some(counted) = inner.strip_prefix('#') {
                    let name = counted.trim_end_matches("[@]").trim_end_matches("[*]");
                    if is_name(name) {
                        return Ok(close + 1);
                    }
                }
                if !is_name(inner) {
                    return Err(opaque());
                }
                self.use_name(inner)?;
                Ok(close + 1)
            }
            _ => Err(opaque()),
        }
    }

    /// A variable evaluated as arithmetic: known (checked again at the end) or refused.
    fn use_name(&mut self, name: &str) -> Result<(), String> {
        if !self.known.contains(name) && !NUMERIC.contains(&name) {
            return Err(format!(
                "arithmetic on {}, a variable whose value is not a number known here, can run \
                 code (an array subscript)",
                short(name)
            ));
        }
        self.used.push(name.to_string());
        Ok(())
    }

    /// Checks the inside of `${…}` (without the braces): its subscript and its substring
    /// offset and length are arithmetic; `${x:=…}` sets `x`.
    pub(super) fn param(&mut self, inner: &str) -> Result<(), String> {
        let b = inner.as_bytes();
        if let Some(rest) = inner.strip_prefix('!') {
            // `${!prefix*}`, `${!a[@]}` list names; any other `${!x}` dereferences a name
            // that may hold a subscript.
            let end = ident_end(rest.as_bytes(), 0);
            let tail = rest.get(end..).unwrap_or_default();
            if end > 0 && matches!(tail, "*" | "@" | "[@]" | "[*]") || rest.is_empty() {
                return Ok(());
            }
            return Err("an indirect expansion can run code (an array subscript)".into());
        }
        let mut at = usize::from(b.first() == Some(&b'#') && b.len() > 1);
        let start = at;
        match b.get(at) {
            Some(c) if c.is_ascii_alphabetic() || *c == b'_' => at = ident_end(b, at),
            Some(c) if c.is_ascii_digit() => {
                while b.get(at).is_some_and(u8::is_ascii_digit) {
                    at += 1;
                }
            }
            Some(_) => at += 1,
            None => return Ok(()),
        }
        let name = inner.get(start..at).unwrap_or_default();
        if b.get(at) == Some(&b'[') {
            let close = matching(b, at, b'[', b']')
                .ok_or_else(|| format!("an unclear subscript: {}", short(inner)))?;
            let sub = inner.get(at + 1..close).unwrap_or_default();
            if !matches!(sub, "@" | "*") {
                self.arith(sub)?;
            }
            at = close + 1;
        }
        let rest = inner.get(at..).unwrap_or_default();
        if rest.starts_with(":=") || rest.starts_with('=') {
            self.spoil(name);
        }
        if let Some(range) = rest.strip_prefix(':')
            && !range.starts_with(['-', '=', '?', '+'])
        {
            let cut = top_colon(range.as_bytes()).unwrap_or(range.len());
            self.arith(range.get(..cut).unwrap_or_default())?;
            self.arith(range.get(cut + 1..).unwrap_or_default())?;
        }
        let operator =
            rest.as_bytes().windows(2).any(|w| w[0] == b'@' && w[1].is_ascii_alphabetic());
        if operator && rest.starts_with('@') {
            return Err("a ${…@…} transformation can expand a value again".into());
        }
        Ok(())
    }

    /// A word bash takes as a variable name (`read NAME`, `printf -v NAME`): a plain name,
    /// or `NAME[SUBSCRIPT]` with a safe subscript; the variable may be set to anything.
    pub(super) fn name_arg(&mut self, word: &str, what: &str) -> Result<(), String> {
        let name = self.name_only(word, what)?;
        self.spoil(name);
        Ok(())
    }

    /// `name_arg` without setting the variable: its name.
    pub(super) fn name_only<'w>(&mut self, word: &'w str, what: &str) -> Result<&'w str, String> {
        let (name, sub) = match word.split_once('[') {
            Some((name, rest)) => (name, Some(rest.strip_suffix(']').unwrap_or("["))),
            None => (word, None),
        };
        if !is_name(name) {
            return Err(format!("{what} takes a name that is not a plain word: {}", short(word)));
        }
        if let Some(sub) = sub
            && !matches!(sub, "@" | "*")
        {
            self.arith(sub).map_err(|e| format!("{what}: {e}"))?;
        }
        Ok(name)
    }
}

/// Whether `text` is a variable name.
pub(super) fn is_name(text: &str) -> bool {
    let b = text.as_bytes();
    b.first().is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_') && ident_end(b, 0) == b.len()
}

/// Whether a value is a literal number (`3`, `-12`).
pub(super) fn number(value: &str) -> bool {
    let digits = value.strip_prefix('-').unwrap_or(value);
    !digits.is_empty() && digits.len() < 19 && digits.bytes().all(|c| c.is_ascii_digit())
}

/// Whether a value is one arithmetic expansion (`$((i + 1))`, checked where it was read):
/// its value is a number.
fn arithmetic(value: &str) -> bool {
    let inner = value.strip_prefix("$((").and_then(|v| v.strip_suffix("))"));
    inner.is_some_and(|i| !i.contains("))") && !i.contains(['$', '`', '\'', '"', '\\']))
}

fn array(text: &str) -> String {
    format!("arithmetic on an array element can run code: {}", short(text))
}

/// Where the name starting at `at` ends.
fn ident_end(b: &[u8], at: usize) -> usize {
    at + b.iter().skip(at).take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count()
}

/// The index of the bracket closing the one at `at`.
fn matching(b: &[u8], at: usize, open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in b.iter().enumerate().skip(at) {
        if *c == open {
            depth += 1;
        } else if *c == close {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// The first `:` of a substring range outside brackets and braces (`${s:${n}:2}`).
fn top_colon(b: &[u8]) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in b.iter().enumerate() {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b':' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;
