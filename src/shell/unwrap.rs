//! Peels wrappers (`env`, `sudo`, `timeout`, `xargs`, `find -exec`, `sh -c`, …) off a simple
//! command to reach the program that runs. Knows how those wrappers take their options and
//! nothing else about any program: an option it does not know stops the peeling, opaque.

use super::{MAX_COPIES, Script, Simple, dynamic, short};

/// How many wrappers one command may have.
const MAX_PEEL: usize = 16;

/// How many `-exec` clauses one `find` may have.
const MAX_EXEC: usize = 16;

/// Wrappers that run the rest of their words as a command.
const WRAPPERS: &[&str] = &[
    "env", "command", "exec", "nohup", "time", "timeout", "nice", "ionice", "stdbuf", "sudo",
    "doas", "xargs",
];

/// Shells whose `-c` string is parsed again.
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh"];

/// Single-letter shell options that take no argument (`o` and `O` take one).
const SHELL_FLAGS: &str = "abcefhklmnprstuvxBCEHPTOo";

/// How a wrapper takes its options; long ones are listed without `--`, space-separated.
struct Spec {
    name: &'static str,
    /// Short options without an argument.
    flags: &'static str,
    /// Short options with an argument, attached or the next word.
    args: &'static str,
    /// Short options whose optional argument can only be attached (`-i{}`).
    attached: &'static str,
    /// Long options without an argument (or with an optional one after `=`).
    long_flags: &'static str,
    /// Long options with an argument, after `=` or the next word.
    long_args: &'static str,
}

const fn spec(name: &'static str, flags: &'static str, args: &'static str) -> Spec {
    Spec { name, flags, args, attached: "", long_flags: "", long_args: "" }
}

const ENV: Spec = Spec {
    long_flags: "ignore-environment null debug",
    // `-C`/`--chdir` move the command elsewhere: not seen past (the paths would be judged
    // in the wrong directory).
    long_args: "unset",
    ..spec("env", "i0v", "u")
};
const SUDO: Spec = Spec {
    long_flags: "askpass background bell preserve-env set-home non-interactive \
        preserve-groups stdin reset-timestamp",
    long_args: "close-from group prompt role type command-timeout other-user user",
    ..spec("sudo", "ABbEHkNnPS", "CgpTtUu")
};
const TIME: Spec = Spec {
    long_flags: "portability verbose quiet",
    long_args: "format",
    ..spec("time", "pvq", "f")
};
const TIMEOUT: Spec = Spec {
    long_flags: "preserve-status foreground verbose",
    long_args: "kill-after signal",
    ..spec("timeout", "v", "ks")
};
const NICE: Spec = Spec { long_args: "adjustment", ..spec("nice", "0123456789", "n") };
const IONICE: Spec =
    Spec { long_flags: "ignore", long_args: "class classdata", ..spec("ionice", "t", "cn") };
const STDBUF: Spec = Spec { long_args: "input output error", ..spec("stdbuf", "", "ioe") };
const XARGS: Spec = Spec {
    attached: "eil",
    long_flags: "null no-run-if-empty verbose interactive exit open-tty show-limits eof \
        replace max-lines",
    long_args: "arg-file delimiter max-args max-procs max-chars process-slot-var",
    ..spec("xargs", "0oprtx", "adEILnPs")
};

/// What a wrapper's words say.
enum Step {
    /// The wrapped command starts at this word.
    Inner(usize),
    /// The wrapper is itself the program (`env` alone, `command -v`).
    Program,
    /// What the wrapper runs cannot be seen: the reason.
    Blind(String),
}

/// Adds `simple` to `out` with its wrappers peeled; `reparse` parses an `sh -c` string.
pub(super) fn unwrap(simple: Simple, reparse: &mut dyn FnMut(&str) -> Script, out: &mut Script) {
    let mut s = simple;
    let mut at = 0;
    loop {
        if s.wrappers.len() >= MAX_PEEL {
            out.opaque.push("too many wrappers".into());
            break;
        }
        let (Some(word), false) = (s.argv.get(at), dynamic(&s, at)) else { break };
        let name = word.rsplit('/').next().unwrap_or(word);
        if name == "find" {
            return find(s, at, reparse, out);
        }
        if SHELLS.contains(&name) {
            return shell(s, at, reparse, out);
        }
        let Some(wrapper) = WRAPPERS.iter().copied().find(|w| *w == name) else { break };
        let from = at + 1;
        let step = match wrapper {
            "env" => env(&mut s, from),
            "sudo" => options(&s, from, &SUDO).map_or_else(|e| e, |i| assigns(&mut s, i, "sudo")),
            "command" => command(&s, from),
            "timeout" => options(&s, from, &TIMEOUT).map_or_else(|e| e, |i| argument(&s, i)),
            _ => {
                let spec = match wrapper {
                    "time" => TIME,
                    "nice" => NICE,
                    "ionice" => IONICE,
                    "stdbuf" => STDBUF,
                    "xargs" => XARGS,
                    "exec" => spec("exec", "cl", "a"),
                    "doas" => spec("doas", "n", "u"),
                    _ => spec("nohup", "", ""),
                };
                options(&s, from, &spec).map_or_else(|e| e, Step::Inner)
            }
        };
        match step {
            Step::Inner(i) if i < s.argv.len() => {
                s.wrappers.push(wrapper.to_string());
                at = i;
            }
            Step::Inner(_) | Step::Program => break,
            Step::Blind(reason) => {
                out.opaque.push(reason);
                break;
            }
        }
    }
    settle(s, at, out);
}

fn blind(wrapper: &str, word: &str) -> Step {
    Step::Blind(format!("cannot see past {wrapper} {}", short(word)))
}

/// Drops the first `at` words (the wrappers) and adds the command to `out`, saying so when
/// its program is hidden or runs code that is not in the words.
fn settle(mut s: Simple, at: usize, out: &mut Script) {
    s.argv.drain(..at.min(s.argv.len()));
    s.dynamic.drain(..at.min(s.dynamic.len()));
    if let Some(reason) = super::builtins::hidden(&s) {
        out.opaque.push(reason);
    }
    out.commands.push(s);
}

/// Skips a wrapper's options from word `i`: the first word that is not one, or `Blind` at
/// an option it does not know or whose value is unknown.
fn options(s: &Simple, mut i: usize, spec: &Spec) -> Result<usize, Step> {
    while let Some(word) = s.argv.get(i) {
        if dynamic(s, i) {
            return Err(blind(spec.name, word));
        }
        if word == "--" {
            return Ok(i + 1);
        }
        let Some(opt) = word.strip_prefix('-').filter(|o| !o.is_empty()) else { return Ok(i) };
        let mut takes_next = false;
        if let Some(long) = opt.strip_prefix('-') {
            let name = long.split_once('=').map_or(long, |(name, _)| name);
            let inline = name.len() < long.len();
            let listed = |list: &str| list.split_whitespace().any(|o| o == name);
            if listed(spec.long_args) {
                takes_next = !inline;
            } else if !listed(spec.long_flags) {
                return Err(blind(spec.name, word));
            }
        } else {
            for (k, c) in opt.char_indices() {
                if spec.flags.contains(c) {
                    continue;
                }
                if spec.args.contains(c) {
                    takes_next = k + c.len_utf8() == opt.len();
                } else if !spec.attached.contains(c) {
                    return Err(blind(spec.name, word));
                }
                break;
            }
        }
        i += 1;
        if takes_next {
            if dynamic(s, i) && i < s.argv.len() {
                return Err(blind(spec.name, s.argv.get(i).map_or("", String::as_str)));
            }
            i += 1;
        }
    }
    Ok(i)
}

/// A word the wrapper takes (`timeout`'s duration), then the command.
fn argument(s: &Simple, i: usize) -> Step {
    match s.argv.get(i) {
        Some(word) if dynamic(s, i) => blind("timeout", word),
        _ => Step::Inner(i + 1),
    }
}

/// `NAME=VALUE` words from `i` (for `env` and `sudo`) go to `assigns`.
fn assigns(s: &mut Simple, mut i: usize, wrapper: &str) -> Step {
    let mut found = Vec::new();
    while let Some(word) = s.argv.get(i) {
        let Some((name, value)) = word.split_once('=') else { break };
        if dynamic(s, i) || name.is_empty() || name.starts_with('-') {
            return blind(wrapper, word);
        }
        found.push((name.to_string(), value.to_string()));
        i += 1;
    }
    if i < s.argv.len() {
        s.assigns.extend(found);
    }
    Step::Inner(i)
}

fn env(s: &mut Simple, mut i: usize) -> Step {
    // `-` alone is `-i`, and options may follow it.
    loop {
        i = match options(s, i, &ENV) {
            Ok(i) => i,
            Err(step) => return step,
        };
        if s.argv.get(i).is_none_or(|w| w != "-") {
            return assigns(s, i, "env");
        }
        i += 1;
    }
}

/// `command [-p] CMD`; `command -v` and `-V` only look a name up.
fn command(s: &Simple, mut i: usize) -> Step {
    while let Some(word) = s.argv.get(i) {
        if dynamic(s, i) {
            return blind("command", word);
        }
        match word.strip_prefix('-') {
            Some("-") => return Step::Inner(i + 1),
            Some(f) if !f.is_empty() && f.chars().all(|c| "pvV".contains(c)) => {
                if f.contains(['v', 'V']) {
                    return Step::Program;
                }
                i += 1;
            }
            Some(f) if !f.is_empty() => return blind("command", word),
            _ => return Step::Inner(i),
        }
    }
    Step::Inner(i)
}

/// `sh -c STRING` and its kin: the string is parsed again and its commands take the
/// wrappers, assignments, redirections and pipe of the shell's.
fn shell(s: Simple, at: usize, reparse: &mut dyn FnMut(&str) -> Script, out: &mut Script) {
    let i = match script_arg(&s, at + 1) {
        Ok(Some(i)) => i,
        Ok(None) => return settle(s, at, out),
        Err(word) => {
            out.opaque.push(format!("cannot see past sh {}", short(&word)));
            return settle(s, at, out);
        }
    };
    let text = s.argv.get(i).map_or("", String::as_str);
    if dynamic(&s, i) {
        out.opaque.push(format!("the program is hidden: sh -c {}", short(text)));
        return settle(s, at, out);
    }
    let inner = reparse(text);
    if inner.commands.is_empty() {
        out.opaque.extend(inner.opaque);
        return settle(s, at, out);
    }
    let copies = s.assigns.len() + s.redirects.len() + s.wrappers.len() + 1;
    let copy = inner.commands.len().saturating_mul(copies) <= MAX_COPIES;
    if !copy {
        out.opaque.push("too many commands to copy the shell's wrappers to".into());
    }
    let mut outer = if copy { s.wrappers.clone() } else { Vec::new() };
    outer.push("sh -c".to_string());
    for mut c in inner.commands {
        c.wrappers.splice(0..0, outer.iter().cloned());
        if copy {
            c.assigns.splice(0..0, s.assigns.iter().cloned());
            c.redirects.splice(0..0, s.redirects.iter().cloned());
        }
        c.piped |= s.piped;
        out.commands.push(c);
    }
    out.opaque.extend(inner.opaque);
}

/// Where a shell's `-c` string is among its words (from `i`): `None` when there is no
/// `-c` (a script file or standard input is run), `Err` with an option it does not know.
fn script_arg(s: &Simple, mut i: usize) -> Result<Option<usize>, String> {
    let mut seen_c = false;
    while let Some(word) = s.argv.get(i) {
        if dynamic(s, i) {
            return if seen_c { Ok(Some(i)) } else { Err(word.clone()) };
        }
        if word == "--" || word == "-" {
            i += 1;
            break;
        }
        let Some(flags) = word.strip_prefix(['-', '+']) else { break };
        i += 1;
        match flags.strip_prefix('-') {
            Some("norc" | "noprofile" | "login" | "posix" | "noediting" | "restricted") => {}
            // A start-up file of the model's choosing is code nobody sees here.
            Some(_) => return Err(word.clone()),
            None if flags.is_empty() || !flags.chars().all(|c| SHELL_FLAGS.contains(c)) => {
                return Err(word.clone());
            }
            None => {
                seen_c |= word.starts_with('-') && flags.contains('c');
                i += flags.matches(['o', 'O']).count();
            }
        }
    }
    Ok((seen_c && i < s.argv.len()).then_some(i))
}

/// `find … -exec CMD … ;` (and `-execdir`, `-ok`, `-okdir`): `find` with its other words,
/// and each payload as its own command, unwrapped in turn.
fn find(s: Simple, at: usize, reparse: &mut dyn FnMut(&str) -> Script, out: &mut Script) {
    let action =
        |i: usize, w: &str| !dynamic(&s, i) && matches!(w, "-exec" | "-execdir" | "-ok" | "-okdir");
    if !s.argv.iter().enumerate().skip(at).any(|(i, w)| action(i, w)) {
        return settle(s, at, out);
    }
    let base = Simple {
        assigns: s.assigns.clone(),
        redirects: s.redirects.clone(),
        wrappers: s.wrappers.clone(),
        piped: s.piped,
        ..Simple::default()
    };
    let (mut find, mut payloads) = (base.clone(), Vec::new());
    let mut i = at;
    while let Some(word) = s.argv.get(i) {
        i += 1;
        if !action(i - 1, word) {
            find.argv.push(word.clone());
            find.dynamic.push(dynamic(&s, i - 1));
            continue;
        }
        let mut payload = Simple { wrappers: vec!["find -exec".into()], ..Simple::default() };
        while let Some(word) = s.argv.get(i) {
            i += 1;
            let literal = !dynamic(&s, i - 1);
            let last_braces = payload.argv.last().is_some_and(|w| w == "{}");
            if literal && (word == ";" || (word == "+" && last_braces)) {
                break;
            }
            payload.argv.push(word.clone());
            payload.dynamic.push(!literal);
        }
        if !payload.argv.is_empty() {
            payloads.push(payload);
        }
    }
    settle(find, 0, out);
    if payloads.len() > MAX_EXEC {
        out.opaque.push("too many -exec".into());
        payloads.truncate(MAX_EXEC);
    }
    for mut p in payloads {
        p.wrappers.splice(0..0, base.wrappers.iter().cloned());
        p.assigns.clone_from(&base.assigns);
        p.redirects.clone_from(&base.redirects);
        p.piped = base.piped;
        unwrap(p, reparse, out);
    }
}
