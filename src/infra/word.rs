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
