//! The team's policies on what a mutation would change, before anyone is asked
//! (`crate::policy`): a terraform apply's or destroy's plan JSON (`judge::prepare`),
//! the manifests of `kubectl apply|create|replace -f FILE` (each YAML document alone, as
//! conftest reads them) and the templates `helm template` renders for `helm
//! install|upgrade` (when helm is installed, in the sandbox a plan gets). A `deny` or
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

/// A terraform apply or destroy whose plan cannot be made first: refused while a policy in
/// force is broken.
pub(super) fn unjudged(out: &mut Judged, ctx: &ToolContext) {
    if let Some(why) = crate::config::policy_sources::in_force(ctx.cwd, ctx.config_dir).broken() {
        broken(out, &why);
    }
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

/// Judges the manifests `kubectl apply|create|replace -f` and `helm install|upgrade` of
/// `script` would send.
pub(super) fn judge_manifests(
    script: &Script,
    out: &mut Judged,
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
                kubectl_files(simple, ctx.cwd, &mut texts, out);
            }
            Some("helm") if subcommand(simple, &["install", "upgrade"]) => {
                judged = true;
                helm_templates(simple, timeout, ctx, &mut texts, out);
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
            Err(why) => out.content.push(format!("Not judged by the policies: {name}: {why}")),
        }
    }
    // What could not be judged is said in the result as well as in the question.
    let unjudged: Vec<String> =
        out.content.iter().filter(|c| c.starts_with("Not judged")).cloned().collect();
    out.notes.extend(unjudged);
    judge(&inputs, "the manifest", out, ctx);
}

/// Whether a word of `simple` is one of `names` (`kubectl -n prod apply`: global options
/// may come first; a read such as `kubectl get` never reaches here, its tier is read).
fn subcommand(simple: &Simple, names: &[&str]) -> bool {
    simple.argv.iter().skip(1).any(|w| names.contains(&w.as_str()))
}

/// The files `-f`/`--filename` name (a directory: its YAML and JSON files).
fn kubectl_files(simple: &Simple, cwd: &Path, texts: &mut Vec<(String, String)>, out: &mut Judged) {
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
                out.content.push("Not judged by the policies: a kustomization".to_string());
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
            out.content.push(format!("Not judged by the policies: {name} (not a local file)"));
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
                    out.content.push(format!("Not judged by the policies: {name} (over 8 MiB)"))
                }
                Err(err) => out.content.push(format!("Not judged by the policies: {name}: {err}")),
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
    out: &mut Judged,
) {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("helm").is_file()));
    if !on_path || !crate::child::sandbox().usable() {
        out.content.push(
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
    let rendered = sandbox_spec(profile, ctx).and_then(|spec| {
        let captured = super::plan::capture(&command.join(" "), timeout, ctx, Some(&spec));
        spec.clean();
        captured
    });
    match rendered {
        Ok(captured) if captured.code == Ok(0) => {
            texts.push(("helm template".into(), captured.stdout))
        }
        Ok(captured) => out.content.push(format!(
            "Not judged by the policies: helm template failed: {}",
            crate::text::clip(captured.stderr.trim(), 2_000)
        )),
        Err(err) => out.content.push(format!("Not judged by the policies: helm template: {err:?}")),
    }
}
