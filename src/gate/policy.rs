//! The team's policies on what a mutation would change, before anyone is asked
//! (`crate::policy`): a terraform apply's or destroy's plan JSON (`judge::prepare`),
//! the manifests of `kubectl apply|create|replace -f FILE` (each YAML document alone, as
//! conftest reads them), the pod of `kubectl run`, and the templates `helm template`
//! renders for `helm install|upgrade` (when helm is installed, in the sandbox a plan
//! gets). A manifest that cannot be read, and a terraform apply or destroy whose plan
//! cannot be made, are refused while any policy is in force. A `deny` or
//! `violation` refuses the call in every mode (`Judged::refused`, laid into `Gate::refused`:
//! no question, the messages to the model); a `warn` goes into the question and the result
//! (`Judged::content`, `Judged::notes`). While a
//! policy in force is broken, every command judged here is refused with why.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::policy::Findings;
use crate::shell::{Script, Simple};
use crate::tools::ToolContext;
use crate::tools::run::sandbox_spec;

/// What the policies said of a call; `judge` lays it into the call's `Gate`.
#[derive(Debug, Default)]
pub(super) struct Judged {
    /// Why the call is refused in every mode (no question; the messages to the model).
    pub refused: Option<String>,
    /// Shown with the question (Markdown).
    pub content: Vec<String>,
    /// Added to the call's result.
    pub notes: Vec<String>,
}

/// Manifest bytes read for one command at most.
const MAX_MANIFEST_BYTES: usize = 8 << 20;

/// Judges `inputs` (JSON documents; `what` names them for the messages).
pub(super) fn judge(inputs: &[String], what: &str, out: &mut Judged, ctx: &ToolContext) {
    let policies = crate::config::policy_sources::in_force(ctx.cwd, ctx.config_dir);
    if let Some(why) = policies.broken() {
        return broken(out, &why);
    }
    let mut findings = Findings::default();
    for input in inputs {
        match policies.evaluate(input) {
            Ok(found) => findings.extend(found),
            Err(why) => return broken(out, &why),
        }
    }
    if !findings.deny.is_empty() {
        out.refused = Some(format!(
            "Refused by policy: {what} breaks the team's policies (nothing was asked and \
             nothing ran):\n{}\nChange the code so that it complies; a person changes a \
             policy, an answer cannot.",
            list(&findings.deny)
        ));
    }
    if !findings.warn.is_empty() {
        out.content.push(format!("**Policy warnings**\n{}", list(&findings.warn)));
        out.notes.push(format!("Policy warnings:\n{}", list(&findings.warn)));
    }
}

/// A terraform apply or destroy whose plan cannot be made first (`why`): refused while any
/// policy is in force, since nobody can judge what it would change.
pub(super) fn unjudged(why: &str, out: &mut Judged, ctx: &ToolContext) {
    let policies = crate::config::policy_sources::in_force(ctx.cwd, ctx.config_dir);
    if let Some(broken_why) = policies.broken() {
        return broken(out, &broken_why);
    }
    if !policies.files.is_empty() {
        out.refused = Some(format!(
            "Refused: the team's policies judge every apply and destroy by its plan, and \
             this one's plan cannot be made first ({why}), so it does not run (nothing was \
             asked). Run what must come before (`terraform init`…) as a command of its \
             own, then the apply or destroy alone, with options the gate can carry into a \
             plan, so that its plan is shown and judged."
        ));
    }
}

/// The first terraform, tofu or terragrunt apply or destroy among a command's normalised
/// lines and patterns (`infra::Classified::lines`, `patterns`: a hidden subcommand, `$T` or
/// `*`, may be either), if any.
pub(super) fn apply_line<'a>(lines: &'a [String], patterns: &'a [String]) -> Option<&'a str> {
    lines.iter().chain(patterns).map(String::as_str).find(|line| {
        let mut words = line.split(' ');
        let program = words.next().unwrap_or("");
        let program = program.rsplit('/').next().unwrap_or(program);
        // The subcommand: the first word that is not an option (each call also has a
        // line in the canonical form, global options dropped, `apply -destroy` as destroy).
        matches!(program, "terraform" | "tofu" | "terragrunt")
            && words.find(|w| !w.starts_with('-')).is_some_and(|sub| {
                matches!(sub, "apply" | "destroy" | "apply-all" | "destroy-all")
                    || sub.contains(['$', '`', '*'])
            })
    })
}

fn broken(out: &mut Judged, why: &str) {
    out.refused = Some(format!(
        "Refused: a policy in force is broken, and applies are refused until it is fixed \
         (reads and plans go on):\n{why}"
    ));
}

fn list(messages: &[String]) -> String {
    messages.iter().map(|m| format!("- {m}\n")).collect::<String>().trim_end().to_string()
}

/// Judges the manifests `kubectl apply|create|replace -f` (and `oc`), `kubectl run` and
/// `helm install|upgrade` of `script` would send. What cannot be read (stdin, a URL, a
/// kustomization, a hidden word or directory, a post-renderer, a file that is not there)
/// refuses the command while any policy is in force: a manifest nobody judged never
/// reaches a cluster.
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
    for (simple, dir) in script.commands.iter().zip(&dirs) {
        let kube = matches!(simple.program(), Some("kubectl" | "oc"));
        let dir = dir.as_deref();
        if kube && subcommand(simple, &["apply", "create", "replace"]) {
            judged = true;
            kubectl_files(simple, dir, &mut found);
        } else if kube && subcommand(simple, &["run"]) {
            judged = true;
            found.inputs.push(("kubectl run".into(), run_pod(simple)));
        } else if simple.program() == Some("helm") && subcommand(simple, &["install", "upgrade"]) {
            judged = true;
            match dir {
                Some(dir) => helm_templates(simple, dir, timeout, ctx, &mut found),
                None => found.unread.push("helm: the directory it runs in is hidden".into()),
            }
        }
    }
    if !judged {
        return;
    }
    let mut inputs = Vec::new();
    for (name, text) in &found.texts {
        match crate::policy::manifests::documents(text) {
            Ok(docs) => inputs.extend(docs.iter().map(|d| d.to_string())),
            Err(why) => found.unread.push(format!("{name}: {why}")),
        }
    }
    inputs.extend(found.inputs.iter().map(|(_, doc)| doc.to_string()));
    if !found.unread.is_empty() {
        let policies = crate::config::policy_sources::in_force(ctx.cwd, ctx.config_dir);
        if !policies.files.is_empty() || policies.broken().is_some() {
            out.refused = Some(format!(
                "Refused: the team's policies cannot read what this command would send to                  the cluster, so it does not run (nothing was asked):\n{}\nWrite the                  manifests to files in the workspace and apply those (`kubectl apply -f                  FILE`); render a kustomization first (`kubectl kustomize DIR > FILE`).",
                list(&found.unread)
            ));
            return;
        }
    }
    judge(&inputs, "the manifest", out, ctx);
}

/// What a command's manifests are: texts read, documents made, and what could not be read.
#[derive(Default)]
struct Found {
    /// (name, text) of each file or rendering.
    texts: Vec<(String, String)>,
    /// (name, document) made from a command's words (`kubectl run`).
    inputs: Vec<(String, serde_json::Value)>,
    /// What could not be read, and why.
    unread: Vec<String>,
    bytes: usize,
}

/// Whether a word of `simple` is one of `names` (`kubectl -n prod apply`: global options
/// may come first; a read such as `kubectl get` never reaches here, its tier is read).
fn subcommand(simple: &Simple, names: &[&str]) -> bool {
    simple.argv.iter().skip(1).any(|w| names.contains(&w.as_str()))
}

/// The pod `kubectl run NAME --image=IMAGE [--privileged]` would create.
fn run_pod(simple: &Simple) -> serde_json::Value {
    let mut name = None;
    let mut image = None;
    let mut privileged = false;
    let mut words = simple.argv.iter().skip(1).skip_while(|w| *w != "run").skip(1);
    while let Some(word) = words.next() {
        match word.as_str() {
            "--image" => image = words.next().cloned(),
            w if w.starts_with("--image=") => image = Some(w["--image=".len()..].to_string()),
            "--privileged" | "--privileged=true" => privileged = true,
            "--" => break,
            w if !w.starts_with('-') && name.is_none() => name = Some(w.to_string()),
            _ => {}
        }
    }
    let name = name.unwrap_or_default();
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{
            "name": name,
            "image": image.unwrap_or_default(),
            "securityContext": {"privileged": privileged},
        }]},
    })
}

/// The files `-f`/`--filename` name, in `dir` (a directory: its YAML and JSON files, and
/// those below it with `-R`).
fn kubectl_files(simple: &Simple, dir: Option<&Path>, found: &mut Found) {
    let mut named = Vec::new();
    let mut recursive = false;
    let mut words = simple.argv.iter().enumerate().skip(1);
    let hidden = |i: usize| simple.dynamic.get(i).copied().unwrap_or(false);
    while let Some((i, word)) = words.next() {
        let value = match word.as_str() {
            "-f" | "--filename" => words.next().map(|(j, w)| (w.clone(), hidden(j))),
            w if w.starts_with("--filename=") => Some((w["--filename=".len()..].into(), hidden(i))),
            w if w.starts_with("-f") && w.len() > 2 && !w.starts_with("--") => {
                let rest = w[2..].strip_prefix('=').unwrap_or(&w[2..]);
                Some((rest.to_string(), hidden(i)))
            }
            "-R" | "--recursive" | "--recursive=true" => {
                recursive = true;
                None
            }
            "-k" | "--kustomize" => {
                found.unread.push("a kustomization (-k)".into());
                words.next();
                None
            }
            w if w.starts_with("--kustomize=") || w.starts_with("-k") && w.len() > 2 => {
                found.unread.push("a kustomization (-k)".into());
                None
            }
            _ => None,
        };
        named.extend(value);
    }
    for (name, hidden) in named {
        if hidden {
            found.unread.push(format!("{name} (a hidden word)"));
            continue;
        }
        if name == "-" || name.contains("://") {
            found.unread.push(format!("{name} (not a local file)"));
            continue;
        }
        let Some(dir) = dir.or(Path::new(&name).is_absolute().then_some(Path::new("/"))) else {
            found.unread.push(format!("{name} (the directory it runs in is hidden)"));
            continue;
        };
        let home = std::env::var_os("HOME");
        let path = match (name.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => Path::new(&home).join(rest),
            _ => dir.join(&name),
        };
        let mut files = Vec::new();
        manifest_files(&path, recursive, 0, &mut files);
        if files.is_empty() {
            files.push(path);
        }
        for file in files {
            let shown = file.display().to_string();
            match std::fs::read_to_string(&file) {
                Ok(text) if found.bytes + text.len() <= MAX_MANIFEST_BYTES => {
                    found.bytes += text.len();
                    found.texts.push((shown, text));
                }
                Ok(_) => found.unread.push(format!("{shown} (over 8 MiB in all)")),
                Err(err) => found.unread.push(format!("{shown}: {err}")),
            }
        }
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

/// The templates `helm template` renders for this install or upgrade, run in `dir`.
fn helm_templates(
    simple: &Simple,
    dir: &Path,
    timeout: Duration,
    ctx: &ToolContext,
    found: &mut Found,
) {
    if simple.dynamic.iter().any(|d| *d) {
        found.unread.push("helm: a hidden word".into());
        return;
    }
    // A post-renderer is a program of the model's: run before anyone is asked, and free
    // to print one thing now and another at install time.
    if simple.argv.iter().any(|w| w.starts_with("--post-renderer")) {
        found.unread.push("helm --post-renderer (what it prints is not what installs)".into());
        return;
    }
    let on_path = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("helm").is_file()));
    if !on_path || !crate::child::sandbox().usable() {
        found
            .unread
            .push("the chart's templates (helm template needs helm and the sandbox here)".into());
        return;
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
    let command: Vec<String> = args.iter().map(|a| super::plan::quote(a)).collect();
    let command =
        format!("cd {} && {}", super::plan::quote(&dir.display().to_string()), command.join(" "));
    let profile = crate::sandbox::Profile::Cloud(crate::sandbox::State::Scratch);
    let rendered = sandbox_spec(profile, ctx).and_then(|spec| {
        let captured = super::plan::capture(&command, timeout, ctx, Some(&spec));
        spec.clean();
        captured
    });
    match rendered {
        Ok(captured) if captured.code == Ok(0) => {
            found.texts.push(("helm template".into(), captured.stdout))
        }
        Ok(captured) => found.unread.push(format!(
            "helm template failed: {}",
            crate::text::clip(captured.stderr.trim(), 2_000)
        )),
        Err(err) => found.unread.push(format!("helm template: {err:?}")),
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
