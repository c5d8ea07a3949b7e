//! The team's policies on what a mutation would change, before anyone is asked
//! (`crate::policy`): a terraform apply's or destroy's plan JSON (`command_gate::prepare`),
//! the manifests of `kubectl apply|create|replace -f FILE` (each YAML document alone, as
//! conftest reads them) and the templates `helm template` renders for `helm
//! install|upgrade` (when helm is installed, in the sandbox a plan gets). A `deny` or
//! `violation` refuses the call in every mode (`Gate::refused`: no question, the messages
//! to the model); a `warn` goes into the question and the result (`Gate::notes`). While a
//! policy in force is broken, every command judged here is refused with why.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::ToolContext;
use super::command_gate::Gate;
use crate::policy::Findings;
use crate::shell::{Script, Simple};

/// Manifest bytes read for one command at most.
const MAX_MANIFEST_BYTES: usize = 8 << 20;

/// Judges `inputs` (JSON documents; `what` names them for the messages).
pub(super) fn judge(inputs: &[String], what: &str, gate: &mut Gate, ctx: &ToolContext) {
    let policies = crate::policy::in_force(ctx.cwd, ctx.config_dir);
    if let Some(why) = policies.broken() {
        return broken(gate, &why);
    }
    let mut findings = Findings::default();
    for input in inputs {
        match policies.evaluate(input) {
            Ok(found) => findings.extend(found),
            Err(why) => return broken(gate, &why),
        }
    }
    if !findings.deny.is_empty() {
        gate.refused = Some(format!(
            "Refused by policy: {what} breaks the team's policies (nothing was asked and \
             nothing ran):\n{}\nChange the code so that it complies; a person changes a \
             policy, an answer cannot.",
            list(&findings.deny)
        ));
    }
    if !findings.warn.is_empty() {
        gate.content.push(format!("**Policy warnings**\n{}", list(&findings.warn)));
        gate.notes.push(format!("Policy warnings:\n{}", list(&findings.warn)));
    }
}

/// A terraform apply or destroy whose plan cannot be made first: refused while a policy in
/// force is broken.
pub(super) fn unjudged(gate: &mut Gate, ctx: &ToolContext) {
    if let Some(why) = crate::policy::in_force(ctx.cwd, ctx.config_dir).broken() {
        broken(gate, &why);
    }
}

fn broken(gate: &mut Gate, why: &str) {
    gate.refused = Some(format!(
        "Refused: a policy in force is broken, and applies are refused until it is fixed \
         (reads and plans go on):\n{why}"
    ));
}

fn list(messages: &[String]) -> String {
    messages.iter().map(|m| format!("- {m}\n")).collect::<String>().trim_end().to_string()
}

/// Judges the manifests `kubectl apply|create|replace -f` and `helm install|upgrade` of
/// `script` would send.
pub(super) fn judge_manifests(
    script: &Script,
    gate: &mut Gate,
    timeout: Duration,
    ctx: &ToolContext,
) {
    let mut texts = Vec::new();
    let mut judged = false;
    for simple in &script.commands {
        let program = simple.argv.first().map(|p| p.rsplit('/').next().unwrap_or(p));
        match program {
            Some("kubectl") if subcommand(simple, &["apply", "create", "replace"]) => {
                judged = true;
                kubectl_files(simple, ctx.cwd, &mut texts, gate);
            }
            Some("helm") if subcommand(simple, &["install", "upgrade"]) => {
                judged = true;
                helm_templates(simple, timeout, ctx, &mut texts, gate);
            }
            _ => {}
        }
    }
    if !judged {
        return;
    }
    let mut inputs = Vec::new();
    for (name, text) in texts {
        match crate::policy::manifests::documents(&text) {
            Ok(docs) => inputs.extend(docs.iter().map(|d| d.to_string())),
            Err(why) => gate.content.push(format!("Not judged by the policies: {name}: {why}")),
        }
    }
    // What could not be judged is said in the result as well as in the question.
    let unjudged: Vec<String> =
        gate.content.iter().filter(|c| c.starts_with("Not judged")).cloned().collect();
    gate.notes.extend(unjudged);
    judge(&inputs, "the manifest", gate, ctx);
}

/// Whether a word of `simple` is one of `names` (`kubectl -n prod apply`: global options
/// may come first; a read such as `kubectl get` never reaches here, its tier is read).
fn subcommand(simple: &Simple, names: &[&str]) -> bool {
    simple.argv.iter().skip(1).any(|w| names.contains(&w.as_str()))
}

/// The files `-f`/`--filename` name (a directory: its YAML and JSON files).
fn kubectl_files(simple: &Simple, cwd: &Path, texts: &mut Vec<(String, String)>, gate: &mut Gate) {
    let mut named = Vec::new();
    let mut words = simple.argv.iter().skip(1);
    while let Some(word) = words.next() {
        let value = match word.as_str() {
            "-f" | "--filename" => words.next().cloned(),
            w if w.starts_with("--filename=") => Some(w["--filename=".len()..].to_string()),
            w if w.starts_with("-f") && w.len() > 2 && !w.starts_with("--") => {
                Some(w[2..].to_string())
            }
            "-k" | "--kustomize" => {
                gate.content.push("Not judged by the policies: a kustomization".to_string());
                words.next();
                None
            }
            _ => None,
        };
        named.extend(value);
    }
    let mut bytes = 0;
    for name in named {
        if name == "-" || name.contains("://") {
            gate.content.push(format!("Not judged by the policies: {name} (not a local file)"));
            continue;
        }
        let path = cwd.join(&name);
        let files: Vec<PathBuf> = match std::fs::read_dir(&path) {
            Ok(entries) => {
                let mut files: Vec<PathBuf> = entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| {
                        p.extension().is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
                    })
                    .collect();
                files.sort();
                files
            }
            Err(_) => vec![path],
        };
        for file in files {
            match std::fs::read_to_string(&file) {
                Ok(text) if bytes + text.len() <= MAX_MANIFEST_BYTES => {
                    bytes += text.len();
                    texts.push((file.display().to_string(), text));
                }
                Ok(_) => {
                    gate.content.push(format!("Not judged by the policies: {name} (over 8 MiB)"))
                }
                Err(err) => gate.content.push(format!("Not judged by the policies: {name}: {err}")),
            }
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

/// The templates `helm template` renders for this install or upgrade.
fn helm_templates(
    simple: &Simple,
    timeout: Duration,
    ctx: &ToolContext,
    texts: &mut Vec<(String, String)>,
    gate: &mut Gate,
) {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("helm").is_file()));
    if !on_path || !crate::sandbox::status().usable() {
        gate.content.push(
            "Not judged by the policies: the chart's templates (helm template needs helm \
             and the sandbox here)"
                .to_string(),
        );
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
    let profile = crate::sandbox::Profile::Cloud(crate::sandbox::State::Scratch);
    let rendered = super::run::sandbox_spec(profile, ctx).and_then(|spec| {
        let captured = super::plan::capture(&command.join(" "), timeout, ctx, Some(&spec));
        spec.clean();
        captured
    });
    match rendered {
        Ok(captured) if captured.code == Ok(0) => {
            texts.push(("helm template".into(), captured.stdout))
        }
        Ok(captured) => gate.content.push(format!(
            "Not judged by the policies: helm template failed: {}",
            crate::text::clip(captured.stderr.trim(), 2_000)
        )),
        Err(err) => {
            gate.content.push(format!("Not judged by the policies: helm template: {err:?}"))
        }
    }
}
