//! The stream editors, sed and awk: their programs are read for what runs commands or writes
//! files (sed `e`/`w`, awk `system(`, `getline`, `print >`); such a program is opaque. `sed -i`
//! is a file-only mutation of its operands.

use super::judge::{Cmd, Out};
use super::path::state_file;
use super::word::words;
use super::{PathUse, Tier};

/// Judges sed and awk; false for any other program.
pub(super) fn judge(cmd: &Cmd, out: &mut Out) -> bool {
    match cmd.name {
        "sed" | "gsed" => sed(cmd, out),
        "awk" | "gawk" | "mawk" | "nawk" => awk(cmd, out),
        _ => return false,
    }
    out.prefix(&[cmd.name]);
    true
}

fn sed(cmd: &Cmd, out: &mut Out) {
    let values = words!("-e --expression -f --file -l --line-length");
    let mut words = cmd.words(values);
    let mut scripts = Vec::new();
    for (i, arg) in cmd.args.iter().enumerate() {
        let given = match arg.as_str() {
            "-e" | "--expression" => cmd.args.get(i + 1).map(|s| (i + 1, s.as_str())),
            a => a.strip_prefix("--expression=").map(|s| (i, s)),
        };
        scripts.extend(given);
    }
    if let Some(file) = cmd.value("-f").or_else(|| cmd.value("--file")) {
        out.opaque("sed runs a script from a file");
        out.read(cmd.resolve(out, file));
    } else if scripts.is_empty() && !words.is_empty() {
        let (i, script) = words.remove(0);
        scripts.push((i, script));
    }
    for (i, script) in scripts {
        if cmd.hidden(i) || !safe_sed(script) {
            out.opaque("the sed script runs commands or writes files");
        }
    }
    let inplace = cmd.short("i") || cmd.args.iter().any(|a| a.starts_with("--in-place"));
    for (i, word) in words {
        if !inplace {
            out.word(cmd, i, PathUse::Read);
        } else if cmd.hidden(i) {
            out.raise(Tier::Mutate, format!("sed -i of a hidden path: {word}"));
        } else if state_file(word) {
            out.raise(Tier::Destroy, format!("sed -i rewrites terraform state: {word}"));
            out.word(cmd, i, PathUse::Write);
        } else if cmd.dynamic(i) {
            super::files::pattern(cmd, i, out, "sed -i rewrites");
        } else {
            out.write_file(cmd.resolve(out, word), format!("sed -i rewrites {word}"));
        }
    }
}

/// Whether a sed script only edits the stream: no `e`, `r`, `R`, `w`, `W` commands and no
/// `e`/`w` flags of `s`. Anything it cannot follow is unsafe.
fn safe_sed(script: &str) -> bool {
    let b = script.as_bytes();
    let mut i = 0;
    while i < b.len() {
        i = address(b, i);
        let Some(&c) = b.get(i) else { break };
        i += 1;
        match c {
            b' ' | b'\t' | b'\n' | b';' | b'{' | b'}' | b'!' => {}
            b's' | b'y' => {
                let Some(&delim) = b.get(i) else { return false };
                if delim == b'\\' || delim == b'\n' {
                    return false;
                }
                i += 1;
                for _ in 0..2 {
                    while i < b.len() && b[i] != delim {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 1;
                }
                while i < b.len()
                    && (b[i].is_ascii_digit()
                        || matches!(b[i], b'g' | b'p' | b'i' | b'I' | b'm' | b'M'))
                {
                    i += 1;
                }
                if c == b's' && matches!(b.get(i), Some(b'e' | b'w' | b'W')) {
                    return false;
                }
            }
            b'p' | b'P' | b'd' | b'D' | b'n' | b'N' | b'g' | b'G' | b'h' | b'H' | b'x' | b'='
            | b'l' | b'q' | b'Q' | b'z' | b'F' => {
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == b' ') {
                    i += 1;
                }
            }
            b'a' | b'i' | b'c' | b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'b' | b't' | b'T' | b':' => {
                while i < b.len() && !matches!(b[i], b'\n' | b';' | b'}') {
                    i += 1;
                }
            }
            _ => return false,
        }
    }
    true
}

/// Skips an address (`1`, `$`, `/re/`, `\cREc`, `1,5`, `0~2`, `addr,+3`) from `b[i]`.
fn address(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        match c {
            b'0'..=b'9' | b'$' | b',' | b'~' | b'+' => i += 1,
            b'/' | b'\\' => {
                let delim = if c == b'\\' { b.get(i + 1).copied().unwrap_or(b'/') } else { b'/' };
                i += if c == b'\\' { 2 } else { 1 };
                while i < b.len() && b[i] != delim {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                while matches!(b.get(i), Some(b'I' | b'M')) {
                    i += 1;
                }
            }
            _ => break,
        }
    }
    i
}

fn awk(cmd: &Cmd, out: &mut Out) {
    let values =
        words!("-F -v -f --field-separator --assign --file -i --include -l --load -E --exec");
    let mut words = cmd.words(values);
    let from_file = cmd.value("-f").or_else(|| cmd.value("--file")).or_else(|| cmd.value("-E"));
    if let Some(file) = from_file {
        out.opaque("awk runs a program from a file");
        out.read(cmd.resolve(out, file));
    } else if cmd.has_any(words!("-i --include -l --load")) {
        out.opaque("awk loads code");
    } else if !words.is_empty() {
        let (i, program) = words.remove(0);
        if cmd.hidden(i) || !safe_awk(program) {
            out.opaque("the awk program runs commands or writes files");
        }
    }
    for (i, word) in words {
        if !word.contains('=') || word.contains('/') {
            out.word(cmd, i, PathUse::Read);
        }
    }
}

/// Whether an awk program only prints: no `system(`, no `getline`, no `@load`, and no `>` or
/// `|` inside a print statement (outside string literals).
fn safe_awk(program: &str) -> bool {
    let b = program.as_bytes();
    let (mut i, mut printing) = (0, false);
    while i < b.len() {
        let c = b[i];
        if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            match &program[start..i] {
                "print" | "printf" => printing = true,
                "system" | "getline" => return false,
                _ => {}
            }
            continue;
        }
        match c {
            b'@' => return false,
            b';' | b'}' | b'{' | b'\n' => printing = false,
            b'>' | b'|' if printing => return false,
            _ => {}
        }
        i += 1;
    }
    true
}
