//! What only terraform writes: state (`*.tfstate*`), what `init` keeps (`.terraform/`,
//! `.terraform.lock.hcl`) and saved plans (`*.tfplan`), by the one predicate the classifier
//! uses too (`infra::terraform_owned`). The file tools refuse to write them in every mode,
//! bypass included; bash commands that do are destroy tier (`infra`).

use super::Invocation;
use crate::infra::terraform_owned;

/// Refuses a file tool's write to what only terraform writes (state, `.terraform/`, plans),
/// in every mode: the gate denies it before anything is asked.
pub(super) fn refuse(invocation: &mut Invocation) {
    let owned = invocation
        .targets
        .iter()
        .flat_map(|t| [Some(t.path.as_path()), t.real.as_deref()])
        .flatten()
        .find_map(terraform_owned);
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
