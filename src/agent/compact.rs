//! Context compaction: when the next request would pass a share of the context window, the
//! older part of the history is summarised by the LLM and replaced by that summary. The
//! last turns stay whole and a tool call never loses its result; the journal keeps
//! everything, and the client sees `[Context compacted: X -> Y tokens]`.

use super::event::{AgentEvent, ContextUsage};
use super::{Turn, estimate};
use crate::history::ChatMessage;
use crate::provider::{ChatRequest, Failure, FailureKind, ProviderError};
use crate::sync::lock;
use crate::tools::truncate_middle;

/// Share of the context window (percent) the kept recent messages may take.
const KEEP_PERCENT: u64 = 25;
/// Longest summary requested, in tokens.
const SUMMARY_TOKENS: u32 = 4096;

const INSTRUCTIONS: &str = "You compact the conversation of an infrastructure-as-code \
    coding agent. Summarise the transcript below so that the agent can continue the work \
    without it: the user's requests and constraints (verbatim where precise), decisions \
    taken, files read or changed (with paths), commands run and their outcomes, errors \
    still open, and what remains to be done. Be complete and concrete; omit pleasantries. \
    Answer with the summary only.";

/// Compacts when the next request would pass the configured share of the window.
/// `turn_start` (where the running turn began) is moved to where its messages now are; if
/// the turn's own prompt was summarised, it becomes 0 (a refusal then drops the summary).
pub(super) fn if_needed(
    turn: &Turn,
    history: &mut Vec<ChatMessage>,
    turn_start: &mut usize,
) -> Result<(), Failure> {
    let threshold = turn.limits.context_window * turn.limits.compact_percent / 100;
    if estimate(turn, history) <= threshold {
        return Ok(());
    }
    let keep_budget = turn.limits.context_window * KEEP_PERCENT / 100;
    if let Some(done) = compact(turn, history, keep_budget)? {
        *turn_start = if done.split <= *turn_start { *turn_start - done.split + 1 } else { 0 };
    }
    Ok(())
}

/// What a compaction did.
#[derive(Debug, Clone, Copy)]
pub struct Compacted {
    /// Estimated tokens before.
    pub before: u64,
    /// Estimated tokens after.
    pub after: u64,
    /// How many messages the summary replaced.
    pub split: usize,
}

/// The first line of every summary.
const SUMMARY_HEADER: &str = "[Summary of the earlier conversation; the context was compacted]";

/// Summarises the older part of `history` now, keeping recent whole groups within
/// `keep_budget` tokens (at least the last one). `None` when there is nothing old enough
/// to summarise (or only an earlier summary, which would only degrade).
pub fn compact(
    turn: &Turn,
    history: &mut Vec<ChatMessage>,
    keep_budget: u64,
) -> Result<Option<Compacted>, Failure> {
    let before = estimate(turn, history);
    let split = split_point(history, keep_budget);
    let only_a_summary = split == 1
        && matches!(&history[0], ChatMessage::User { text, .. } if text.starts_with(SUMMARY_HEADER));
    if split == 0 || only_a_summary {
        return Ok(None);
    }
    let max_chars = (turn.limits.context_window * 2) as usize;
    let transcript = truncate_middle(&render(&history[..split]), max_chars);
    let model = lock(turn.settings).model.clone();
    let messages = [ChatMessage::User { text: transcript, images: Vec::new() }];
    let request = ChatRequest {
        model: &model,
        system: INSTRUCTIONS,
        messages: &messages,
        tools: &[],
        max_tokens: turn.limits.max_tokens.min(SUMMARY_TOKENS),
        cache_key: None,
        thinking: lock(turn.settings).thinking,
    };
    let completion = match turn.model.provider.stream(&request, turn.cancel, &mut |_| {}) {
        Ok(completion) => completion,
        Err(ProviderError::Cancelled) => {
            return Err(Failure::new(FailureKind::Internal, "cancelled"));
        }
        Err(ProviderError::Failed(failure)) => {
            let message = format!("compacting the context failed: {}", failure.message);
            return Err(Failure::new(failure.kind, message));
        }
    };
    // The summary's call costs like any other: the session's totals count it.
    let (reported, estimated) = match completion.usage {
        Some(usage) => (usage, false),
        None => {
            let output = estimate::tokens(completion.text.len());
            let input = estimate::request(&request);
            (crate::provider::Usage { input, output, ..Default::default() }, true)
        }
    };
    let call = super::TurnUsage::of_call(&reported, estimated, turn.model.pricing.price(&model));
    let spent = turn.record.recorder.usage(&model, &call);
    // And the turn's (or the `/compact` command's) usage counts it too.
    crate::sync::lock(turn.record.sub_usage).add(call);
    let mut summary = format!("{SUMMARY_HEADER}\n{}", completion.text.trim());
    // Skills loaded in the summarised part stay loaded: their content follows the summary.
    let part = &history[..split];
    let skills = crate::skills::catalog::kept(part.iter().filter_map(|m| skill_text(part, m)));
    if !skills.is_empty() {
        // Bounded (a tenth of the context window), newest kept first: the rest are named,
        // to be loaded again, so that a compaction always frees room.
        let mut room = (turn.limits.context_window * 4 / 10) as usize;
        let (mut kept, mut left) = (Vec::new(), Vec::new());
        for block in skills.iter().rev() {
            match block.len() <= room {
                true => {
                    room -= block.len();
                    kept.push(block.as_str());
                }
                false => left.push(skill_name(block)),
            }
        }
        kept.reverse();
        summary.push_str("\n\n[Skills loaded earlier, still in force]\n");
        summary.push_str(&kept.join("\n"));
        if !left.is_empty() {
            summary.push_str(&format!(
                "\n[Also loaded earlier, not kept here for room: {}; load again with the skill \
                 tool when needed]",
                left.join(", ")
            ));
        }
    }
    let keep = history.len() - split;
    history.drain(..split);
    history.insert(0, ChatMessage::User { text: summary.clone(), images: Vec::new() });
    let after = estimate(turn, history);
    turn.record.recorder.compacted(&summary, keep, before, after);
    // The system prompt and the tools stay as they were: their cached prefix survives.
    let saved = before.saturating_sub(after);
    turn.client.sink.emit(AgentEvent::Notice(format!(
        "[Context compacted: {before} -> {after} tokens, {saved} saved]\n\n"
    )));
    log::info!(
        "context compacted: {before} -> {after} tokens ({saved} saved), {keep} messages kept"
    );
    let size = turn.limits.context_window;
    let used = ContextUsage { used: after, size, estimated: true, cost: spent.cost };
    turn.client.sink.emit(AgentEvent::Usage(used));
    Ok(Some(Compacted { before, after, split }))
}

/// Where a loaded skill's content may be: a prompt that is one (a `/name` command) or an
/// earlier summary, or a successful result of a `skill` call (never another tool's result,
/// which could only quote one).
fn skill_text<'m>(part: &[ChatMessage], message: &'m ChatMessage) -> Option<&'m str> {
    match message {
        ChatMessage::User { text, .. }
            if text.starts_with(crate::skills::catalog::OPEN)
                || text.starts_with(SUMMARY_HEADER) =>
        {
            Some(text)
        }
        ChatMessage::ToolResult { call_id, content, is_error: false, .. } => {
            let by_skill = part.iter().any(|m| match m {
                ChatMessage::Assistant { tool_calls, .. } => {
                    tool_calls.iter().any(|c| c.id == *call_id && c.name == "skill")
                }
                _ => false,
            });
            by_skill.then_some(content.as_str())
        }
        _ => None,
    }
}

fn estimate(turn: &Turn, history: &[ChatMessage]) -> u64 {
    let model = lock(turn.settings).model.clone();
    estimate::request(&turn.request(&model, history, &turn.offered()))
}

/// Where the kept suffix starts: the earliest message that begins a group (a user or an
/// assistant message, never a tool result) such that the suffix fits `budget`; at least the
/// last group is kept. 0 means there is nothing before it to summarise.
fn split_point(history: &[ChatMessage], budget: u64) -> usize {
    let starts: Vec<usize> = (0..history.len())
        .filter(|&i| !matches!(history[i], ChatMessage::ToolResult { .. }))
        .collect();
    let Some(&last) = starts.last() else { return 0 };
    let mut split = last;
    for &start in starts.iter().rev() {
        if tokens(&history[start..]) > budget {
            break;
        }
        split = start;
    }
    split
}

fn tokens(messages: &[ChatMessage]) -> u64 {
    (render(messages).len() as u64).div_ceil(4)
}

/// The transcript the summariser reads.
fn render(messages: &[ChatMessage]) -> String {
    let mut out = String::new();
    for message in messages {
        match message {
            ChatMessage::User { text, .. } => out.push_str(&format!("## User\n{text}\n\n")),
            ChatMessage::Assistant { text, tool_calls, .. } => {
                out.push_str(&format!("## Assistant\n{text}\n"));
                for call in tool_calls {
                    out.push_str(&format!("[tool call {} {}]\n", call.name, call.arguments));
                }
                out.push('\n');
            }
            ChatMessage::ToolResult { content, is_error, .. } => {
                let status = if *is_error { "error" } else { "ok" };
                out.push_str(&format!("## Tool result ({status})\n{content}\n\n"));
            }
        }
    }
    out
}

/// The name in a `<skill_content name="…"` block.
fn skill_name(block: &str) -> &str {
    let rest = block.split_once("name=\"").map_or("", |(_, rest)| rest);
    rest.split_once('"').map_or("?", |(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::fixtures::{calls, result, user};

    #[test]
    fn never_splits_a_call_from_its_result() {
        let long = "x".repeat(400);
        let history = vec![
            user("u1"),
            calls(&["a"]),
            result("a", &long),
            user("u2"),
            calls(&["b"]),
            result("b", &long),
        ];
        // Room for one call and its result: the suffix starts at that call.
        assert_eq!(split_point(&history, tokens(&history[4..])), 4);
        assert_eq!(split_point(&history, tokens(&history[3..])), 3);
        // Room for nothing: still the last group, never the result alone.
        assert_eq!(split_point(&history, 1), 4);
        // Room for everything: nothing to summarise.
        assert_eq!(split_point(&history, 10_000), 0);
    }

    #[test]
    fn only_loaded_skills_are_kept() {
        let block =
            |name: &str| format!("<skill_content name=\"{name}\">\nsteps\n</skill_content>");
        let mut loaded = calls(&["s"]);
        if let ChatMessage::Assistant { tool_calls, .. } = &mut loaded {
            tool_calls[0].name = "skill".into();
        }
        let part = vec![
            user(&block("typed")),
            loaded,
            result("s", &block("loaded")),
            calls(&["b"]),
            result("b", &block("quoted-by-a-file")),
            user(&format!("please look at {}", block("pasted"))),
        ];
        let kept = crate::skills::catalog::kept(part.iter().filter_map(|m| skill_text(&part, m)));
        assert_eq!(kept, [block("typed"), block("loaded")]);
    }
}
