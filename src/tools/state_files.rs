//! What the file tools never write, in any mode: what only terraform writes (state
//! (`*.tfstate*`), what `init` keeps (`.terraform/`, `.terraform.lock.hcl`) and saved plans
//! (`*.tfplan`), by the one predicate the classifier uses too, `infra::terraform_owned`),
//! and our own configuration directory (settings, the policies, approvals, keys: what only
//! a person changes). Bash commands that write state are destroy tier (`infra`); the
//! sandbox keeps the configuration directory out of reach of commands nobody approved.

use std::path::Path;

use super::Invocation;
use crate::infra::terraform_owned;

/// Refuses a file tool's write to what only terraform writes (state, `.terraform/`, plans)
/// or to `config_dir`, in every mode (bypass included): the gate denies it before anything
/// is asked.
pub(super) fn refuse(invocation: &mut Invocation, config_dir: &Path) {
    let mut paths =
        invocation.targets.iter().flat_map(|t| [Some(t.path.as_path()), t.real.as_deref()]);
    let real = std::fs::canonicalize(config_dir).ok();
    let ours = !config_dir.as_os_str().is_empty()
        && paths.clone().flatten().any(|p| {
            p.starts_with(config_dir) || real.as_deref().is_some_and(|r| p.starts_with(r))
        });
    if ours {
        invocation.gate.refused = Some(format!(
            "Refused: {} is the iac-code configuration directory (settings, policies,              approvals): only a person changes it, never a tool, in any mode.",
            config_dir.display()
        ));
        return;
    }
    let owned = paths.find_map(|p| p.and_then(terraform_owned));
    if let Some(why) = owned {
        invocation.gate.refused =
            Some(format!("Refused: {why}. The file tools never write it, in any mode."));
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn state_lock_and_plan_files_belong_to_terraform() {
        for owned in [
            "/p/terraform.tfstate",
            "/p/env/prod.tfstate.backup",
            "/p/.terraform/environment",
            "/p/.terraform/providers/x",
            "/p/.terraform.lock.hcl",
            "/p/out.tfplan",
        ] {
            assert!(terraform_owned(Path::new(owned)).is_some(), "{owned}");
        }
        for free in ["/p/main.tf", "/p/terraform.tfvars", "/p/modules/state/main.tf"] {
            assert!(terraform_owned(Path::new(free)).is_none(), "{free}");
        }
    }
}
