//! The team's policies on what a mutation would change, before anyone is asked
//! (`crate::policy`): a terraform apply's or destroy's plan JSON (`judge::prepare`) and
//! what a Kubernetes mutation would send (`manifests.rs`). A terraform apply or destroy
//! whose plan cannot be made is refused while any policy is in force. A `deny` or
//! `violation` refuses the call in every mode (`Judged::refused`, laid into `Gate::refused`:
//! no question, the messages to the model); a `warn` goes into the question and the result
//! (`Judged::content`, `Judged::notes`). While a
//! policy in force is broken, every command judged here is refused with why.

use std::path::PathBuf;

use crate::policy::Findings;
use crate::tools::ToolContext;

/// What the policies said of a call; `judge` lays it into the call's `Gate`.
#[derive(Debug, Default)]
pub(super) struct Judged {
    /// Why the call is refused in every mode (no question; the messages to the model).
    pub refused: Option<String>,
    /// Shown with the question (Markdown).
    pub content: Vec<String>,
    /// Added to the call's result.
    pub notes: Vec<String>,
    /// What runs instead of the command as written, with the private file it reads and
    /// that file's bytes (`manifests.rs`: the manifests as judged).
    pub prepared: Option<(String, PathBuf, Vec<u8>)>,
}

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

pub(super) fn list(messages: &[String]) -> String {
    messages.iter().map(|m| format!("- {m}\n")).collect::<String>().trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn found(command: &str) -> Option<String> {
        let c = crate::infra::classify(command, Path::new("/p"), &|_| None);
        apply_line(&c.lines, &c.patterns).map(str::to_string)
    }

    #[test]
    fn applies_and_destroys_are_found_in_every_form_and_plans_are_not() {
        for command in [
            "terraform init && terraform apply -auto-approve",
            "terraform -chdir=infra apply -destroy",
            "tofu destroy",
            "cd x && terragrunt run-all apply",
            "terragrunt destroy-all",
            "./bin/terraform apply",
            "T=destroy; terraform $T -auto-approve",
        ] {
            assert!(found(command).is_some(), "{command}");
        }
        for not in [
            "terraform init && terraform plan -destroy",
            "terraform workspace new apply-test",
            "terraform state list",
            "kubectl apply -f x.yaml",
        ] {
            assert_eq!(found(not), None, "{not}");
        }
    }
}
