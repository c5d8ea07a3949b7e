//! Every exact value a vault of this process learned (the host's credentials, the
//! provider's key, the team's values, what sessions saw), for the logs: a trace of a
//! frame may hold a value restored for a tool, which no shape would find.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::shapes::Found;

#[derive(Default)]
struct Known {
    values: Vec<(String, &'static str)>,
    automaton: Option<AhoCorasick>,
    stale: bool,
}

static KNOWN: std::sync::Mutex<Option<Known>> = std::sync::Mutex::new(None);

/// Values kept at most (the oldest stop being scrubbed past this).
const MAX: usize = 100_000;

/// Remembers `value`, a secret of `kind`.
pub(super) fn remember(value: &str, kind: &'static str) {
    let mut known = crate::sync::lock(&KNOWN);
    let known = known.get_or_insert_with(Known::default);
    if known.values.len() >= MAX {
        known.values.remove(0);
    }
    known.values.push((value.to_string(), kind));
    known.stale = true;
}

/// Where `text` holds a remembered value, as spans of their kind.
pub(super) fn spans(text: &str, found: &mut Vec<Found>) {
    let mut known = crate::sync::lock(&KNOWN);
    let Some(known) = known.as_mut() else { return };
    if known.stale || known.automaton.is_none() {
        let values = known.values.iter().map(|(v, _)| v.as_str());
        known.automaton =
            AhoCorasickBuilder::new().match_kind(MatchKind::LeftmostLongest).build(values).ok();
        known.stale = false;
    }
    let Some(automaton) = &known.automaton else { return };
    for m in automaton.find_iter(text) {
        let kind = known.values[m.pattern().as_usize()].1;
        found.push(Found { start: m.start(), end: m.end(), kind, name: None });
    }
}
