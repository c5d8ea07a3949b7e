//! What the words of a command look like: options, subcommand-like words, words the shell
//! would expand, the space-separated lists the families keep, variables that change which
//! code runs. Knows no program.

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

/// Whether setting this variable changes which code runs (`PATH`, `LD_PRELOAD`, `GIT_SSH_COMMAND`).
pub(super) fn risky_var(name: &str) -> bool {
    const RISKY: &str = "PATH LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT BASH_ENV ENV PROMPT_COMMAND IFS \
        PYTHONPATH PYTHONSTARTUP PYTHONHOME NODE_OPTIONS PERL5OPT PERL5LIB RUBYOPT RUBYLIB \
        GIT_SSH GIT_SSH_COMMAND GIT_EXTERNAL_DIFF GIT_PAGER GIT_EDITOR GIT_ASKPASS GIT_EXEC_PATH \
        GIT_DIR GIT_CONFIG_GLOBAL PAGER EDITOR VISUAL SSH_ASKPASS MANPAGER LESSOPEN BROWSER \
        KUBECTL_EXTERNAL_DIFF KUBE_EDITOR HELM_PLUGINS TF_CLI_CONFIG_FILE";
    listed(RISKY, name) || name.starts_with("DYLD_") || name.starts_with("GIT_CONFIG")
}
