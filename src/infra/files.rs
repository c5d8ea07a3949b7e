//! Programs that change files: the file-only mutations (`touch`, `mkdir`, `cp`, `mv`, `ln`,
//! `tee`, non-recursive `rm`) with the paths they write, recursive removal (build output or
//! not), terraform state as a target, `find` (its `-exec` payload judged as a command), and
//! archives, permissions and in-place editors.

use super::glob::may_name_state;
use super::judge::{Cmd, Out};
use super::path::{build_output, glob_dir, state_file};
use super::word::{Words, words};
use super::{PathUse, Tier, judge_payload};

/// Judges one command when it changes files; false for any other program.
pub(super) fn judge(cmd: &Cmd, out: &mut Out) -> bool {
    let name = cmd.name;
    out.prefix(&[name]);
    match name {
        "rm" | "unlink" | "rmdir" => rm(cmd, out),
        "cp" | "mv" | "ln" | "install" | "rename" => copy(cmd, out),
        "touch" | "mkdir" | "tee" => {
            let values = words!("-d -t -r -m --date --reference --mode");
            for (i, _) in cmd.words(values) {
                write(cmd, i, out, &format!("{name} writes"));
            }
        }
        "chmod" | "chown" | "chgrp" => chmod(cmd, out),
        "find" => find(cmd, out),
        "sort" if cmd.has("--compress-program") => {
            out.opaque("sort --compress-program runs a program")
        }
        "sort" => {
            let skip = output(cmd, out, "--output");
            let values = words!("-o --output -k -t -S -T --key --field-separator");
            for (i, _) in cmd.words(values).into_iter().filter(|&(i, _)| Some(i) != skip) {
                out.word(cmd, i, PathUse::Read);
            }
        }
        "uniq" | "xxd" => {
            let words = cmd.words(words!("-f -s -w -c -g -l -o -n"));
            if let Some(&(i, _)) = words.get(1) {
                write(cmd, i, out, &format!("{name} writes"));
            }
            if let Some(&(i, _)) = words.first() {
                out.word(cmd, i, PathUse::Read);
            }
        }
        "tar" => tar(cmd, out),
        "zip" | "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "zstd" | "unzstd" => {
            let reads = words!("-c --stdout -l --list -t --test");
            let listing = cmd.has_any(reads) || name != "zip" && cmd.short("clt");
            for (i, _) in cmd.words(words!("-b -S --suffix")) {
                match listing {
                    true => out.word(cmd, i, PathUse::Read),
                    false => write(cmd, i, out, &format!("{name} rewrites")),
                }
            }
        }
        "unzip" if cmd.short("lvtZ") => out.operands(cmd, 0, true),
        "unzip" | "patch" | "split" | "csplit" => {
            out.raise(Tier::Mutate, format!("{name} writes files its input names"));
            if let Some(dir) = cmd.value("-d").or_else(|| cmd.value("--directory")) {
                out.write(cmd.resolve(out, dir));
            }
        }
        "yq" => {
            let words = cmd.words(words!("--arg -I --indent --from-file --front-matter -p -o"));
            let inplace = cmd.has_any(words!("-i --inplace")) || cmd.short("i");
            for &(i, _) in words.iter().skip(1) {
                match inplace {
                    true => write(cmd, i, out, "yq -i rewrites"),
                    false => out.word(cmd, i, PathUse::Read),
                }
            }
        }
        _ => return false,
    }
    true
}

/// Writes the file of an output option (see `Cmd::output`); the index of its word, if apart.
pub(super) fn output(cmd: &Cmd, out: &mut Out, long: &str) -> Option<usize> {
    let name = cmd.name;
    match cmd.output(long)? {
        Ok(i) => {
            write(cmd, i, out, &format!("{name} writes"));
            Some(i)
        }
        Err(file) if file.contains(['$', '`']) => {
            out.raise(Tier::Mutate, format!("{name} writes a hidden path: {file}"));
            None
        }
        Err(file) if state_file(file) => {
            out.raise(Tier::Destroy, format!("{name} writes terraform state: {file}"));
            None
        }
        Err(file) => {
            out.write_file(cmd.resolve(out, file), format!("{name} writes {file}"));
            None
        }
    }
}

/// A file-only write of `args[i]`; terraform state destroys, a hidden path mutates, a pattern
/// is not file-only.
fn write(cmd: &Cmd, i: usize, out: &mut Out, what: &str) {
    let word = cmd.args[i].as_str();
    if cmd.hidden(i) {
        out.raise(Tier::Mutate, format!("{what} a hidden path: {word}"));
    } else if state_file(word) {
        out.raise(Tier::Destroy, format!("{what} terraform state: {word}"));
        out.word(cmd, i, PathUse::Write);
    } else if cmd.dynamic(i) {
        pattern(cmd, i, out, what);
    } else {
        out.write_file(cmd.resolve(out, word), format!("{what} {word}"));
    }
}

/// A pattern (`*`, `*.log`) given to a command that changes the files it names: which files
/// those are is not known here, so it is never file-only; one that may name terraform state
/// (`*`, `terraform.tfstat*`) destroys, unless it is in build output.
pub(super) fn pattern(cmd: &Cmd, i: usize, out: &mut Out, what: &str) {
    let word = cmd.args[i].as_str();
    let path = cmd.resolve(out, glob_dir(word));
    if may_name_state(word) && !build_output(&path, out.root) {
        out.raise(Tier::Destroy, format!("{what} a pattern that may name terraform state: {word}"));
    } else {
        out.raise(Tier::Mutate, format!("{what} the files of a pattern: {word}"));
    }
    out.write(path);
}

/// `rm`: recursive removal outside build output destroys, removing state destroys, the rest
/// is a file-only mutation.
fn rm(cmd: &Cmd, out: &mut Out) {
    let recursive = cmd.name == "rm" && (cmd.short("rR") || cmd.has("--recursive"));
    if recursive && cmd.fed("xargs") {
        out.raise(Tier::Destroy, "rm -r of paths from its input");
    }
    for (i, word) in cmd.words(Words::NONE) {
        if cmd.hidden(i) {
            let tier = if recursive { Tier::Destroy } else { Tier::Mutate };
            out.raise(tier, format!("{} of a hidden path: {word}", cmd.name));
            continue;
        }
        let path = cmd.resolve(out, if cmd.dynamic(i) { glob_dir(word) } else { word });
        if state_file(word) {
            out.raise(Tier::Destroy, format!("removes terraform state: {word}"));
            out.write(path);
        } else if !recursive && cmd.dynamic(i) {
            pattern(cmd, i, out, &format!("{} removes", cmd.name));
        } else if !recursive {
            out.write_file(path, format!("{} removes {word}", cmd.name));
        } else if build_output(&path, out.root) {
            out.raise(Tier::Mutate, "rm -r of build output");
            out.write(path);
        } else {
            out.raise(Tier::Destroy, "rm -r outside build output");
            out.write(path);
        }
    }
}

/// `cp`/`mv`/`ln`/`install`: the destination is written (and a moved source); terraform state
/// as a destination or a moved source destroys.
fn copy(cmd: &Cmd, out: &mut Out) {
    let name = cmd.name;
    let values = words!("-t --target-directory -S --suffix -m --mode -o --owner -g --group");
    let mut words = cmd.words(values);
    let target =
        cmd.args.iter().position(|a| a == "-t" || a == "--target-directory").map(|i| i + 1);
    let dest = match target.filter(|&i| i < cmd.args.len()) {
        Some(i) => Some(i),
        None => words.pop().map(|(i, _)| i),
    };
    if let Some(file) = cmd.value("--target-directory").filter(|_| target.is_none()) {
        out.write_file(cmd.resolve(out, file), format!("{name} writes into {file}"));
    }
    for (i, word) in words {
        match name {
            "mv" | "rename" if state_file(word) => {
                out.raise(Tier::Destroy, format!("{name} moves terraform state away: {word}"));
                out.word(cmd, i, PathUse::Write);
            }
            "mv" | "rename" => write(cmd, i, out, &format!("{name} moves")),
            "ln" => {}
            _ => out.word(cmd, i, PathUse::Read),
        }
    }
    match dest {
        Some(i) => write(cmd, i, out, &format!("{name} writes")),
        None => out.raise(Tier::Mutate, format!("{name} changes files")),
    }
}

/// `chmod`/`chown`/`chgrp`: a mutation; recursive outside the project destroys.
fn chmod(cmd: &Cmd, out: &mut Out) {
    let name = cmd.name;
    let recursive = cmd.short("R") || cmd.has("--recursive");
    let reference = cmd.args.iter().any(|a| a.starts_with("--reference"));
    let skip = usize::from(!reference);
    out.raise(Tier::Mutate, format!("{name} changes owners or permissions"));
    for (i, word) in cmd.words(Words::NONE).into_iter().skip(skip) {
        if cmd.hidden(i) {
            out.raise(Tier::Mutate, format!("{name} of a hidden path: {word}"));
            continue;
        }
        let path = cmd.resolve(out, if cmd.dynamic(i) { glob_dir(word) } else { word });
        if recursive && !path.starts_with(out.root) {
            out.raise(Tier::Destroy, format!("{name} -R outside the project"));
        }
        out.write(path);
    }
}

/// `find`: its roots are read; `-exec` payloads are judged as commands; `-delete` removes
/// (build output only mutates); `-fprint` writes.
fn find(cmd: &Cmd, out: &mut Out) {
    let start =
        cmd.args.iter().position(|a| a.starts_with('-') || matches!(a.as_str(), "(" | "!" | ")"));
    let roots = start.unwrap_or(cmd.args.len());
    let mut paths = Vec::new();
    for i in 0..roots {
        out.word(cmd, i, PathUse::Read);
        let word = if cmd.dynamic(i) { glob_dir(&cmd.args[i]) } else { &cmd.args[i] };
        paths.push(cmd.resolve(out, word));
    }
    if roots == 0 {
        paths.push(cmd.cwd.to_path_buf());
    }
    out.walked.clone_from(&paths);
    let mut i = roots;
    while let Some(arg) = cmd.args.get(i) {
        match arg.as_str() {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let end = cmd.args[i..]
                    .iter()
                    .position(|a| a == ";" || a == "+")
                    .map_or(cmd.args.len(), |e| e + i);
                let payload = Cmd { args: &cmd.args[..end], ..*cmd };
                judge_payload(&payload, i + 1, out);
                out.no_prefix();
                i = end;
            }
            "-delete" if paths.iter().all(|p| build_output(p, out.root)) => {
                out.raise(Tier::Mutate, "find -delete in build output")
            }
            "-delete" => out.raise(Tier::Destroy, "find -delete removes every match"),
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" if i + 1 < cmd.args.len() => {
                write(cmd, i + 1, out, "find writes");
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
}

/// tar's short options that take a value (the rest of the cluster, or the next word).
const TAR_VALUES: &str = "bCfFgHIKLNTVX";

/// tar's long options that take a value, when written apart.
const TAR_LONG_VALUES: Words = words!(
    "--file --directory --use-compress-program --to-command \
    --info-script --new-volume-script --rsh-command --rmt-command --exclude --exclude-from \
    --files-from --listed-incremental --index-file --volno-file --owner --group --mode --mtime \
    --transform --blocking-factor --record-size --tape-length --label --newer --after-date \
    --suffix --format --starting-file --newer-mtime"
);

/// tar options that run a program.
const TAR_RUNS: Words = words!(
    "--checkpoint-action --use-compress-program --info-script \
    --new-volume-script --rsh-command --rmt-command --to-command -I -F"
);

/// `tar`: options that run programs are opaque; listing reads, creating writes the archive,
/// extracting writes hidden paths.
fn tar(cmd: &Cmd, out: &mut Out) {
    let (mut modes, mut values) = (String::new(), Vec::new());
    let mut pending = String::new();
    let mut i = 0;
    while let Some(arg) = cmd.args.get(i) {
        i += 1;
        if let Some(long) = arg.strip_prefix("--").filter(|l| !l.is_empty()) {
            let (name, value) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
            let option = &arg[..name.len() + 2];
            let value = match value {
                Some(v) => Some(v),
                None if TAR_LONG_VALUES.has(option) => {
                    i += 1;
                    cmd.args.get(i - 1).map(String::as_str)
                }
                None => None,
            };
            values.push((option.to_string(), value.unwrap_or("")));
            continue;
        }
        let (letters, old) = match arg.strip_prefix('-') {
            Some(l) => (l, false),
            None if i == 1 => (arg.as_str(), true),
            None if !pending.is_empty() => {
                values.push((format!("-{}", pending.remove(0)), arg.as_str()));
                continue;
            }
            None => continue,
        };
        for (k, c) in letters.char_indices() {
            if !TAR_VALUES.contains(c) {
                modes.push(c);
            } else if old {
                pending.push(c);
            } else {
                let rest = &letters[k + 1..];
                let value = match rest.is_empty() {
                    true => cmd.args.get(i).inspect(|_| i += 1).map_or("", String::as_str),
                    false => rest,
                };
                values.push((format!("-{c}"), value));
                break;
            }
        }
    }
    let value = |names: &[&str]| values.iter().rev().find(|(o, _)| names.contains(&o.as_str()));
    if let Some((option, _)) = values.iter().find(|(o, _)| TAR_RUNS.has(o)) {
        out.opaque(format!("tar {option} runs a program"));
    }
    let archive = value(&["-f", "--file"]).map(|(_, v)| *v);
    let local = values.iter().any(|(o, _)| o == "--force-local");
    if archive.is_some_and(|a| !local && a.split('/').next().is_some_and(|h| h.contains(':'))) {
        out.raise(Tier::Mutate, "tar opens a remote archive through a remote shell");
    }
    let mode = |short: char, long: &str| modes.contains(short) || cmd.has(long);
    if mode('t', "--list") || mode('d', "--diff") || cmd.has("--compare") {
        out.operands(cmd, 0, true);
    } else if mode('x', "--extract") || cmd.has("--get") {
        out.raise(Tier::Mutate, "tar extracts files");
        if let Some((_, dir)) = value(&["-C", "--directory"]) {
            out.write(cmd.resolve(out, dir));
        }
    } else if let Some(file) = archive.filter(|_| {
        mode('c', "--create")
            || mode('r', "--append")
            || mode('u', "--update")
            || mode('A', "--catenate")
    }) {
        match file {
            "-" => {}
            f if f.contains(['$', '`', '*', '?', '[']) => {
                out.raise(Tier::Mutate, format!("tar writes a hidden path: {f}"))
            }
            f if state_file(f) => {
                out.raise(Tier::Destroy, format!("tar writes terraform state: {f}"));
                out.write(cmd.resolve(out, f));
            }
            f => out.write_file(cmd.resolve(out, f), format!("tar writes {f}")),
        }
    } else {
        out.raise(Tier::Mutate, "tar changes files");
    }
    for (_, file) in values.iter().filter(|(o, _)| words!("--index-file --volno-file").has(o)) {
        out.write(cmd.resolve(out, file));
    }
}
