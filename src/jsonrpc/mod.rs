//! JSON-RPC 2.0: frames, ids, the pending-reply table and the `Outbox`. Knows no ACP method.

pub mod memory;
mod message;
mod outbox;
mod serve;

pub use message::{Message, Notification, Request, RequestId, Response, RpcError, code, parse};
pub use outbox::{Outbox, Outgoing, Spare, Template};
pub use serve::{Handler, Inbound, serve};
