//! The codes of the HTTP transport's errors, for clients to act on: every JSON error body
//! is `{"error": why, "code": code}`, the final `event: error` of a stream carries one
//! too, and a hole in the replay buffer is an event of its own (`event: replay_gap`). The
//! words may change from one release to the next; the codes do not (the web page decides
//! whether to start a new connection on them alone). `man/iac-code.1` lists them.

/// What went wrong with an HTTP request or stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// The request names no connection (no `Acp-Connection-Id`): send `initialize` first.
    NoConnection,
    /// The connection named is not known here (a restart, another node, closed when idle):
    /// start a new one.
    UnknownConnection,
    /// The connection named is closed, or closing: start a new one.
    ConnectionClosed,
    /// The connection named is a WebSocket: it has no event streams and takes no POST.
    WebSocketConnection,
    /// The connection already has its most streams for sessions it does not hold.
    TooManyStreams,
    /// `Acp-Session-Id` is not a session id.
    InvalidSessionId,
    /// `Acp-Session-Id` does not match `params.sessionId`.
    SessionMismatch,
    /// No token, or the wrong one.
    Unauthorized,
    /// Refused for the `Host`, the `Origin` or the user at the other end.
    Forbidden,
    /// No such path.
    NotFound,
    /// The path does not take this method.
    MethodNotAllowed,
    /// `Accept` excludes what the path serves.
    NotAcceptable,
    /// The body is not `application/json`.
    UnsupportedMediaType,
    /// The body is not JSON.
    InvalidJson,
    /// The body is JSON but not a JSON-RPC message the transport can take.
    InvalidMessage,
    /// The HTTP request (or WebSocket handshake) itself is malformed.
    BadRequest,
    /// The request was not received in time.
    RequestTimeout,
    /// The head or the body is over its limit.
    TooLarge,
    /// The server cannot take it now (connection limit, shutting down, a full connection):
    /// try again later.
    Unavailable,
    /// `initialize` was not answered in time.
    InitializeTimeout,
    /// The client did not read its stream and the connection's buffer filled: the
    /// connection is closed.
    BufferOverflow,
    /// Events asked for by `Last-Event-ID` are no longer in the replay buffer: what the
    /// client holds has a hole, so it starts over from the sessions' journals.
    ReplayGap,
}

impl Code {
    /// The code as it travels.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::NoConnection => "no_connection",
            Code::UnknownConnection => "unknown_connection",
            Code::ConnectionClosed => "connection_closed",
            Code::WebSocketConnection => "websocket_connection",
            Code::TooManyStreams => "too_many_streams",
            Code::InvalidSessionId => "invalid_session_id",
            Code::SessionMismatch => "session_mismatch",
            Code::Unauthorized => "unauthorized",
            Code::Forbidden => "forbidden",
            Code::NotFound => "not_found",
            Code::MethodNotAllowed => "method_not_allowed",
            Code::NotAcceptable => "not_acceptable",
            Code::UnsupportedMediaType => "unsupported_media_type",
            Code::InvalidJson => "invalid_json",
            Code::InvalidMessage => "invalid_message",
            Code::BadRequest => "bad_request",
            Code::RequestTimeout => "request_timeout",
            Code::TooLarge => "too_large",
            Code::Unavailable => "unavailable",
            Code::InitializeTimeout => "initialize_timeout",
            Code::BufferOverflow => "buffer_overflow",
            Code::ReplayGap => "replay_gap",
        }
    }

    /// The JSON that carries it: `{"error": why, "code": code}`.
    pub fn body(self, why: &str) -> String {
        serde_json::json!({ "error": why, "code": self.as_str() }).to_string()
    }

    /// The code of a refusal known only by its status (the request reader's, the
    /// admission check's, the WebSocket handshake's).
    pub fn of_status(status: u16) -> Code {
        match status {
            401 => Code::Unauthorized,
            403 => Code::Forbidden,
            404 => Code::NotFound,
            405 => Code::MethodNotAllowed,
            406 => Code::NotAcceptable,
            408 => Code::RequestTimeout,
            413 | 431 => Code::TooLarge,
            415 => Code::UnsupportedMediaType,
            503 => Code::Unavailable,
            504 => Code::InitializeTimeout,
            _ => Code::BadRequest,
        }
    }

    /// Every code, for the tests and the manual's list.
    #[cfg(test)]
    pub const ALL: [Code; 22] = [
        Code::NoConnection,
        Code::UnknownConnection,
        Code::ConnectionClosed,
        Code::WebSocketConnection,
        Code::TooManyStreams,
        Code::InvalidSessionId,
        Code::SessionMismatch,
        Code::Unauthorized,
        Code::Forbidden,
        Code::NotFound,
        Code::MethodNotAllowed,
        Code::NotAcceptable,
        Code::UnsupportedMediaType,
        Code::InvalidJson,
        Code::InvalidMessage,
        Code::BadRequest,
        Code::RequestTimeout,
        Code::TooLarge,
        Code::Unavailable,
        Code::InitializeTimeout,
        Code::BufferOverflow,
        Code::ReplayGap,
    ];
}

/// The final event of a connection closed because its client did not read.
pub fn overflow_note() -> std::sync::Arc<[u8]> {
    let why = "event buffer overflow: the client did not read its stream; connection closed";
    Code::BufferOverflow.body(why).into_bytes().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_snake_case_words() {
        let mut seen = std::collections::HashSet::new();
        for code in Code::ALL {
            let text = code.as_str();
            assert!(text.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{text}");
            assert!(seen.insert(text), "{text} twice");
        }
    }

    #[test]
    fn the_manual_lists_every_code() {
        let man = include_str!("../../../man/iac-code.1");
        for code in Code::ALL {
            let listed = format!("\\fB{}\\fR", code.as_str());
            assert!(man.contains(&listed), "man/iac-code.1 does not list {}", code.as_str());
        }
    }
}
