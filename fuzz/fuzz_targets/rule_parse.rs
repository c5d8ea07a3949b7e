//! Permission rules as a team writes them: any text parses to a rule or an error naming
//! it, and a parsed rule judges any call (its first line as the rule, the rest as the
//! command, path and host of the call) without panicking.
//!
//! Input: a rule, a newline, a subject.

#![no_main]

use iac_code::rules::{Rule, RuleSet, Source, Subject, Verdict, split_list};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (rule, subject) = text.split_once('\n').unwrap_or((&text, "x"));
    let mut rules = Vec::new();
    for verdict in [Verdict::Allow, Verdict::Ask, Verdict::Deny] {
        for part in split_list(rule) {
            match Rule::parse(part, verdict, Source::Env("FUZZ")) {
                Ok(rule) => rules.push(rule),
                Err(why) => assert!(!why.is_empty()),
            }
        }
    }
    let set = RuleSet::new(rules);
    let items = [subject.to_string()];
    let tool = subject.split_whitespace().next().unwrap_or("bash");
    for tool in ["bash", "write_file", "web_fetch", tool] {
        let _ = set.verdict(&Subject { tool, commands: &items, ..Subject::default() });
        let _ = set.verdict(&Subject {
            tool,
            commands: &items,
            opaque: Some(subject),
            ..Subject::default()
        });
        let _ = set.verdict(&Subject { tool, paths: &items, ..Subject::default() });
        let _ = set.verdict(&Subject { tool, host: Some(subject), ..Subject::default() });
    }
});
