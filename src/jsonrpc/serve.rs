//! The connection loop: takes inbound frames from a transport, hands requests and
//! notifications to a `Handler`, routes responses to waiting requesters. Never blocks on
//! anything but its inbox.

use crossbeam_channel::Receiver;

use super::message::RequestId;
use super::message::{Message, Notification, Request, RpcError};
use super::outbox::Outbox;

/// One inbound frame as the transport parsed it, or the error to answer.
pub type Inbound = Result<Message, (Option<RequestId>, RpcError)>;

/// What a connection does with requests and notifications. Every request must be answered
/// exactly once through the outbox, now or later from another thread.
pub trait Handler {
    /// Handles a request. Must not block for long.
    fn request(&mut self, request: Request, outbox: &Outbox);
    /// Handles a notification. Must not block for long.
    fn notification(&mut self, notification: Notification, outbox: &Outbox);
}

/// Runs until the inbox disconnects (the client went away).
pub fn serve(inbox: &Receiver<Inbound>, outbox: &Outbox, handler: &mut dyn Handler) {
    for inbound in inbox.iter() {
        match inbound {
            Ok(Message::Request(request)) => {
                log::debug!("request {} {}", request.id, request.method);
                handler.request(request, outbox);
            }
            Ok(Message::Notification(notification)) => {
                log::debug!("notification {}", notification.method);
                handler.notification(notification, outbox);
            }
            Ok(Message::Response(response)) => {
                let id = response.id.clone();
                if !outbox.resolve(response) {
                    log::warn!("response to unknown or abandoned request {id}");
                }
            }
            Err((id, error)) => {
                log::warn!("bad frame: {} ({:?})", error.message, error.data);
                outbox.respond_error(id.as_ref(), &error, None);
            }
        }
    }
}
