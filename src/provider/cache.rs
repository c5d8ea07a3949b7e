//! Where a request asks Anthropic to cache its prefix (`cache_control` breakpoints). Pure.
//!
//! The API caches the prefix that ends at each breakpoint and allows four of them: one on
//! the last tool definition (the tools, which change only when MCP tools or the mode do),
//! one at the end of the system prompt, one on the last block of the newest message (what
//! the next call reads), and one on the last message of the previous request (what the
//! previous call wrote, read now even when this call added many blocks).

/// The most breakpoints a request may carry.
pub const MAX_BREAKPOINTS: usize = 4;

/// The breakpoints of one request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Breakpoints {
    /// On the last tool definition.
    pub tools: bool,
    /// At the end of the system prompt.
    pub system: bool,
    /// On the last block of these messages (indexes into the request's messages), the
    /// previous request's end first; each at most once.
    pub messages: [Option<usize>; 2],
}

impl Breakpoints {
    /// How many there are.
    pub fn count(&self) -> usize {
        usize::from(self.tools)
            + usize::from(self.system)
            + self.messages.iter().filter(|m| m.is_some()).count()
    }

    /// Whether the message at `index` carries one.
    pub fn on_message(&self, index: usize) -> bool {
        self.messages.contains(&Some(index))
    }
}

/// The breakpoints of a request with `tools` tool definitions, a system prompt (`system`:
/// not empty) and `messages` messages, where the previous request of the conversation had
/// `previous_end` messages (the first `previous_end` of these).
pub fn breakpoints(
    tools: usize,
    system: bool,
    messages: usize,
    previous_end: Option<usize>,
) -> Breakpoints {
    let newest = messages.checked_sub(1);
    let previous = previous_end.and_then(|end| end.checked_sub(1)).filter(|p| Some(*p) < newest);
    Breakpoints { tools: tools > 0, system, messages: [previous, newest] }
}

/// Where the previous request of a conversation ended: right before its last assistant
/// message (the reply to that request), when there is one with something before it.
/// `assistant[i]`: whether message `i` is the model's.
pub fn previous_end(assistant: &[bool]) -> Option<usize> {
    assistant.iter().rposition(|a| *a).filter(|at| *at > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_request_marks_tools_system_and_its_message() {
        let b = breakpoints(3, true, 1, None);
        assert!(b.tools && b.system);
        assert_eq!(b.messages, [None, Some(0)]);
        assert_eq!(b.count(), 3);
    }

    #[test]
    fn a_later_request_also_marks_where_the_previous_one_ended() {
        // user, assistant (tool calls), user (results): the previous request had 1.
        let roles = [false, true, false];
        let b = breakpoints(3, true, 3, previous_end(&roles));
        assert_eq!(b.messages, [Some(0), Some(2)]);
        assert!(b.on_message(0) && b.on_message(2) && !b.on_message(1));
        assert_eq!(b.count(), MAX_BREAKPOINTS);
    }

    #[test]
    fn never_more_than_four_whatever_the_conversation() {
        for tools in [0, 1, 40] {
            for system in [false, true] {
                for messages in 0..30 {
                    for previous in [None, Some(0), Some(1), Some(messages), Some(messages + 3)] {
                        let b = breakpoints(tools, system, messages, previous);
                        assert!(b.count() <= MAX_BREAKPOINTS, "{b:?}");
                        assert_eq!(b.tools, tools > 0);
                        for m in b.messages.iter().flatten() {
                            assert!(*m < messages, "a mark on a message that exists: {b:?}");
                        }
                        if let [Some(a), Some(b)] = b.messages {
                            assert!(a < b, "two different messages, oldest first");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn no_tools_no_system_no_messages_no_marks() {
        assert_eq!(breakpoints(0, false, 0, None).count(), 0);
        assert_eq!(previous_end(&[]), None);
        assert_eq!(previous_end(&[false]), None);
        assert_eq!(previous_end(&[true, false]), None, "nothing before the first reply");
        assert_eq!(previous_end(&[false, true, false, true, false]), Some(3));
    }
}
