//! The environment of a sandboxed command: a sealed one loses every variable that holds or
//! names a credential. (Ours are gone from every child already: `child::command`.)

use super::Profile;

/// Prefixes of credential variables: cloud providers and their SDKs.
const PREFIXES: [&str; 14] = [
    "AWS_",
    "AZURE_",
    "ARM_",
    "GOOGLE_",
    "CLOUDSDK_",
    "GCLOUD_",
    "TF_TOKEN_",
    "VAULT_",
    "DIGITALOCEAN_",
    "HCLOUD_",
    "OCI_",
    "ALICLOUD_",
    "SCW_",
    "LINODE_",
];

/// Whole names of credential variables.
const NAMES: [&str; 12] = [
    "KUBECONFIG",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITLAB_TOKEN",
    "SSH_AUTH_SOCK",
    "NPM_TOKEN",
    "DOCKER_AUTH_CONFIG",
    "PGPASSWORD",
    "CI_JOB_TOKEN",
    "HCP_CLIENT_SECRET",
    "ATLAS_TOKEN",
    "DOCKER_CONFIG",
];

/// Parts of names that mark a secret (`DB_PASSWORD`, `STRIPE_SECRET_KEY`, `X_API_KEY`).
const MARKS: [&str; 8] =
    ["SECRET", "PASSWORD", "PASSWD", "TOKEN", "API_KEY", "APIKEY", "PRIVATE_KEY", "CREDENTIAL"];

/// Whether a sealed command must not see the variable `name`.
pub fn is_credential_var(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if NAMES.contains(&upper.as_str()) || PREFIXES.iter().any(|p| upper.starts_with(p)) {
        return true;
    }
    // TF_VAR_* and everything else: by what the name says it holds.
    MARKS.iter().any(|mark| upper.contains(mark))
}

/// The variables of this process's environment that `profile` removes.
pub(super) fn removed(profile: Profile) -> Vec<String> {
    if profile != Profile::Sealed {
        return Vec::new();
    }
    std::env::vars_os()
        .filter_map(|(name, _)| name.into_string().ok())
        .filter(|name| is_credential_var(name))
        .collect()
}
