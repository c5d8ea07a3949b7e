//! The Agent Client Protocol layer: wire types, the method table and dispatch, the one
//! conversion from internal events to `session/update`, and the one `Error → RpcError`
//! mapping. `agent`, `tools` and `provider` never import this module.

mod auth;
mod client;
mod content;
mod convert;
mod dispatch;
mod elicit;
mod error;
mod setup;
mod sink;
mod steering;
mod toggle;
mod turns;
pub mod types;

pub use dispatch::AcpAgent;
