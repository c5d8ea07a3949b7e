//! The Anthropic Messages stream: the same script as `event:`/`data:` SSE pairs —
//! `message_start`, content blocks (text, thinking closed with a signature, tool_use with
//! `input_json_delta` pieces), `message_delta` with the stop reason and usage, and
//! `message_stop`.

use std::io;

use serde_json::{Value, json};

use super::http::{Out, write_chunk, write_piece};
use super::script::{ARGUMENT_PIECE_CHARS, Event, arguments_text, split_chars};

/// Writes `events` as Anthropic Messages events, one HTTP chunk each (nothing for an empty
/// script). OpenAI finish reasons are mapped to Anthropic stop reasons.
#[expect(
    clippy::too_many_lines,
    reason = "one arm per scripted event: the Anthropic event stream in one place"
)]
pub(super) fn write_events(w: &mut Out<'_>, events: &[Event], model: &str) -> io::Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    let send = |w: &mut Out<'_>, payload: Value| {
        let kind = payload["type"].as_str().unwrap_or("message").to_string();
        write_chunk(w, &format!("event: {kind}\ndata: {payload}\n\n"))
    };
    // The prompt's counts go first, in `message_start`.
    let (input, read, written) = events
        .iter()
        .find_map(|e| match e {
            Event::CachedUsage { prompt, cached_read, cached_write, .. } => Some((
                prompt.saturating_sub(cached_read + cached_write),
                *cached_read,
                *cached_write,
            )),
            _ => None,
        })
        .unwrap_or((10, 0, 0));
    send(
        w,
        json!({"type": "message_start", "message": {"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [], "usage": {"input_tokens": input, "cache_creation_input_tokens": written, "cache_read_input_tokens": read, "output_tokens": 1}}}),
    )?;
    // The open block: its index and kind.
    let mut open: Option<(usize, &str)> = None;
    let mut next = 0;
    let stop = |w: &mut Out<'_>, open: &mut Option<(usize, &str)>| -> io::Result<()> {
        if let Some((index, kind)) = open.take() {
            if kind == "thinking" {
                send(
                    w,
                    json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": format!("sig-{index}")}}),
                )?;
            }
            send(w, json!({"type": "content_block_stop", "index": index}))?;
        }
        Ok(())
    };
    let mut usage_out = 0;
    let mut scratch = Vec::new();
    let mut stop_reason = None;
    for event in events {
        match event {
            Event::Text(text) | Event::Reasoning(text) => {
                let kind = if matches!(event, Event::Text(_)) { "text" } else { "thinking" };
                if open.map(|(_, k)| k) != Some(kind) {
                    stop(w, &mut open)?;
                    let block = if kind == "text" {
                        json!({"type": "text", "text": ""})
                    } else {
                        json!({"type": "thinking", "thinking": ""})
                    };
                    send(
                        w,
                        json!({"type": "content_block_start", "index": next, "content_block": block}),
                    )?;
                    open = Some((next, kind));
                    next += 1;
                }
                let index = open.map_or(0, |(i, _)| i);
                // `{"type":"content_block_delta","index":i,"delta":{"type":"text_delta",
                // "text":…}}` (or thinking), written without a `Value`.
                let field = if kind == "text" { "text" } else { "thinking" };
                let before = format!(
                    "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{index},\"delta\":{{\"type\":\"{field}_delta\",\"{field}\":"
                );
                write_piece(w, &mut scratch, &before, text, "}}\n\n")?;
            }
            Event::ToolCall { id, name, args, .. } => {
                stop(w, &mut open)?;
                send(
                    w,
                    json!({"type": "content_block_start", "index": next, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
                )?;
                for piece in split_chars(&arguments_text(args), ARGUMENT_PIECE_CHARS) {
                    send(
                        w,
                        json!({"type": "content_block_delta", "index": next, "delta": {"type": "input_json_delta", "partial_json": piece}}),
                    )?;
                }
                send(w, json!({"type": "content_block_stop", "index": next}))?;
                next += 1;
            }
            Event::Finish(reason) => {
                stop(w, &mut open)?;
                stop_reason = Some(match *reason {
                    "stop" => "end_turn",
                    "tool_calls" => "tool_use",
                    "length" => "max_tokens",
                    "content_filter" => "refusal",
                    other => other,
                });
            }
            Event::Usage { completion, .. } | Event::CachedUsage { completion, .. } => {
                usage_out = *completion;
            }
            Event::Done => {
                stop(w, &mut open)?;
                send(
                    w,
                    json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": usage_out}}),
                )?;
                send(w, json!({"type": "message_stop"}))?;
            }
            Event::Raw(raw) => write_chunk(w, raw)?,
            Event::Stamp | Event::Pause(_) => {}
            Event::Gate(name) => {
                std::io::Write::flush(w)?;
                super::script::wait_gate(name);
            }
        }
    }
    Ok(())
}
