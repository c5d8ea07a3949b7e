//! The one place where crate errors and failed prompts become JSON-RPC errors.

use serde_json::json;

use crate::agent::TurnFailure;
use crate::error::Error;
use crate::jsonrpc::{RpcError, code};

/// Maps an error to the JSON-RPC error the client sees.
pub fn rpc_error(err: &Error) -> RpcError {
    match err {
        Error::InvalidParams(detail) => RpcError::invalid_params(detail.as_str()),
        Error::UnknownSession(id) => RpcError::new(
            code::INVALID_PARAMS,
            &format!("Invalid params: session not found: {id}"),
            Some(json!({ "sessionId": id, "reason": "session_not_found" })),
        ),
        Error::Busy(detail) => {
            RpcError::new(code::SESSION_BUSY, detail, Some(json!({ "reason": "session_busy" })))
        }
        Error::Store(detail) => RpcError::new(
            code::INTERNAL_ERROR,
            detail,
            Some(json!({ "reason": "store_unavailable" })),
        ),
        // ACP's `auth_required`: an editor offers its sign-in (`acp/auth.rs`).
        Error::NotConfigured(detail) => auth_required(detail, "provider_not_configured"),
        Error::Usage(_)
        | Error::Config(_)
        | Error::Io { .. }
        | Error::Stream(_)
        | Error::Internal(_) => RpcError::internal(err.to_string()),
    }
}

/// A turn the LLM provider (or a broken tool) ended: -32603, and `data` says which kind of
/// failure (`auth`, `rate_limit`, `server_error`, `cut_stream`, `timeout`, `bad_reply` …).
pub fn turn_failed(failure: &TurnFailure) -> RpcError {
    RpcError::new(
        code::INTERNAL_ERROR,
        &format!("LLM provider error: {}", failure.message),
        Some(json!({ "reason": "provider_error", "kind": failure.kind.id() })),
    )
}

/// A decode failure of a method's params: -32602 with serde's message in `data`.
pub fn bad_params(method: &str, err: &serde_json::Error) -> RpcError {
    RpcError::new(
        code::INVALID_PARAMS,
        &format!("Invalid params for {method}: {err}"),
        Some(json!(err.to_string())),
    )
}

/// How to sign in, for every error that needs a sign-in.
const HOW: &str = "sign in with `iac-code login` in a terminal (an editor's terminal \
                   sign-in runs it; reconnect afterwards), or set IAC_CODE_PROVIDER, \
                   IAC_CODE_BASE_URL, IAC_CODE_MODEL and IAC_CODE_API_KEY in the agent's \
                   environment";

/// -32000 with `detail`, how to sign in, and `reason` in `data`.
pub(super) fn auth_required(detail: &str, reason: &str) -> RpcError {
    let detail = detail.trim_end_matches('.');
    let message = if detail.contains("iac-code login") {
        format!(
            "Authentication required: {detail} (in an editor, its terminal sign-in runs \
             `iac-code login`; reconnect afterwards)."
        )
    } else {
        format!("Authentication required: {detail}. To sign in: {HOW}.")
    };
    RpcError::new(code::AUTH_REQUIRED, &message, Some(json!({ "reason": reason })))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Clients act on `data.reason`, never on the message's words.
    #[test]
    fn errors_a_client_acts_on_carry_a_reason() {
        let cases = [
            (Error::UnknownSession("s".into()), "session_not_found"),
            (Error::Busy("held elsewhere".into()), "session_busy"),
            (Error::Store("down".into()), "store_unavailable"),
            (Error::NotConfigured("no provider".into()), "provider_not_configured"),
        ];
        for (err, reason) in cases {
            let rpc = rpc_error(&err);
            let data = rpc.data.unwrap_or_default();
            assert_eq!(data["reason"], reason, "{err}: {data}");
        }
    }
}
