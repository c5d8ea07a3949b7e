//! JSON-RPC 2.0: frames, ids, the pending-reply table and the `Outbox`. Knows no ACP method.

mod framing;
pub mod memory;
mod message;
mod outbox;
mod serve;

pub use framing::{LineRead, read_capped_line};
pub use message::{Message, Notification, Request, RequestId, Response, RpcError, code, parse};
pub use outbox::{Outbox, Outgoing, Spare, Template};
pub use serve::{Handler, Inbound, serve};
