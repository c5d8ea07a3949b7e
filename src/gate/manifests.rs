//! What a Kubernetes mutation would send to the cluster, read for the team's policies
//! (`policy.rs` judges it): the manifests of `kubectl` (or `oc`) `apply|create|replace -f`,
//! the pod of `kubectl run`, the templates `helm template` renders for `helm
//! install|upgrade`. Fail closed: while any policy is in force, what cannot be read is
//! refused (standard input, a URL, a kustomization, a hidden word or directory, a file that
//! is not a regular one, a post-renderer, `--overrides`), and so are the mutations whose
//! effect no manifest shows (`patch`, `set`, `edit`, `debug`, `oc new-app`). The files a
//! lone `kubectl apply -f` names are copied to a private file as judged, and the command
//! that runs applies that copy: what was judged is what is sent.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::policy::{Judged, judge, list};
use crate::shell::{Script, Simple};
use crate::tools::ToolContext;
use crate::tools::run::sandbox_spec;

/// Manifest bytes read for one command at most.
const MAX_MANIFEST_BYTES: usize = 8 << 20;

/// Mutations whose effect no manifest shows: refused while a policy is in force.
const UNJUDGED: &[&str] = &["patch", "set", "edit", "debug", "new-app", "process", "apply-patch"];

/// Judges what `script` would send to a cluster, into `out`.
pub(super) fn judge_manifests(
    script: &Script,
    out: &mut Judged,
    timeout: Duration,
    ctx: &ToolContext,
) {
    let env = |name: &str| std::env::var(name).ok();
    let dirs = crate::infra::scope::dirs(script, ctx.cwd, &env);
    let mut found = Found::default();
    let mut judged = false;
    let mut files_of: Option<(&Simple, Option<&Path>)> = None;
    for (simple, dir) in script.commands.iter().zip(&dirs) {
        let dir = dir.as_deref();
        match read_command(simple, dir, timeout, ctx, &mut found) {
            Read::Nothing => continue,
            Read::Judged => judged = true,
            Read::Files => {
                judged = true;
                files_of = Some((simple, dir));
            }
        }
        // A secret's value would change what is sent after it was judged.
        if simple.argv.iter().any(|w| !crate::secret::placeholders_in(w).is_empty()) {
            found
                .unread
                .push("a secret's placeholder in its words (its value is not judged)".into());
        }
    }
    if !judged {
        return;
    }
    let inputs = inputs_of(&mut found);
    // The files judged are the files sent: a lone command applies a private copy.
    if let Some((simple, dir)) = files_of
        && found.unread.is_empty()
    {
        match lone(script, simple) {
            true => match copy_judged(simple, dir, &found, ctx) {
                Ok(prepared) => out.prepared = Some(prepared),
                Err(why) => found.unread.push(why),
            },
            false => found.unread.push(
                "the files of a `kubectl apply -f` in a script with other commands (run it as a \
                 command of its own, so the files judged are the files sent)"
                    .into(),
            ),
        }
    }
    if !found.unread.is_empty() {
        let policies = crate::config::policy_sources::in_force(ctx.cwd, ctx.config_dir);
        if !policies.files.is_empty() || policies.broken().is_some() {
            out.refused = Some(format!(
                "Refused: the team's policies cannot judge what this command would send to the \
                 cluster, so it does not run (nothing was asked):\n{}\nWrite the manifests to \
                 files in the workspace and apply those with a command of its own (`kubectl \
                 apply -f FILE`); render a kustomization first (`kubectl kustomize DIR > FILE`).",
                list(&found.unread)
            ));
            out.prepared = None;
            return;
        }
        out.prepared = None;
    }
    judge(&inputs, "the manifest", out, ctx);
}

/// What reading one command gave.
enum Read {
    /// Not a Kubernetes mutation.
    Nothing,
    /// Judged (or found unreadable).
    Judged,
    /// Judged, with files named by `-f`.
    Files,
}

/// Reads what one command of the script would send, into `found`.
fn read_command(
    simple: &Simple,
    dir: Option<&Path>,
    timeout: Duration,
    ctx: &ToolContext,
    found: &mut Found,
) -> Read {
    let program = simple.program().unwrap_or("");
    let kube = matches!(program, "kubectl" | "oc");
    if !kube && program != "helm" {
        return Read::Nothing;
    }
    // The subcommand where the classifier finds it; a word that names a mutation
    // anywhere, with an option before the subcommand that is not known, is unclear.
    let named = simple.argv.iter().skip(1).any(|w| {
        matches!(w.as_str(), "apply" | "create" | "replace" | "run" | "install" | "upgrade")
            || UNJUDGED.contains(&w.as_str())
    });
    let sub = match crate::infra::kube_subcommand_at(program, &simple.argv[1..]) {
        Ok(at) => at.and_then(|i| simple.argv.get(i + 1)).map(String::as_str),
        Err(option) if named => {
            found.unread.push(format!(
                "the subcommand (an option the gate does not know comes first: {option}; \
                 write it after the subcommand)"
            ));
            return Read::Judged;
        }
        Err(_) => None,
    };
    let has =
        |word: &str| simple.argv.iter().any(|w| w == word || w.starts_with(&format!("{word}=")));
    match (kube, sub) {
        (true, Some("apply" | "create" | "replace")) => {
            for option in ["--raw", "--edit"].into_iter().filter(|o| has(o)) {
                found.unread.push(format!("kubectl {option} (what it sends is not the file)"));
            }
            if kubectl_files(simple, dir, found) { Read::Files } else { Read::Judged }
        }
        (true, Some("run")) => {
            run_pod(simple, found);
            Read::Judged
        }
        (true, Some(sub)) if UNJUDGED.contains(&sub) => {
            found.unread.push(format!(
                "`{sub}` changes objects no manifest shows (change the manifest and apply it)"
            ));
            Read::Judged
        }
        (false, Some(sub @ ("install" | "upgrade"))) => {
            match dir {
                Some(dir) => helm_templates(simple, dir, sub == "upgrade", timeout, ctx, found),
                None => found.unread.push("helm: the directory it runs in is hidden".into()),
            }
            Read::Judged
        }
        _ => Read::Nothing,
    }
}

/// The documents of what was read, as JSON text, for the policies; a document they cannot
/// tell the kind of (the API server may take it from elsewhere) goes to `unread`.
fn inputs_of(found: &mut Found) -> Vec<String> {
    let mut inputs = Vec::new();
    for (name, text) in &found.texts {
        match crate::policy::manifests::documents(text) {
            Ok(docs) => {
                let nameless = docs.iter().any(|d| {
                    !d.get("kind").is_some_and(Value::is_string)
                        || !d.get("apiVersion").is_some_and(Value::is_string)
                });
                if nameless {
                    found.unread.push(format!("{name}: a document without a kind or apiVersion"));
                }
                inputs.extend(docs.iter().map(Value::to_string));
            }
            Err(why) => found.unread.push(format!("{name}: {why}")),
        }
    }
    inputs.extend(found.inputs.iter().map(Value::to_string));
    inputs
}

/// What a command's manifests are: texts read, documents made, and what could not be read.
#[derive(Default)]
pub(super) struct Found {
    /// (name, text) of each file or rendering.
    pub texts: Vec<(String, String)>,
    /// Documents made from a command's words (`kubectl run`).
    pub inputs: Vec<Value>,
    /// What could not be read, and why.
    pub unread: Vec<String>,
    bytes: usize,
}

/// A command of its own: the script's one command with a program (after any `cd`), with
/// no wrapper and no redirection.
fn lone(script: &Script, simple: &Simple) -> bool {
    let others = script
        .commands
        .iter()
        .filter(|c| !std::ptr::eq(*c, simple))
        .any(|c| !matches!(c.program(), None | Some("cd")));
    !others && simple.wrappers.is_empty() && simple.redirects.is_empty() && !simple.piped
}

/// pflag's booleans (`--privileged=1`, `=t`, `=True`).
fn flag_true(value: &str) -> bool {
    matches!(value, "1" | "t" | "T" | "true" | "TRUE" | "True")
}

/// The pod `kubectl run NAME --image=IMAGE [--privileged]` would create; `--overrides`
/// (any JSON merged in) cannot be judged.
fn run_pod(simple: &Simple, found: &mut Found) {
    let mut name = None;
    let mut image = None;
    let mut privileged = false;
    let mut words = simple.argv.iter().skip_while(|w| *w != "run").skip(1);
    while let Some(word) = words.next() {
        match word.as_str() {
            "--image" => image = words.next().cloned(),
            w if w.starts_with("--image=") => image = Some(w["--image=".len()..].to_string()),
            "--privileged" => privileged = true,
            w if w.starts_with("--privileged=") => privileged = flag_true(&w[13..]),
            w if w.starts_with("--overrides") => {
                found.unread.push("kubectl run --overrides (any JSON merged in)".into());
            }
            "--" => break,
            w if !w.starts_with('-') && name.is_none() => name = Some(w.to_string()),
            _ => {}
        }
    }
    let name = name.unwrap_or_default();
    found.inputs.push(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{
            "name": name,
            "image": image.unwrap_or_default(),
            "securityContext": {"privileged": privileged},
        }]},
    }));
}

/// The `-f` values of `simple` (each comma-separated list split, as kubectl does), with
/// whether each is hidden, and whether `-R` is on; a kustomization goes to `unread`.
fn named_files(simple: &Simple, found: &mut Found) -> (Vec<(String, bool)>, bool) {
    let mut named = Vec::new();
    let mut recursive = false;
    let hidden = |i: usize| simple.dynamic.get(i).copied().unwrap_or(false);
    let mut i = 1;
    while let Some(word) = simple.argv.get(i) {
        let mut value = None;
        if let Some(long) = word.strip_prefix("--") {
            match long.split_once('=') {
                Some(("filename", v)) => value = Some((v.to_string(), hidden(i))),
                Some(("recursive", v)) => recursive = flag_true(v),
                Some(("kustomize", _)) => found.unread.push("a kustomization (-k)".into()),
                None if long == "filename" => {
                    i += 1;
                    value = simple.argv.get(i).map(|v| (v.clone(), hidden(i)));
                }
                None if long == "recursive" => recursive = true,
                None if long == "kustomize" => {
                    found.unread.push("a kustomization (-k)".into());
                    i += 1;
                }
                _ => {}
            }
        } else if let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty()) {
            // Short flags, clustered as pflag reads them: `-Rf DIR`, `-fFILE`, `-f=FILE`. A
            // cluster that mixes the file flags with others (`-Rl app=x`) is not read apart.
            match file_cluster(cluster) {
                Cluster::Other => {}
                Cluster::Mixed => {
                    found.unread.push(format!("{word} (write -f, -k and -R on their own)"))
                }
                Cluster::Files { recursive: r, value: v, kustomize } => {
                    recursive |= r;
                    let v = match v {
                        Some(attached) => Some((attached, hidden(i))),
                        None => {
                            i += 1;
                            simple.argv.get(i).map(|v| (v.clone(), hidden(i)))
                        }
                    };
                    if kustomize {
                        found.unread.push("a kustomization (-k)".into());
                    } else {
                        value = v;
                    }
                }
                Cluster::Recursive => recursive = true,
            }
        }
        if let Some((v, hidden)) = value {
            named.extend(v.split(',').filter(|p| !p.is_empty()).map(|p| (p.to_string(), hidden)));
        }
        i += 1;
    }
    (named, recursive)
}

/// What a cluster of short flags (`Rf`, `fFILE`, `l`) is to the file options.
#[derive(Debug, PartialEq, Eq)]
enum Cluster {
    /// No file flag in it.
    Other,
    /// `-R` alone.
    Recursive,
    /// `-f` or `-k` (perhaps after `R`), with its value when attached.
    Files { recursive: bool, value: Option<String>, kustomize: bool },
    /// File flags mixed with others.
    Mixed,
}

/// Reads a cluster as pflag does: flags one by one, and a flag that takes a value takes
/// the rest of the cluster (or, when nothing is left, the next word).
fn file_cluster(cluster: &str) -> Cluster {
    // kubectl's short flags that take a value.
    const VALUED: &str = "fklnosvcpi";
    let mut recursive = false;
    let mut others = false;
    for (at, flag) in cluster.char_indices() {
        match flag {
            'R' => recursive = true,
            'f' | 'k' if others => return Cluster::Mixed,
            'f' | 'k' => {
                let rest = &cluster[at + 1..];
                let rest = rest.strip_prefix('=').unwrap_or(rest);
                let value = (!rest.is_empty()).then(|| rest.to_string());
                return Cluster::Files { recursive, value, kustomize: flag == 'k' };
            }
            flag if VALUED.contains(flag) => {
                return if recursive { Cluster::Mixed } else { Cluster::Other };
            }
            _ => others = true,
        }
    }
    match (recursive, others) {
        (true, false) => Cluster::Recursive,
        (true, true) => Cluster::Mixed,
        _ => Cluster::Other,
    }
}

/// Reads the files `-f` names, in `dir` (a directory: its YAML and JSON files, and those
/// below it with `-R`); whether any file was named.
fn kubectl_files(simple: &Simple, dir: Option<&Path>, found: &mut Found) -> bool {
    let (named, recursive) = named_files(simple, found);
    for (name, hidden) in &named {
        if *hidden {
            found.unread.push(format!("{name} (a hidden word)"));
            continue;
        }
        if name == "-" || name.contains("://") || name.starts_with("/dev/") {
            found.unread.push(format!("{name} (not a local file)"));
            continue;
        }
        let Some(dir) = dir.or(Path::new(name).is_absolute().then_some(Path::new("/"))) else {
            found.unread.push(format!("{name} (the directory it runs in is hidden)"));
            continue;
        };
        let home = std::env::var_os("HOME");
        let path = match (name.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => Path::new(&home).join(rest),
            _ => dir.join(name),
        };
        let mut files = Vec::new();
        manifest_files(&path, recursive, 0, &mut files);
        if files.is_empty() {
            files.push(path);
        }
        for file in files {
            read_manifest(&file, found);
        }
    }
    !named.is_empty()
}

/// Reads one manifest: a regular file only (never blocks on a FIFO, never a device).
fn read_manifest(file: &Path, found: &mut Found) {
    use std::io::Read;
    let shown = file.display().to_string();
    let opened = crate::sys::own_file::project_options()
        .read(true)
        .open(file)
        .and_then(|f| f.metadata().map(|m| (f, m)));
    let (file, meta) = match opened {
        Ok(opened) => opened,
        Err(err) => return found.unread.push(format!("{shown}: {err}")),
    };
    if !meta.is_file() {
        return found.unread.push(format!("{shown} (not a regular file)"));
    }
    if found.bytes + meta.len() as usize > MAX_MANIFEST_BYTES {
        return found.unread.push(format!("{shown} (over 8 MiB in all)"));
    }
    let mut text = String::new();
    match file.take(MAX_MANIFEST_BYTES as u64).read_to_string(&mut text) {
        Ok(_) => {
            found.bytes += text.len();
            found.texts.push((shown, text));
        }
        Err(err) => found.unread.push(format!("{shown}: {err}")),
    }
}

/// The YAML and JSON files of the directory `path` (below it too when `recursive`, 16
/// levels at most); nothing when `path` is not a directory.
fn manifest_files(path: &Path, recursive: bool, depth: usize, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(path) else { return };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            if recursive && depth < 16 {
                manifest_files(&p, true, depth + 1, files);
            }
        } else if p.extension().is_some_and(|e| e == "yaml" || e == "yml" || e == "json") {
            files.push(p);
        }
    }
}

/// The command that applies what was judged: the same words, the `-f`, `-R` and `-k`
/// options replaced by one `-f` of a private copy of the files read (in the directory the
/// command ran in); with the copy's path and bytes (`Gate::shown_plan`, checked again
/// before it runs and revealed to the sandbox).
fn copy_judged(
    simple: &Simple,
    dir: Option<&Path>,
    found: &Found,
    ctx: &ToolContext,
) -> Result<(String, PathBuf, Vec<u8>), String> {
    // Written out again, a word with an expansion would change its meaning.
    if simple.dynamic.iter().any(|d| *d) || simple.assigns.iter().any(|(_, v)| v.contains('$')) {
        return Err("a word with an expansion in the command (write its value out)".into());
    }
    let texts: Vec<&str> = found.texts.iter().map(|(_, t)| t.as_str()).collect();
    let bytes = texts.join("\n---\n").into_bytes();
    let path = super::plan::scratch_file(ctx.config_dir, "yaml", &bytes)
        .map_err(|err| format!("a private copy of the manifests: {err}"))?;
    let mut words: Vec<String> = Vec::new();
    let mut skip_next = false;
    let mut placed = false;
    let program = simple.program().unwrap_or("");
    let at = crate::infra::kube_subcommand_at(program, &simple.argv[1..]).ok().flatten();
    for (i, word) in simple.argv.iter().enumerate() {
        if skip_next {
            skip_next = false;
            continue;
        }
        // The words the file options are (`named_files` read them: the same rules).
        let long = word.strip_prefix("--");
        let file_word = match (long, word.strip_prefix('-')) {
            (Some(l), _) => {
                let name = l.split('=').next().unwrap_or(l);
                let file = matches!(name, "filename" | "kustomize" | "recursive");
                skip_next = file && !l.contains('=') && name != "recursive";
                file
            }
            (None, Some(cluster)) if i > 0 && !cluster.is_empty() => match file_cluster(cluster) {
                Cluster::Files { value, .. } => {
                    skip_next = value.is_none();
                    true
                }
                Cluster::Recursive => true,
                Cluster::Other | Cluster::Mixed => false,
            },
            _ => false,
        };
        if file_word {
            continue;
        }
        words.push(word.clone());
        if !placed && at.is_some_and(|a| a + 1 == i) {
            words.push("-f".into());
            words.push(path.display().to_string());
            placed = true;
        }
    }
    if !placed {
        super::plan::remove_scratch(std::slice::from_ref(&path));
        return Err("where the subcommand is (write the options after it)".into());
    }
    let assigns = simple.assigns.iter().map(|(k, v)| format!("{k}={}", super::plan::quote(v)));
    let mut command: Vec<String> = assigns.collect();
    command.extend(words.iter().map(|w| super::plan::quote(w)));
    if let Some(dir) = dir.filter(|d| *d != ctx.cwd) {
        command.insert(0, format!("cd {} &&", super::plan::quote(&dir.display().to_string())));
    }
    Ok((command.join(" "), path, bytes))
}

/// helm options of install and upgrade that take the next word.
const HELM_VALUED: &[&str] = &[
    "-f",
    "--values",
    "--set",
    "--set-string",
    "--set-file",
    "--set-json",
    "--set-literal",
    "--version",
    "-n",
    "--namespace",
    "--repo",
    "--kube-context",
    "--kubeconfig",
    "--timeout",
    "--description",
    "--history-max",
    "--post-renderer",
    "--post-renderer-args",
    "--username",
    "--password",
    "--ca-file",
    "--cert-file",
    "--key-file",
    "--keyring",
    "--name-template",
    "--output",
    "-o",
    "--labels",
    "-l",
    "--registry-config",
    "--repository-config",
    "--repository-cache",
    "--burst-limit",
    "--qps",
];

/// Why what this install or upgrade sends cannot be judged by rendering it here, if so: a
/// chart that is not a local directory and is not pinned (`--version`), values from a URL,
/// or a local chart whose templates ask the cluster (`lookup`: empty when rendered here)
/// or depend on it (`.Capabilities`).
fn helm_unjudgeable(simple: &Simple, dir: &Path) -> Option<String> {
    let at = simple.argv.iter().position(|w| w == "install" || w == "upgrade")?;
    let mut positionals = Vec::new();
    let mut words = simple.argv.iter().skip(at + 1);
    let mut pinned = false;
    while let Some(word) = words.next() {
        let name = word.split('=').next().unwrap_or(word);
        pinned |= name == "--version";
        if HELM_VALUED.contains(&name) {
            let value = if word.contains('=') {
                word.split_once('=').map(|(_, v)| v.to_string())
            } else {
                words.next().cloned()
            };
            if matches!(name, "-f" | "--values") && value.is_some_and(|v| v.contains("://")) {
                return Some("helm values from a URL (they may change before the install)".into());
            }
        } else if !word.starts_with('-') {
            positionals.push(word.clone());
        }
    }
    let chart = positionals.last()?;
    let local = dir.join(chart);
    if !local.is_dir() {
        return (!pinned).then(|| {
            format!("the chart {chart} is not a local directory and not pinned (add --version)")
        });
    }
    let mut files = Vec::new();
    collect_templates(&local.join("templates"), 0, &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        if text.contains("lookup") || text.contains(".Capabilities") {
            return Some(format!(
                "{}: a template that asks the cluster (lookup, .Capabilities) renders otherwise here",
                file.display()
            ));
        }
    }
    None
}

/// Every file below a chart's `templates` (any extension: `.tpl` helpers too).
fn collect_templates(dir: &Path, depth: usize, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() && depth < 16 {
            collect_templates(&path, depth + 1, files);
        } else if path.is_file() && !files.contains(&path) {
            files.push(path);
        }
    }
}

/// Options of `helm install|upgrade` that `helm template` does not take (with a value:
/// `true`).
const NOT_TEMPLATE: &[(&str, bool)] = &[
    ("--install", false),
    ("-i", false),
    ("--atomic", false),
    ("--wait", false),
    ("--wait-for-jobs", false),
    ("--force", false),
    ("--reset-values", false),
    ("--reuse-values", false),
    ("--reset-then-reuse-values", false),
    ("--cleanup-on-fail", false),
    ("--history-max", true),
    ("--timeout", true),
    ("--description", true),
];

/// The templates `helm template` renders for this install or upgrade, run in `dir`; an
/// upgrade is rendered both as an install and as an upgrade (`--is-upgrade`), so a chart
/// that renders differently on upgrade is judged as it would install.
fn helm_templates(
    simple: &Simple,
    dir: &Path,
    upgrade: bool,
    timeout: Duration,
    ctx: &ToolContext,
    found: &mut Found,
) {
    if simple.dynamic.iter().any(|d| *d) {
        return found.unread.push("helm: a hidden word".into());
    }
    // A post-renderer is a program of the model's: run before anyone is asked, and free
    // to print one thing now and another at install time.
    if simple.argv.iter().any(|w| w.starts_with("--post-renderer")) {
        return found
            .unread
            .push("helm --post-renderer (what it prints is not what installs)".into());
    }
    if let Some(why) = helm_unjudgeable(simple, dir) {
        return found.unread.push(why);
    }
    let on_path = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("helm").is_file()));
    if !on_path || !crate::child::sandbox().usable() {
        return found
            .unread
            .push("the chart's templates (helm template needs helm and the sandbox here)".into());
    }
    let mut args = vec!["helm".to_string(), "template".to_string()];
    // The options before the subcommand (`helm -n prod upgrade`) and everything after it.
    let at = simple.argv.iter().position(|w| w == "install" || w == "upgrade").unwrap_or(0);
    let before = simple.argv.get(1..at).unwrap_or_default();
    let after = simple.argv.get(at + 1..).unwrap_or_default();
    let mut words = before.iter().chain(after);
    while let Some(word) = words.next() {
        let name = word.split('=').next().unwrap_or(word);
        match NOT_TEMPLATE.iter().find(|(n, _)| *n == name) {
            Some((_, true)) if !word.contains('=') => {
                words.next();
            }
            Some(_) => {}
            None => args.push(word.clone()),
        }
    }
    let quoted: Vec<String> = args.iter().map(|a| super::plan::quote(a)).collect();
    let cd = format!("cd {} && ", super::plan::quote(&dir.display().to_string()));
    let mut renders = vec![format!("{cd}{}", quoted.join(" "))];
    if upgrade {
        renders.push(format!("{cd}{} --is-upgrade", quoted.join(" ")));
    }
    for command in renders {
        let profile = crate::sandbox::Profile::Cloud(crate::sandbox::State::Scratch);
        let rendered = sandbox_spec(profile, ctx).and_then(|spec| {
            let captured = super::plan::capture(&command, timeout, ctx, Some(&spec));
            spec.clean();
            captured
        });
        match rendered {
            Ok(captured) if captured.code == Ok(0) => {
                found.texts.push(("helm template".into(), captured.stdout));
            }
            Ok(captured) => found.unread.push(format!(
                "helm template failed: {}",
                crate::text::clip(captured.stderr.trim(), 2_000)
            )),
            Err(err) => found.unread.push(format!("helm template: {err:?}")),
        }
    }
}

#[cfg(test)]
#[path = "manifests_tests.rs"]
mod tests;
