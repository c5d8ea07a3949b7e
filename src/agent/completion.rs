//! One LLM call of a turn: the reply streamed out as events (pieces that arrive together
//! leave together), usage accounted and priced (a `usage_update` after every call, with the
//! session's cost so far), partial text kept on cancel.

use super::event::{AgentEvent, ContextUsage, PieceKind, Pieces};
use super::{Turn, TurnUsage, estimate, push_as};
use crate::history::ChatMessage;
use crate::provider::{Completion, Delta, Failure, ProviderError, Usage};
use crate::sync::lock;

pub(super) enum Step {
    Cancelled,
    Failed(Failure),
}

/// One LLM call: stream deltas out as events (every chunk of the reply with the message id
/// `message_id`, which its record keeps), account usage, keep partial text on cancel.
pub(super) fn request_completion(
    turn: &Turn,
    history: &mut Vec<ChatMessage>,
    usage: &mut TurnUsage,
    message_id: &str,
) -> Result<Completion, Step> {
    let model = lock(turn.settings).model.clone();
    let tools = turn.offered();
    turn.record.recorder.offered(&tools);
    // Only the most recent images go again with every request.
    let messages = crate::history::recent_images(history);
    let request = turn.request(&model, &messages, &tools);
    let mut partial_text = String::new();
    let mut partial_thinking = String::new();
    // Pieces that arrive together leave together: one hand-off to the client per burst.
    let mut held = Pieces::default();
    turn.client.sink.emit(AgentEvent::MessageStart(message_id.to_string()));
    let result = turn.model.provider.stream(&request, turn.cancel, &mut |delta| match delta {
        Delta::Text(text) => {
            partial_text.push_str(&text);
            held.push(PieceKind::Text, &text);
        }
        Delta::Thought(text) => {
            partial_thinking.push_str(&text);
            held.push(PieceKind::Thought, &text);
        }
        Delta::Flush => {
            if !held.is_empty() {
                turn.client.sink.emit_pieces(&held);
                held.clear();
            }
        }
    });
    if !held.is_empty() {
        turn.client.sink.emit_pieces(&held);
    }
    let request_tokens = estimate::request(&request);
    let completion = match result {
        Ok(completion) => completion,
        Err(ProviderError::Cancelled) => {
            // The provider reports no usage for a cut-off reply: count our estimate (the
            // request, and what streamed), flagged as one, never zeros that look real.
            let output = estimate::tokens(partial_text.len() + partial_thinking.len());
            let guess = Usage { input: request_tokens, output, ..Usage::default() };
            account(turn, &model, usage, &guess, true);
            // Keep what the user already saw, so the model knows what it said.
            if !partial_text.is_empty() || !partial_thinking.is_empty() {
                let partial = ChatMessage::Assistant {
                    text: partial_text,
                    // Unsigned partial reasoning cannot be sent back; keep it for replay.
                    thinking: partial_thinking,
                    signed: Vec::new(),
                    tool_calls: Vec::new(),
                };
                push_as(turn, history, partial, message_id);
            }
            return Err(Step::Cancelled);
        }
        Err(ProviderError::Failed(failure)) => return Err(Step::Failed(failure)),
    };
    let (reported, estimated) = match completion.usage {
        Some(u) => (u, false),
        None => {
            let out_chars = completion.text.len()
                + completion.thinking.len()
                + completion
                    .tool_calls
                    .iter()
                    .map(|c| c.arguments.len() + c.name.len())
                    .sum::<usize>();
            let output = estimate::tokens(out_chars);
            (Usage { input: request_tokens, output, ..Usage::default() }, true)
        }
    };
    let session = account(turn, &model, usage, &reported, estimated);
    turn.client.sink.emit(AgentEvent::Usage(ContextUsage {
        used: reported.input + reported.output,
        size: turn.limits.context_window,
        estimated,
        cost: session.cost,
    }));
    Ok(sanitize_ids(completion))
}

/// Adds one call's usage, priced, to the turn's and to the session's record; returns the
/// session's totals.
fn account(
    turn: &Turn,
    model: &str,
    usage: &mut TurnUsage,
    reported: &Usage,
    estimated: bool,
) -> TurnUsage {
    let call = TurnUsage::of_call(reported, estimated, turn.model.pricing.price(model));
    usage.add(call);
    turn.record.recorder.usage(model, &call)
}

/// Some local models send empty or repeated tool-call ids; every call needs its own.
fn sanitize_ids(mut completion: Completion) -> Completion {
    let mut seen = std::collections::HashSet::new();
    for call in &mut completion.tool_calls {
        if call.id.is_empty() || !seen.insert(call.id.clone()) {
            call.id = format!("call_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
            seen.insert(call.id.clone());
        }
    }
    completion
}
