//! The ACP side of `ask_user`: `elicitation/create` in form mode, scoped to the session and
//! the tool call, sent only to a client that declared `elicitation.form`; the prompt thread
//! waits for the answer or the turn's cancel, which withdraws the question
//! (`$/cancel_request`), as a permission question is withdrawn.

use crossbeam_channel::select;
use serde_json::Value;

use super::convert::AcpAsker;
use super::types::{CreateElicitationRequest, CreateElicitationResponse};
use crate::cancel::CancelToken;
use crate::gate::{Answer, Asker, Question};
use crate::tools::{Elicitation, Elicited};

/// A prompt's questions: permission ones through `AcpAsker`, forms through
/// `elicitation/create` when the client renders them.
pub struct AcpQuestions {
    pub asker: AcpAsker,
    /// The client declared `elicitation.form`.
    pub form: bool,
}

impl Asker for AcpQuestions {
    fn ask(&self, question: &Question, cancel: &CancelToken) -> Answer {
        self.asker.ask(question, cancel)
    }

    fn elicit(&self, tool_call_id: &str, request: &Elicitation, cancel: &CancelToken) -> Elicited {
        if !self.form {
            return Elicited::Unsupported;
        }
        let (outbox, session_id) = (&self.asker.outbox, self.asker.session_id.as_str());
        let params = CreateElicitationRequest {
            session_id,
            tool_call_id,
            mode: "form",
            message: request.message,
            requested_schema: request.schema,
        };
        let (id, reply) = outbox.request("elicitation/create", &params, Some(session_id));
        select! {
            recv(reply) -> reply => match reply {
                Ok(Ok(result)) => answer_of(result),
                Ok(Err(error)) => {
                    // A client that declared forms but refuses them: shown as text instead.
                    log::warn!("elicitation/create failed on the client: {}", error.message);
                    Elicited::Unsupported
                }
                // The connection is gone.
                Err(_) => Elicited::Cancelled,
            },
            recv(cancel.channel()) -> _ => {
                outbox.forget(&id);
                // The client closes its form: nobody waits for the answer any more.
                let abandoned = serde_json::json!({ "requestId": id });
                outbox.notify("$/cancel_request", &abandoned, Some(session_id));
                Elicited::Cancelled
            }
        }
    }
}

/// The answer as `ask_user` reads it; an unreadable or unknown one is a dismissal.
fn answer_of(result: Value) -> Elicited {
    match serde_json::from_value::<CreateElicitationResponse>(result) {
        Ok(answer) => match answer.action.as_str() {
            "accept" => Elicited::Accepted(answer.content.unwrap_or_default()),
            "decline" => Elicited::Declined,
            "cancel" => Elicited::Cancelled,
            other => {
                log::warn!("elicitation answer with an unknown action '{other}'; read as cancel");
                Elicited::Cancelled
            }
        },
        Err(err) => {
            log::warn!("unreadable elicitation answer ({err}); read as cancel");
            Elicited::Cancelled
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_map_to_what_ask_user_reads() {
        let content = json!({"answer": "b"}).as_object().cloned().unwrap();
        let accept = json!({"action": "accept", "content": {"answer": "b"}});
        assert_eq!(answer_of(accept), Elicited::Accepted(content));
        let empty = answer_of(json!({"action": "accept"}));
        assert_eq!(empty, Elicited::Accepted(Default::default()));
        assert_eq!(answer_of(json!({"action": "decline"})), Elicited::Declined);
        assert_eq!(answer_of(json!({"action": "cancel"})), Elicited::Cancelled);
        assert_eq!(answer_of(json!({"action": "_later"})), Elicited::Cancelled);
        assert_eq!(answer_of(json!({"content": {}})), Elicited::Cancelled);
        assert_eq!(answer_of(json!({"action": "accept", "content": [1]})), Elicited::Cancelled);
    }
}
