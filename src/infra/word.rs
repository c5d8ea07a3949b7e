//! What the words of a command look like: options, subcommand-like words, words the shell
//! would expand, the space-separated lists the families keep, a command's normalised line.
//! Knows no program.

/// Whether a word would expand, for a word the parser gave no `dynamic` flag.
pub(super) fn expands(word: &str) -> bool {
    word.contains(['$', '`', '*', '?', '['])
}

/// Whether `word` is one of the space-separated words of `list`. The lists hold single spaces
/// only (a `\` line continuation drops the indentation).
pub(super) fn listed(list: &str, word: &str) -> bool {
    let bytes = list.as_bytes();
    let edge = |i: usize| bytes.get(i).is_none_or(|&b| b == b' ');
    !word.is_empty()
        && !word.contains(' ')
        && list.match_indices(word).any(|(i, _)| (i == 0 || edge(i - 1)) && edge(i + word.len()))
}

/// Whether a word is an option (`-x`, `--x`, not `-` alone).
pub(super) fn is_option(word: &str) -> bool {
    word.len() > 1 && word.starts_with('-')
}

/// A subcommand-like word: letters, digits, `-`, `_`, `:`, `.`; not an option or a path.
pub(super) fn plain(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with('-')
        && word.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b':' | b'.'))
}

/// The normalised line of a command: basename, then the words.
pub(super) fn line(name: &str, args: &[String]) -> String {
    let mut line =
        String::with_capacity(name.len() + args.iter().map(|a| a.len() + 1).sum::<usize>());
    line.push_str(name);
    for arg in args {
        line.push(' ');
        line.push_str(arg);
    }
    line
}

/// A word as a pattern: each expansion (`$x`, `${…}`, `$(…)`, `$((…))`, `$[…]`, a backtick) and,
/// with `globs`, each glob (`?`, `[…]`) becomes `*`, runs of `*` one. A `$` that was quoted is taken for an
/// expansion too: the pattern may stand for more commands, never for fewer.
pub(super) fn pattern(word: &str, globs: bool) -> String {
    let b = word.as_bytes();
    let mut out = String::with_capacity(word.len());
    let mut i = 0;
    let mut literal = 0;
    let star = |out: &mut String| {
        if !out.ends_with('*') {
            out.push('*');
        }
    };
    while let Some(&c) = b.get(i) {
        let end = match c {
            b'$' => match b.get(i + 1) {
                Some(b'{') => close(b, i + 1, b'{', b'}'),
                Some(b'(') => close(b, i + 1, b'(', b')'),
                Some(b'[') => close(b, i + 1, b'[', b']'),
                Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
                    i + 1
                        + b.iter()
                            .skip(i + 1)
                            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                            .count()
                }
                Some(_) => i + 2,
                None => i + 1,
            },
            b'`' => b.iter().skip(i + 1).position(|c| *c == b'`').map_or(b.len(), |n| i + n + 2),
            b'[' if globs => close(b, i, b'[', b']'),
            b'?' | b'*' if globs => i + 1,
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(word.get(literal..i).unwrap_or_default());
        star(&mut out);
        i = end.min(b.len()).max(i + 1);
        literal = i;
    }
    out.push_str(word.get(literal..).unwrap_or_default());
    out
}

/// The index after the bracket closing the one at `at` (the end when unclosed).
fn close(b: &[u8], at: usize, open: u8, shut: u8) -> usize {
    let mut depth = 0usize;
    for (i, c) in b.iter().enumerate().skip(at) {
        if *c == open {
            depth += 1;
        } else if *c == shut {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return i + 1;
            }
        }
    }
    b.len()
}

/// The basename of a program written as a pattern: what follows the last `/`, and when a
/// hidden part comes before it (that may hold a `/`), any name ending as it does.
pub(super) fn pattern_basename(program: &str) -> String {
    let base = program.rsplit('/').next().unwrap_or(program);
    match base.rfind('*') {
        Some(at) => format!("*{}", base.get(at + 1..).unwrap_or_default()),
        None => base.to_string(),
    }
}
