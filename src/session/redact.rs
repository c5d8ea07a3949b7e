//! A session's vault (`secret::Vault`), seeded with the host's own credentials: the
//! credential variables of this process's environment, the provider's API key and what the
//! credential stores hold. A loaded or resumed session takes back what this node kept of
//! it (`vault_file.rs`, sealed); placeholders it cannot take back stay unknown and are
//! never given again (the model is told so when it uses one).

use std::sync::Arc;

use super::id::SessionId;
use crate::config::Config;
use crate::history::ChatMessage;
use crate::secret::{self, Vault};

/// A new session's vault under the node's policy; the placeholders `history` holds (a
/// loaded session's) are never given again.
pub(super) fn vault(config: &Config, id: &SessionId, history: &[ChatMessage]) -> Vault {
    let vault = Vault::new_empty(Arc::clone(&config.redact));
    if !vault.on() {
        return vault;
    }
    for message in history {
        match message {
            ChatMessage::User { text, .. } => vault.skip_past(text),
            ChatMessage::Assistant { text, tool_calls, .. } => {
                vault.skip_past(text);
                tool_calls.iter().for_each(|call| vault.skip_past(&call.arguments));
            }
            ChatMessage::ToolResult { content, .. } => vault.skip_past(content),
        }
    }
    if !history.is_empty() {
        super::vault_file::load(&config.config_dir, id, &vault);
    }
    vault.learn_policy_values();
    secret::from_env(&vault, &holds_credential);
    if let Ok(provider) = &config.provider
        && let Some(key) = &provider.api_key
    {
        vault.learn("credential", key);
    }
    secret::from_stores(&vault, &crate::sandbox::credential_stores());
    vault
}

/// Whether the variable `name` holds a credential's value (not its path or its region).
fn holds_credential(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    const VALUES: [&str; 10] = [
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "TOKEN",
        "API_KEY",
        "APIKEY",
        "PRIVATE_KEY",
        "CREDENTIAL",
        "ACCESS_KEY",
        "AUTH",
    ];
    let ours = upper == "IAC_CODE_API_KEY" || upper == "IACCODE_ACP_HTTP_TOKEN";
    ours || (crate::sandbox::is_credential_var(name) && VALUES.iter().any(|v| upper.contains(v)))
}
