//! The OpenAI chat-completions stream: the script's events as SSE `data:` lines carrying
//! `chat.completion.chunk` objects (role chunk first, content, reasoning, tool-call
//! headers and argument pieces, finish, usage), then `data: [DONE]`.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::http::{Out, write_chunk, write_piece};
use super::script::{ARGUMENT_PIECE_CHARS, Event, arguments_text, split_chars};

/// Writes one SSE `data:` event carrying `payload` as one chunk.
fn write_data(w: &mut Out<'_>, payload: &Value) -> io::Result<()> {
    write_chunk(w, &format!("data: {payload}\n\n"))
}

/// An OpenAI `chat.completion.chunk` with one choice.
fn chunk(model: &str, delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    })
}

/// Writes `events` as OpenAI chunks, one HTTP chunk each (nothing for an empty script).
pub(super) fn write_events(w: &mut Out<'_>, events: &[Event], model: &str) -> io::Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    write_role(w, model)?;
    write_more(w, events, model)
}

/// The role chunk that opens every reply.
pub(super) fn write_role(w: &mut Out<'_>, model: &str) -> io::Result<()> {
    write_data(w, &chunk(model, json!({"role": "assistant", "content": ""}), None))
}

/// Writes `events` as OpenAI chunks after the role chunk.
pub(super) fn write_more(w: &mut Out<'_>, events: &[Event], model: &str) -> io::Result<()> {
    // The same chunk as `chunk(model, {field: text}, None)`, written without a `Value`.
    let head = format!(
        "data: {{\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":{},\"choices\":[{{\"index\":0,\"delta\":{{",
        Value::from(model)
    );
    let text_head = format!("{head}\"content\":");
    let thought_head = format!("{head}\"reasoning_content\":");
    let tail = "},\"finish_reason\":null}]}\n\n";
    let mut scratch = Vec::new();
    for event in events {
        match event {
            Event::Text(text) => write_piece(w, &mut scratch, &text_head, text, tail)?,
            Event::Reasoning(text) => write_piece(w, &mut scratch, &thought_head, text, tail)?,
            Event::ToolCall { index, id, name, args } => {
                let header = json!({"tool_calls": [{
                    "index": index,
                    "id": id,
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                }]});
                write_data(w, &chunk(model, header, None))?;
                for piece in split_chars(&arguments_text(args), ARGUMENT_PIECE_CHARS) {
                    let delta =
                        json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]});
                    write_data(w, &chunk(model, delta, None))?;
                }
            }
            Event::Finish(reason) => write_data(w, &chunk(model, json!({}), Some(*reason)))?,
            Event::Usage { .. } | Event::CachedUsage { .. } => {
                let (prompt, completion, read, reasoning) = match event {
                    Event::CachedUsage { prompt, completion, cached_read, reasoning, .. } => {
                        (*prompt, *completion, *cached_read, *reasoning)
                    }
                    Event::Usage { prompt, completion } => (*prompt, *completion, 0, 0),
                    _ => (0, 0, 0, 0),
                };
                let usage = json!({
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": 1_700_000_000,
                    "model": model,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": prompt,
                        "completion_tokens": completion,
                        "total_tokens": prompt + completion,
                        "prompt_tokens_details": {"cached_tokens": read},
                        "completion_tokens_details": {"reasoning_tokens": reasoning},
                    },
                });
                write_data(w, &usage)?;
            }
            Event::Raw(raw) => write_chunk(w, raw)?,
            Event::Done => write_chunk(w, "data: [DONE]\n\n")?,
            Event::Stamp => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_micros());
                write_data(w, &chunk(model, json!({"content": format!("t={now}")}), None))?;
                w.flush()?;
            }
            Event::Pause(ms) => {
                w.flush()?;
                std::thread::sleep(std::time::Duration::from_millis(*ms));
            }
            Event::Gate(name) => {
                w.flush()?;
                super::script::wait_gate(name);
            }
        }
    }
    Ok(())
}
