//! One LLM call of a turn: the reply streamed out as events (pieces that arrive together
//! leave together), usage accounted, partial text kept on cancel.

use super::event::{AgentEvent, ContextUsage, PieceKind, Pieces};
use super::{Turn, TurnUsage, estimate, push};
use crate::history::ChatMessage;
use crate::provider::{Completion, Delta, Failure, ProviderError};
use crate::sync::lock;

pub(super) enum Step {
    Cancelled,
    Failed(Failure),
}

/// One LLM call: stream deltas out as events, account usage, keep partial text on cancel.
pub(super) fn request_completion(
    turn: &Turn,
    history: &mut Vec<ChatMessage>,
    usage: &mut TurnUsage,
) -> Result<Completion, Step> {
    let model = lock(turn.settings).model.clone();
    let tools = turn.offered();
    // Only the most recent images go again with every request.
    let messages = crate::history::recent_images(history);
    let request = turn.request(&model, &messages, &tools);
    let mut partial_text = String::new();
    let mut partial_thinking = String::new();
    // Pieces that arrive together leave together: one hand-off to the client per burst.
    let mut held = Pieces::default();
    let result = turn.provider.stream(&request, turn.cancel, &mut |delta| match delta {
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
                turn.sink.emit_pieces(&held);
                held.clear();
            }
        }
    });
    if !held.is_empty() {
        turn.sink.emit_pieces(&held);
    }
    let request_tokens = estimate::request(&request);
    let completion = match result {
        Ok(completion) => completion,
        Err(ProviderError::Cancelled) => {
            // The provider reports no usage for a cut-off reply: count our estimate (the
            // request, and what streamed), flagged as one, never zeros that look real.
            usage.estimated = true;
            usage.input += request_tokens;
            usage.output += estimate::tokens(partial_text.len() + partial_thinking.len());
            // Keep what the user already saw, so the model knows what it said.
            if !partial_text.is_empty() || !partial_thinking.is_empty() {
                let partial = ChatMessage::Assistant {
                    text: partial_text,
                    // Unsigned partial reasoning cannot be sent back; keep it for replay.
                    thinking: partial_thinking,
                    signed: Vec::new(),
                    tool_calls: Vec::new(),
                };
                push(turn, history, partial);
            }
            return Err(Step::Cancelled);
        }
        Err(ProviderError::Failed(failure)) => return Err(Step::Failed(failure)),
    };
    let (input, output, estimated) = match completion.usage {
        Some(u) => (u.input, u.output, false),
        None => {
            let out_chars = completion.text.len()
                + completion.thinking.len()
                + completion
                    .tool_calls
                    .iter()
                    .map(|c| c.arguments.len() + c.name.len())
                    .sum::<usize>();
            (request_tokens, estimate::tokens(out_chars), true)
        }
    };
    usage.input += input;
    usage.output += output;
    usage.estimated |= estimated;
    turn.sink.emit(AgentEvent::Usage(ContextUsage {
        used: input + output,
        size: turn.limits.context_window,
        estimated,
    }));
    Ok(sanitize_ids(completion))
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
