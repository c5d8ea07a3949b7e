//! One JSON-RPC frame: classification of a parsed line into request, notification or
//! response, with precise -32700/-32600 errors, and the standard error constructors.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A request id: an integer or a string (`null` only appears in error responses).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// Integer id.
    Num(i64),
    /// String id.
    Str(String),
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestId::Num(n) => write!(f, "{n}"),
            RequestId::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// A request: expects exactly one response.
#[derive(Debug, Clone)]
pub struct Request {
    /// The id to answer with.
    pub id: RequestId,
    pub method: String,
    /// Parameters; `Value::Null` when absent.
    pub params: Value,
}

/// A notification: no response.
#[derive(Debug, Clone)]
pub struct Notification {
    pub method: String,
    /// Parameters; `Value::Null` when absent.
    pub params: Value,
}

/// A response to a request we sent.
#[derive(Debug, Clone)]
pub struct Response {
    /// Id of our request.
    pub id: RequestId,
    pub result: Result<Value, RpcError>,
}

/// One inbound frame.
#[derive(Debug, Clone)]
pub enum Message {
    Request(Request),
    Notification(Notification),
    Response(Response),
}

/// Error codes: JSON-RPC 2.0's own, ACP's, and ours.
pub mod code {
    /// The line is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// JSON, but not a valid JSON-RPC message.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Bad or missing parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Something failed on our side (the LLM provider included).
    pub const INTERNAL_ERROR: i64 = -32603;
    /// The session is driven by another process or connection (ours, in the server range).
    pub const SESSION_BUSY: i64 = -32001;
    /// The request was cancelled (ACP's `$/cancel_request`).
    pub const REQUEST_CANCELLED: i64 = -32800;
    /// Authentication is required first (ACP's `auth_required`): no usable provider.
    pub const AUTH_REQUIRED: i64 = -32000;
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    /// Details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// The line is not JSON.
    pub fn parse_error(detail: impl Into<String>) -> RpcError {
        RpcError::new(code::PARSE_ERROR, "Parse error", Some(Value::String(detail.into())))
    }
    /// JSON, but not a valid JSON-RPC message.
    pub fn invalid_request(detail: impl Into<String>) -> RpcError {
        RpcError::new(code::INVALID_REQUEST, "Invalid request", Some(Value::String(detail.into())))
    }
    /// No such method.
    pub fn method_not_found(method: &str) -> RpcError {
        let data = serde_json::json!({ "method": method });
        RpcError::new(code::METHOD_NOT_FOUND, "Method not found", Some(data))
    }
    /// Bad or missing parameters: the message names what, `data` repeats it.
    pub fn invalid_params(detail: impl Into<String>) -> RpcError {
        let detail = detail.into();
        let message = format!("Invalid params: {detail}");
        RpcError::new(code::INVALID_PARAMS, &message, Some(Value::String(detail)))
    }
    /// Something failed on our side.
    pub fn internal(detail: impl Into<String>) -> RpcError {
        RpcError::new(code::INTERNAL_ERROR, "Internal error", Some(Value::String(detail.into())))
    }
    /// A custom error.
    pub fn new(code: i64, message: &str, data: Option<Value>) -> RpcError {
        RpcError { code, message: message.to_string(), data }
    }
}

/// The error answer to a frame we could not accept, with the id to answer (if known).
pub type FrameError = (Option<RequestId>, RpcError);

/// Parses and classifies one frame.
pub fn parse(bytes: &[u8]) -> Result<Message, FrameError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|err| (None, RpcError::parse_error(err.to_string())))?;
    classify(value)
}

fn classify(value: Value) -> Result<Message, FrameError> {
    let Value::Object(mut obj) = value else {
        let what =
            if value.is_array() { "batch requests are not supported" } else { "not an object" };
        return Err((None, RpcError::invalid_request(what)));
    };
    let id = match obj.remove("id") {
        None => None,
        Some(raw) => match id_of(&raw) {
            Some(id) => Some(id),
            None if raw.is_null() => None,
            None => {
                let msg = format!("invalid id {raw}: expected an integer or a string");
                return Err((None, RpcError::invalid_request(msg)));
            }
        },
    };
    if !obj.contains_key("method") {
        return classify_response(id, obj);
    }
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((id, RpcError::invalid_request("\"jsonrpc\" must be \"2.0\"")));
    }
    let params = obj.remove("params").unwrap_or(Value::Null);
    if !(params.is_object() || params.is_array() || params.is_null()) {
        return Err((id, RpcError::invalid_request("\"params\" must be an object or an array")));
    }
    match obj.remove("method") {
        Some(Value::String(method)) => Ok(match id {
            Some(id) => Message::Request(Request { id, method, params }),
            None => Message::Notification(Notification { method, params }),
        }),
        Some(other) => Err((
            id,
            RpcError::invalid_request(format!("\"method\" must be a string, not {other}")),
        )),
        None => classify_response(id, obj),
    }
}

/// A frame without `method` is a response. One with an id is never answered, even when
/// malformed: the error goes to whoever waits for that id (answering would collide with
/// the client's own request ids).
fn classify_response(
    id: Option<RequestId>,
    mut obj: serde_json::Map<String, Value>,
) -> Result<Message, FrameError> {
    let Some(id) = id else {
        let msg = "a message needs \"method\", or an id with \"result\" or \"error\"";
        return Err((None, RpcError::invalid_request(msg)));
    };
    let result = if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        Err(RpcError::invalid_request("response without \"jsonrpc\": \"2.0\""))
    } else {
        match (obj.remove("result"), obj.remove("error")) {
            (Some(result), None) => Ok(result),
            (None, Some(error)) => {
                Err(serde_json::from_value::<RpcError>(error).unwrap_or_else(|err| {
                    RpcError::invalid_request(format!("invalid error object: {err}"))
                }))
            }
            _ => Err(RpcError::invalid_request("a response needs exactly one of result and error")),
        }
    };
    Ok(Message::Response(Response { id, result }))
}

fn id_of(raw: &Value) -> Option<RequestId> {
    match raw {
        Value::Number(n) => n.as_i64().map(RequestId::Num),
        Value::String(s) => Some(RequestId::Str(s.clone())),
        Value::Null | Value::Bool(_) | Value::Array(_) | Value::Object(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err_code(line: &str) -> (Option<RequestId>, i64) {
        let (id, err) = parse(line.as_bytes()).unwrap_err();
        (id, err.code)
    }

    #[test]
    fn classifies_frames() {
        let req = parse(br#"{"jsonrpc":"2.0","id":"a","method":"m"}"#).unwrap();
        assert!(matches!(req, Message::Request(Request { id: RequestId::Str(_), .. })));
        let n = parse(br#"{"jsonrpc":"2.0","method":"m","params":{}}"#).unwrap();
        assert!(matches!(n, Message::Notification(_)));
        let r = parse(br#"{"jsonrpc":"2.0","id":3,"result":null}"#).unwrap();
        assert!(matches!(r, Message::Response(Response { id: RequestId::Num(3), result: Ok(_) })));
    }

    #[test]
    fn rejects_bad_frames_with_the_right_code() {
        assert_eq!(err_code("{nope"), (None, -32700));
        assert_eq!(err_code("[]"), (None, -32600));
        assert_eq!(err_code("42"), (None, -32600));
        assert_eq!(
            err_code(r#"{"jsonrpc":"2.0","id":1,"method":42}"#),
            (Some(RequestId::Num(1)), -32600)
        );
        assert_eq!(err_code(r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#).1, -32600);
        assert_eq!(err_code(r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#), (None, -32600));
        assert_eq!(err_code(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#).1, -32600);
        assert_eq!(err_code(r#"{"jsonrpc":"2.0","result":{}}"#), (None, -32600));
    }

    #[test]
    fn malformed_responses_go_to_the_waiter_not_back_to_the_client() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}"#,
        ] {
            let msg = parse(line.as_bytes()).unwrap();
            let Message::Response(Response { id: RequestId::Num(1), result: Err(err) }) = msg
            else {
                panic!("{line}: {msg:?}");
            };
            assert_eq!(err.code, -32600, "{line}");
        }
    }
}
