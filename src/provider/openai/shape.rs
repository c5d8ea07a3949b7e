//! The shape of a reply's text chunks. A server streams every piece of a reply as the same
//! JSON with only the text changed (`{"id":…,"choices":[{"index":0,"delta":{"content":
//! "…"}}]}`), so once one chunk has been read the general way, the next ones are read by
//! checking the bytes around the text and reading only the text: one JSON string instead
//! of a whole document. Anything that does not fit byte for byte is read the general way.
//!
//! Sound because JSON's structure outside a string token is fixed by the bytes: a chunk
//! that is `head`, one string token, `tail` parses exactly like the learned chunk with its
//! text replaced. The place of the text is checked when it is learned: the learned chunk
//! with a marker in the hole must read, the general way, as that marker in that field and
//! nothing else.

use std::borrow::Cow;

use super::wire::{Chunk, WireDelta};
use crate::provider::Text;

/// Which delta field the text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    /// `content`: reply text.
    Content,
    /// `reasoning_content` or `reasoning`: a thought.
    Reasoning,
}

/// A chunk's bytes around its one text value.
#[derive(Debug)]
pub(super) struct Shape {
    head: String,
    tail: String,
    field: Field,
}

/// Marks the hole when a learned shape is checked.
const PROBE: &str = "\u{1}iac-code:probe\u{1}";

impl Shape {
    /// The shape of `raw`, whose general reading is `chunk`, if the chunk carries nothing
    /// but one text and its place can be told for sure.
    pub(super) fn learn(raw: &str, chunk: &Chunk<'_>) -> Option<Shape> {
        let (field, text) = only_text(chunk).filter(|(_, text)| !text.is_empty())?;
        // The text as the server wrote it must be where serde would write it, once.
        let encoded = serde_json::to_string(text).ok()?;
        let at = raw.find(&encoded)?;
        if raw[at + 1..].contains(&encoded) {
            return None;
        }
        let shape = Shape {
            head: raw[..at].to_string(),
            tail: raw[at + encoded.len()..].to_string(),
            field,
        };
        let probe = format!("{}{}{}", shape.head, serde_json::to_string(PROBE).ok()?, shape.tail);
        let read: Chunk<'_> = serde_json::from_str(&probe).ok()?;
        (only_text(&read) == Some((field, PROBE))).then_some(shape)
    }

    /// The field the text is in.
    pub(super) fn field(&self) -> Field {
        self.field
    }

    /// The field and text of `raw` if it has this shape; `None`: read it the general way.
    pub(super) fn read<'a>(&self, raw: &'a str) -> Option<(Field, Cow<'a, str>)> {
        let middle = raw.strip_prefix(self.head.as_str())?.strip_suffix(self.tail.as_str())?;
        // Exactly one JSON string and nothing else (serde refuses anything after it).
        if !middle.starts_with('"') {
            return None;
        }
        let Text(text) = serde_json::from_str::<Text<'a>>(middle).ok()?;
        Some((self.field, text))
    }
}

/// The one text a chunk carries, if that is all it carries: one wanted choice, no finish,
/// no tool call, no refusal, no usage, no error.
fn only_text<'c>(chunk: &'c Chunk<'_>) -> Option<(Field, &'c str)> {
    if chunk.usage.is_some() || chunk.error.is_some() {
        return None;
    }
    let choice = chunk.choices.only()?;
    if choice.finish_reason.is_some() {
        return None;
    }
    let WireDelta { content, reasoning_content, reasoning, refusal, tool_calls } =
        choice.delta.as_ref()?;
    if refusal.is_some() || tool_calls.is_some() {
        return None;
    }
    match (content, reasoning_content, reasoning) {
        (Some(Text(text)), None, None) => Some((Field::Content, text)),
        (None, Some(Text(text)), None) | (None, None, Some(Text(text))) => {
            Some((Field::Reasoning, text))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn learn(raw: &str) -> Option<Shape> {
        let chunk: Chunk<'_> = serde_json::from_str(raw).unwrap();
        Shape::learn(raw, &chunk)
    }

    const FIRST: &str = r#"{"id":"c-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}"#;

    #[test]
    fn the_next_chunks_are_read_by_their_text_alone() {
        let shape = learn(FIRST).expect("learned");
        let next = FIRST.replace(r#""Hello""#, r#""wor\"ld\n\u00e9""#);
        let (field, text) = shape.read(&next).expect("same shape");
        assert_eq!((field, text.as_ref()), (Field::Content, "wor\"ld\né"));
        let plain = FIRST.replace(r#""Hello""#, r#""plain""#);
        assert!(matches!(shape.read(&plain), Some((_, Cow::Borrowed("plain")))));
    }

    #[test]
    fn anything_else_is_left_to_the_general_reading() {
        let shape = learn(FIRST).expect("learned");
        for other in [
            // Two values where the text was: not one string.
            FIRST.replace(r#""Hello""#, r#""a","refusal":"b""#),
            FIRST.replace(r#""Hello""#, "null"),
            FIRST.replace(r#""Hello""#, r#""unterminated"#),
            FIRST.replace(r#""finish_reason":null"#, r#""finish_reason":"stop""#),
            FIRST.replace(r#""c-1""#, r#""c-2""#),
            r#"{"choices":[],"usage":{"prompt_tokens":1}}"#.to_string(),
        ] {
            assert!(shape.read(&other).is_none(), "{other}");
        }
    }

    #[test]
    fn only_a_chunk_with_one_text_in_a_place_that_can_be_told_teaches_a_shape() {
        // The text also appears elsewhere: its place is not sure.
        assert!(learn(&FIRST.replace(r#""c-1""#, r#""Hello""#)).is_none());
        // Not only text.
        assert!(
            learn(&FIRST.replace(r#""finish_reason":null"#, r#""finish_reason":"stop""#)).is_none()
        );
        let both = r#"{"choices":[{"index":0,"delta":{"content":"a","reasoning_content":"b"}}]}"#;
        assert!(learn(both).is_none());
        // Written differently than serde would: not found, not learned.
        assert!(learn(&FIRST.replace(r#""Hello""#, r#""H\u0065llo""#)).is_none());
        let thought = r#"{"choices":[{"index":0,"delta":{"reasoning_content":"hm"}}]}"#;
        let shape = learn(thought).expect("learned");
        let next = thought.replace("hm", "more");
        let (field, text) = shape.read(&next).unwrap();
        assert_eq!((field, text.as_ref()), (Field::Reasoning, "more"));
    }
}
