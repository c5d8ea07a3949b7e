//! Shell syntax, no program knowledge: a conservative parser of what `/bin/sh -c` would run.
//! It never fails: what it cannot understand is named in `Script::opaque`, and the
//! permission gate treats an opaque script as at least a mutation.

mod builtins;
mod lex;
mod names;
mod parse;
mod unwrap;
mod word;

/// A parsed command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    /// Every simple command the script would run, in source order, including those inside
    /// subshells, `{ …; }` groups, `$(…)`, backticks, `<(…)`/`>(…)`, `if`/`while`/`for`
    /// bodies, `sh -c`/`bash -c` strings (parsed again) and the payloads of `find -exec`
    /// and `xargs` (after unwrapping).
    pub commands: Vec<Simple>,
    /// Why parts of it could not be understood; empty when it was understood whole.
    pub opaque: Vec<String>,
    /// Bash may run a command no word shows: a value it evaluates as arithmetic or as a
    /// name (`${a[x]}` with `x='a[$(…)]'`), or expands again (`${!x}`, `${x@P}`). Any
    /// program may run, so a deny rule on any program must hold.
    pub runs_hidden: bool,
}

/// One simple command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Simple {
    /// Assignments before the program (`X=1 cmd`, or `env X=1 cmd`); a bare assignment
    /// (`t=terraform`) is a `Simple` with an empty `argv`.
    pub assigns: Vec<(String, String)>,
    /// The words after quote removal and after the wrappers were peeled; `argv[0]` is the
    /// program as written (maybe an absolute path). Expansions stay as written (`$x`).
    pub argv: Vec<String>,
    /// Per word of `argv`: whether it holds an expansion whose value is unknown here
    /// (`$x`, `${x}`, `$(…)`, backticks, an unquoted `*`, `?` or `[`). A leading `~` is
    /// not dynamic: it stays `~` in the word.
    pub dynamic: Vec<bool>,
    /// Its redirections.
    pub redirects: Vec<Redirect>,
    /// The wrappers peeled to reach `argv`, outermost first: `env`, `command`, `exec`,
    /// `nohup`, `time`, `timeout`, `nice`, `ionice`, `stdbuf`, `sudo`, `doas`, `xargs`,
    /// `find -exec`, `sh -c` (also `bash -c`, `zsh -c`, `dash -c`).
    pub wrappers: Vec<String>,
    /// Its standard input comes from a pipe (`echo yes | terraform destroy`).
    pub piped: bool,
}

impl Simple {
    /// The program's name: the last component of `argv[0]` (`/opt/tf/bin/terraform` →
    /// `terraform`); `None` for a bare assignment.
    pub fn program(&self) -> Option<&str> {
        let first = self.argv.first()?;
        Some(first.rsplit('/').next().unwrap_or(first))
    }
}

/// One redirection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The file descriptor named before the operator (`2>`), if any.
    pub fd: Option<u32>,
    pub kind: RedirectKind,
    /// The target after quote removal (a file, `&1` style targets are `Dup`), or a
    /// here-document's delimiter.
    pub target: String,
    /// Whether the target holds an expansion whose value is unknown.
    pub dynamic: bool,
}

/// What a redirection does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// `<`
    Read,
    /// `>`, `>|`, `&>`
    Write,
    /// `>>`, `&>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `>&N`, `<&N`, `N>&-`
    Dup,
    /// `<<`, `<<-`
    HereDoc,
    /// `<<<`
    HereString,
}

/// Parses `src` as `/bin/sh -c` would see it. Never fails and never panics.
pub fn parse(src: &str) -> Script {
    parse::parse_at(src, 0)
}

/// Inputs longer than this are not read: they are opaque whole.
const MAX_INPUT: usize = 64 * 1024;

/// How deep subshells, groups, compound commands, substitutions and `sh -c` strings may
/// nest; deeper is opaque. It bounds the recursion, so the time stays linear in the input.
const MAX_DEPTH: usize = 16;

/// Copies of an enclosing command's redirections (or a shell's assignments and wrappers)
/// onto the commands inside beyond this are left out, opaque: hostile input stays linear.
const MAX_COPIES: usize = 10_000;

/// `text` cut to about 40 bytes (on a character boundary), for a reason in `Script::opaque`.
/// Whether word `i` of `s` holds an expansion (a missing word counts as one).
fn dynamic(s: &Simple, i: usize) -> bool {
    s.dynamic.get(i).copied().unwrap_or(true)
}

fn short(text: &str) -> String {
    if text.len() <= 40 {
        return text.to_string();
    }
    let mut end = 40;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", text.get(..end).unwrap_or_default())
}

#[cfg(test)]
mod tests;
