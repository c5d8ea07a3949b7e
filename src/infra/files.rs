//! Programs that change files: the file-only mutations (`touch`, `mkdir`, `cp`, `mv`, `ln`,
//! `tee`, non-recursive `rm`) with the paths they write, recursive removal (build output or
//! not), terraform state as a target, `find` (its `-exec` payload judged as a command), and
//! archives, permissions and in-place editors.

use super::judge::{Cmd, Out};
use super::path::{build_output, glob_dir, state_file};
use super::{PathUse, Tier, judge_payload};

/// Judges one command when it changes files; false for any other program.
pub(super) fn judge(cmd: &Cmd, out: &mut Out) -> bool {
    let name = cmd.name;
    out.prefix(&[name]);
    match name {
        "rm" | "unlink" | "rmdir" => rm(cmd, out),
        "cp" | "mv" | "ln" | "install" | "rename" => copy(cmd, out),
        "touch" | "mkdir" | "tee" => {
            let values = "-d -t -r -m --date --reference --mode";
            for (i, _) in cmd.words(values) {
                write(cmd, i, out, &format!("{name} writes"));
            }
        }
        "chmod" | "chown" | "chgrp" => chmod(cmd, out),
        "find" => find(cmd, out),
        "sort" => {
            let skip = output(cmd, out, "--output");
            let values = "-o --output -k -t -S -T --key --field-separator";
            for (i, _) in cmd.words(values).into_iter().filter(|&(i, _)| Some(i) != skip) {
                out.word(cmd, i, PathUse::Read);
            }
        }
        "uniq" | "xxd" => {
            let words = cmd.words("-f -s -w -c -g -l -o -n");
            if let Some(&(i, _)) = words.get(1) {
                write(cmd, i, out, &format!("{name} writes"));
            }
            if let Some(&(i, _)) = words.first() {
                out.word(cmd, i, PathUse::Read);
            }
        }
        "tar" => tar(cmd, out),
        "zip" | "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "zstd" | "unzstd" => {
            let reads = "-c --stdout -l --list -t --test";
            let listing = cmd.has_any(reads) || name != "zip" && cmd.short("clt");
            for (i, _) in cmd.words("-b -S --suffix") {
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
            let words = cmd.words("--arg -I --indent --from-file --front-matter -p -o");
            let inplace = cmd.has_any("-i --inplace") || cmd.short("i");
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

/// A file-only write of `args[i]`; terraform state destroys, a hidden path mutates.
fn write(cmd: &Cmd, i: usize, out: &mut Out, what: &str) {
    let word = cmd.args[i].as_str();
    if cmd.hidden(i) {
        out.raise(Tier::Mutate, format!("{what} a hidden path: {word}"));
    } else if state_file(word) {
        out.raise(Tier::Destroy, format!("{what} terraform state: {word}"));
        out.word(cmd, i, PathUse::Write);
    } else {
        let path = cmd.resolve(out, if cmd.dynamic(i) { glob_dir(word) } else { word });
        out.write_file(path, format!("{what} {word}"));
    }
}

/// `rm`: recursive removal outside build output destroys, removing state destroys, the rest
/// is a file-only mutation.
fn rm(cmd: &Cmd, out: &mut Out) {
    let recursive = cmd.name == "rm" && (cmd.short("rR") || cmd.has("--recursive"));
    if recursive && cmd.fed("xargs") {
        out.raise(Tier::Destroy, "rm -r of paths from its input");
    }
    for (i, word) in cmd.words("") {
        if cmd.hidden(i) {
            let tier = if recursive { Tier::Destroy } else { Tier::Mutate };
            out.raise(tier, format!("{} of a hidden path: {word}", cmd.name));
            continue;
        }
        let path = cmd.resolve(out, if cmd.dynamic(i) { glob_dir(word) } else { word });
        if state_file(word) {
            out.raise(Tier::Destroy, format!("removes terraform state: {word}"));
            out.write(path);
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
    let values = "-t --target-directory -S --suffix -m --mode -o --owner -g --group";
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
    for (i, word) in cmd.words("").into_iter().skip(skip) {
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

/// `tar`: listing reads, creating writes the archive, extracting writes hidden paths.
fn tar(cmd: &Cmd, out: &mut Out) {
    let first = cmd.args.first().map_or("", String::as_str);
    let bundle = if first.starts_with("--") { "" } else { first.trim_start_matches('-') };
    let mode = |short: char, long: &str| bundle.contains(short) || cmd.has(long);
    let archive = cmd.value("-f").or_else(|| cmd.value("--file")).or_else(|| {
        (bundle.contains('f') && !first.starts_with('-'))
            .then(|| cmd.args.get(1).map(String::as_str))
            .flatten()
    });
    if mode('t', "--list") {
        out.operands(cmd, 0, true);
    } else if mode('x', "--extract") || cmd.has("--get") {
        out.raise(Tier::Mutate, "tar extracts files");
        if let Some(dir) = cmd.value("-C").or_else(|| cmd.value("--directory")) {
            out.write(cmd.resolve(out, dir));
        }
    } else if let Some(file) = archive.filter(|_| mode('c', "--create") || mode('r', "--append")) {
        let path = cmd.resolve(out, file);
        out.write_file(path, format!("tar writes {file}"));
    } else {
        out.raise(Tier::Mutate, "tar changes files");
    }
}
