//! The end of a walk: what `Out` learnt becomes a `Classified`, with the terraform calls
//! the gate cannot plan first raised to Destroy.

use super::judge::Out;
use super::path::basename;
use super::{Classified, Tier};

impl Out<'_> {
    /// The result; `lone` says the one terraform call may be planned by the gate.
    pub(super) fn finish(mut self, lone: bool) -> Classified {
        let terraform = if lone { self.tf.pop() } else { None };
        let blocked: Vec<String> = self
            .tf
            .iter()
            .filter(|c| !c.destroy)
            .map(|c| format!("{} apply whose plan cannot be shown first", basename(&c.program)))
            .collect();
        for reason in blocked {
            self.raise(Tier::Destroy, reason);
        }
        if let Some(call) = terraform.as_ref().filter(|c| !c.destroy) {
            let name = basename(&call.program);
            let reason = match call.unknown.is_empty() {
                true => format!("{name} apply: its plan decides"),
                false => format!("{name} apply whose plan cannot be shown first"),
            };
            self.raise(Tier::Destroy, reason);
        }
        self.reasons.sort_by_key(|r| std::cmp::Reverse(r.0));
        Classified {
            tier: self.tier,
            reasons: self.reasons.into_iter().map(|(_, r)| r).collect(),
            prefixes: (!self.no_prefix).then_some(self.prefixes),
            lines: self.lines,
            patterns: self.patterns,
            paths: self.paths,
            file_only: self.tier == Tier::Mutate && !self.non_file && !self.opaque,
            runs_code_in: self.runs_code_in,
            terraform,
            opaque: self.opaque,
            secret: self.secret,
            cloud: if self.opaque || self.local_change { None } else { self.cloud },
        }
    }
}
