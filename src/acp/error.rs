//! The one place where crate errors become JSON-RPC errors.

use serde_json::json;

use crate::error::Error;
use crate::jsonrpc::RpcError;

/// Maps an error to the JSON-RPC error the client sees.
pub fn rpc_error(err: &Error) -> RpcError {
    match err {
        Error::InvalidParams(detail) => {
            RpcError::new(-32602, &format!("Invalid params: {detail}"), Some(json!(detail)))
        }
        Error::UnknownSession(id) => RpcError::new(
            -32602,
            &format!("Invalid params: session not found: {id}"),
            Some(json!({ "sessionId": id })),
        ),
        Error::Busy(detail) => {
            RpcError::new(-32001, detail, Some(json!({ "reason": "session_busy" })))
        }
        Error::NotConfigured(detail) => {
            RpcError::new(-32603, detail, Some(json!({ "reason": "provider_not_configured" })))
        }
        Error::Provider(detail) => RpcError::new(
            -32603,
            &format!("LLM provider error: {detail}"),
            Some(json!({ "reason": "provider_error" })),
        ),
        Error::Cancelled => RpcError::new(-32800, "Request cancelled", None),
        Error::Usage(_)
        | Error::Config(_)
        | Error::Io { .. }
        | Error::Stream(_)
        | Error::Internal(_) => RpcError::internal(err.to_string()),
    }
}

/// A decode failure of a method's params: -32602 with serde's message in `data`.
pub fn bad_params(method: &str, err: &serde_json::Error) -> RpcError {
    RpcError::new(
        -32602,
        &format!("Invalid params for {method}: {err}"),
        Some(json!(err.to_string())),
    )
}
