//! Nothing to build: this crate holds `tests/interop.rs`, the official Rust ACP client
//! driving the `iac-code` binary over HTTP and WebSocket.
