//! Transports: bytes in and out, as `jsonrpc` frames. They know nothing about ACP.

pub mod http;
pub mod stdio;
