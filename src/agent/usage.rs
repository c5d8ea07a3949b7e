//! What model calls use and cost: each call's tokens, priced with `config::pricing`, summed
//! over a turn and over a session (`TurnUsage`). Pure.

use crate::config::pricing::{Currency, Price};
use crate::provider::Usage;

/// What some calls cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Cost {
    /// No call yet.
    #[default]
    Nothing,
    /// Every call was priced, in one currency: this many micro-units.
    Priced { micros: u64, currency: Currency },
    /// A call's price was not known (or calls were priced in different currencies): no
    /// figure rather than a wrong one.
    Unknown,
}

impl Cost {
    /// What a call of `usage` costs at `price`.
    pub fn of(usage: &TurnUsage, price: Option<Price>) -> Cost {
        match price {
            Some(p) => Cost::Priced {
                micros: p.cost(
                    usage.full_input(),
                    usage.cached_read,
                    usage.cached_write,
                    usage.output,
                ),
                currency: p.currency,
            },
            None => Cost::Unknown,
        }
    }

    /// Both costs together.
    pub fn plus(self, other: Cost) -> Cost {
        match (self, other) {
            (Cost::Nothing, c) | (c, Cost::Nothing) => c,
            (Cost::Priced { micros: a, currency: x }, Cost::Priced { micros: b, currency: y })
                if x == y =>
            {
                Cost::Priced { micros: a.saturating_add(b), currency: x }
            }
            _ => Cost::Unknown,
        }
    }

    /// The amount in units of the currency, when it is known.
    pub fn amount(&self) -> Option<(f64, Currency)> {
        match self {
            Cost::Priced { micros, currency } => Some((*micros as f64 / 1_000_000.0, *currency)),
            Cost::Nothing | Cost::Unknown => None,
        }
    }
}

/// Tokens (and their cost) over some model calls: one, a turn's, a session's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TurnUsage {
    /// Input tokens over every LLM call, cached ones included.
    pub input: u64,
    /// Output tokens over every LLM call, reasoning included.
    pub output: u64,
    /// Of `input`, those read from the provider's cache.
    pub cached_read: u64,
    /// Of `input`, those written to the provider's cache.
    pub cached_write: u64,
    /// Of `output`, reasoning.
    pub thought: u64,
    /// Whether any call's usage was estimated.
    pub estimated: bool,
    /// What the calls cost.
    pub cost: Cost,
}

impl TurnUsage {
    /// One call that used `usage` (`estimated`: our guess, the provider said nothing), at
    /// `price`.
    pub fn of_call(usage: &Usage, estimated: bool, price: Option<Price>) -> TurnUsage {
        let mut call = TurnUsage {
            input: usage.input,
            output: usage.output,
            cached_read: usage.cached_read.min(usage.input),
            cached_write: usage.cached_write.min(usage.input.saturating_sub(usage.cached_read)),
            thought: usage.thought.min(usage.output),
            estimated,
            cost: Cost::Nothing,
        };
        call.cost = Cost::of(&call, price);
        call
    }

    /// Input tokens read at full price (neither from nor into the cache).
    pub fn full_input(&self) -> u64 {
        self.input.saturating_sub(self.cached_read).saturating_sub(self.cached_write)
    }

    /// Adds `other`.
    pub fn add(&mut self, other: TurnUsage) {
        self.input += other.input;
        self.output += other.output;
        self.cached_read += other.cached_read;
        self.cached_write += other.cached_write;
        self.thought += other.thought;
        self.estimated |= other.estimated;
        self.cost = self.cost.plus(other.cost);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SONNET: Price = Price {
        input: 3_000_000,
        cached_input: 300_000,
        cache_write: 3_750_000,
        output: 15_000_000,
        currency: Currency::USD,
    };

    fn call(input: u64, read: u64, write: u64, output: u64) -> Usage {
        Usage { input, output, cached_read: read, cached_write: write, thought: 0 }
    }

    #[test]
    fn a_call_is_priced_by_what_was_read_written_and_sent_at_full_price() {
        // 1,000 full at $3, 10,000 read at $0.30, 2,000 written at $3.75, 500 out at $15
        // per million: 3,000 + 3,000 + 7,500 + 7,500 micro-dollars.
        let c = TurnUsage::of_call(&call(13_000, 10_000, 2_000, 500), false, Some(SONNET));
        assert_eq!(c.full_input(), 1_000);
        assert_eq!(c.cost, Cost::Priced { micros: 21_000, currency: Currency::USD });
        assert_eq!(c.cost.amount().map(|(a, _)| a), Some(0.021));
    }

    #[test]
    fn a_turn_sums_its_calls_tokens_and_costs() {
        let mut turn = TurnUsage::default();
        assert_eq!(turn.cost.amount(), None, "no call, no cost");
        for _ in 0..3 {
            turn.add(TurnUsage::of_call(&call(13_000, 10_000, 2_000, 500), false, Some(SONNET)));
        }
        assert_eq!((turn.input, turn.cached_read, turn.cached_write), (39_000, 30_000, 6_000));
        assert_eq!(turn.output, 1_500);
        assert_eq!(turn.cost, Cost::Priced { micros: 63_000, currency: Currency::USD });
    }

    #[test]
    fn one_unknown_price_or_a_second_currency_makes_the_cost_unknown() {
        let priced = TurnUsage::of_call(&call(100, 0, 0, 10), false, Some(SONNET));
        let unknown = TurnUsage::of_call(&call(100, 0, 0, 10), false, None);
        let mut turn = priced;
        turn.add(unknown);
        assert_eq!(turn.cost, Cost::Unknown);
        assert_eq!(turn.cost.amount(), None);
        let euro = Price { currency: Currency::parse("EUR").unwrap(), ..SONNET };
        let mut mixed = priced;
        mixed.add(TurnUsage::of_call(&call(100, 0, 0, 10), false, Some(euro)));
        assert_eq!(mixed.cost, Cost::Unknown);
    }

    #[test]
    fn cached_counts_never_exceed_the_prompt() {
        let c = TurnUsage::of_call(&call(100, 80, 80, 5), false, Some(Price::FREE));
        assert_eq!((c.cached_read, c.cached_write, c.full_input()), (80, 20, 0));
        assert_eq!(c.cost, Cost::Priced { micros: 0, currency: Currency::USD });
    }
}
