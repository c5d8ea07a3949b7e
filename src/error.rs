//! The crate-wide error type: variants chosen by what the caller does with them.
//! Converted to JSON-RPC errors in exactly one place (`acp::error`).

use std::fmt;
use std::path::PathBuf;

/// Errors that cross module boundaries.
#[derive(Debug)]
pub enum Error {
    /// Bad command line; exit code 2.
    Usage(String),
    /// Bad configuration (environment, settings); exit code 2 at start-up.
    Config(String),
    /// An I/O error tied to a path.
    Io { path: PathBuf, source: std::io::Error },
    /// An I/O error with no useful path (sockets, pipes).
    Stream(std::io::Error),
    /// The client sent parameters we cannot act on (maps to -32602).
    InvalidParams(String),
    /// No session with this id is open on this connection (maps to -32602).
    UnknownSession(String),
    /// The session is driven by another process or connection (its lock is held).
    Busy(String),
    /// The LLM provider is not configured; the message names what to set.
    NotConfigured(String),
    /// The session store cannot be reached (Redis down past the retries); the message
    /// names the store.
    Store(String),
    /// A bug or an unexpected state.
    Internal(String),
}

/// Shorthand used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(msg) => write!(f, "{msg}"),
            Error::Config(msg) => write!(f, "configuration: {msg}"),
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Stream(source) => write!(f, "{source}"),
            Error::InvalidParams(msg) => write!(f, "{msg}"),
            Error::UnknownSession(id) => write!(f, "session not found: {id}"),
            Error::Busy(msg) => write!(f, "{msg}"),
            Error::NotConfigured(msg) => write!(f, "{msg}"),
            Error::Store(msg) => write!(f, "{msg}"),
            Error::Internal(msg) => write!(f, "internal error: {msg}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } | Error::Stream(source) => Some(source),
            Error::Usage(_)
            | Error::Config(_)
            | Error::InvalidParams(_)
            | Error::UnknownSession(_)
            | Error::Busy(_)
            | Error::NotConfigured(_)
            | Error::Store(_)
            | Error::Internal(_) => None,
        }
    }
}

impl From<lexopt::Error> for Error {
    fn from(err: lexopt::Error) -> Error {
        Error::Usage(err.to_string())
    }
}

/// Attaches a path to an `io::Error`, replacing `anyhow`'s `.context()`.
pub trait IoContext<T> {
    /// Wraps the error with the path it concerns.
    fn at(self, path: &std::path::Path) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, path: &std::path::Path) -> Result<T> {
        self.map_err(|source| Error::Io { path: path.to_path_buf(), source })
    }
}
