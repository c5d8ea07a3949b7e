//! What the words of a command look like: options, subcommand-like words, words the shell
//! would expand, the word tables the families keep ([`Words`]), a command's normalised line.
//! Knows no program.

/// Whether a word would expand, for a word the parser gave no `dynamic` flag.
pub(super) fn expands(word: &str) -> bool {
    word.contains(['$', '`', '*', '?', '['])
}

/// A fixed table of words the parser knows (subcommands, options, program names). Written
/// `words!("list show search")` and parsed at compile time: an empty word (a double space, a
/// space at either end) or a character no command word holds (a comma, a quote, a tab, a
/// newline, a backslash) fails the build instead of silently matching nothing.
#[derive(Clone, Copy)]
pub(super) struct Words(&'static [&'static str]);

impl Words {
    /// The empty table.
    pub const NONE: Words = Words(&[]);

    /// The table of `words`, parsed by [`words!`].
    pub const fn new(words: &'static [&'static str]) -> Words {
        Words(words)
    }

    /// Whether `word` is one of the table's words.
    pub fn has(self, word: &str) -> bool {
        self.0.contains(&word)
    }

    /// The table's words, in order.
    pub fn iter(self) -> impl Iterator<Item = &'static str> {
        self.0.iter().copied()
    }
}

/// How many words `list` holds (words separated by single spaces).
pub(super) const fn count(list: &str) -> usize {
    let bytes = list.as_bytes();
    let mut n = if bytes.is_empty() { 0 } else { 1 };
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b' ' {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The `N` words of `list`, separated by single spaces; panics (at compile time) on an empty
/// word or a character outside printable ASCII or among `, " ' \`.
pub(super) const fn split<const N: usize>(list: &'static str) -> [&'static str; N] {
    let mut out = [""; N];
    let mut rest = list.as_bytes();
    let mut n = 0;
    while n < N {
        let mut end = 0;
        while end < rest.len() && rest[end] != b' ' {
            let b = rest[end];
            assert!(
                b.is_ascii_graphic() && !matches!(b, b',' | b'"' | b'\'' | b'\\'),
                "a word table holds a character no command word holds"
            );
            end += 1;
        }
        assert!(end > 0, "a word table holds an empty word (two spaces, or one at an end)");
        let (word, after) = rest.split_at(end);
        out[n] = match core::str::from_utf8(word) {
            Ok(word) => word,
            Err(_) => panic!("a word table is not ASCII"),
        };
        n += 1;
        rest = if after.is_empty() { after } else { after.split_at(1).1 };
    }
    out
}

/// A [`Words`] table parsed at compile time: `words!("-v --volumes")`.
macro_rules! words {
    ($list:literal) => {
        const {
            const LIST: &str = $list;
            const WORDS: [&str; $crate::infra::word::count(LIST)] =
                $crate::infra::word::split(LIST);
            $crate::infra::word::Words::new(&WORDS)
        }
    };
}
pub(super) use words;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_is_its_words_and_nothing_between_them() {
        const LIST: &str = "-v --volumes [[ mapper/";
        let table = Words::new(&const { split::<{ count(LIST) }>(LIST) });
        assert_eq!(table.iter().collect::<Vec<_>>(), ["-v", "--volumes", "[[", "mapper/"]);
        assert!(table.has("--volumes") && table.has("[["));
        assert!(!table.has("--volume") && !table.has("-v --volumes") && !table.has(""));
        assert!(!Words::NONE.has("") && Words::NONE.iter().next().is_none());
        assert!(words!("--fix --write").has("--write"));
    }

    #[test]
    #[should_panic(expected = "empty word")]
    fn two_spaces_are_refused() {
        let _ = split::<3>("a  b");
    }

    #[test]
    #[should_panic(expected = "no command word holds")]
    fn a_comma_is_refused() {
        let _ = split::<2>("--a, --b");
    }
}
