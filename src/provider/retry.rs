//! Backoff with jitter, and `Retry-After` parsing, for retries before anything streamed.

use std::time::Duration;

use crate::config::RetryPolicy;

/// The delay before retry number `attempt` (0-based): exponential from `base_delay`,
/// plus up to 25% jitter, capped at `max_delay`; `retry_after` wins when given.
pub fn delay(policy: &RetryPolicy, attempt: u32, retry_after: Option<Duration>) -> Duration {
    if let Some(wait) = retry_after {
        return wait.min(policy.max_delay);
    }
    let exp = policy.base_delay.saturating_mul(1u32 << attempt.min(16));
    let jitter_permille = (uuid::Uuid::new_v4().as_u128() % 251) as u32;
    let jittered = exp + exp * jitter_permille / 1000;
    jittered.min(policy.max_delay)
}

/// Parses `Retry-After` in its seconds form (HTTP dates are rare from LLM APIs and ignored).
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    (secs >= 0.0 && secs.is_finite()).then(|| Duration::from_secs_f64(secs.min(3600.0)))
}

/// Whether an HTTP status is worth retrying.
pub fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || (500..600).contains(&status)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_elapsed: Duration::from_secs(60),
        }
    }

    #[test]
    fn backoff_grows_with_bounded_jitter_and_caps() {
        for attempt in 0..3 {
            let base = Duration::from_millis(500) * (1 << attempt);
            let d = delay(&policy(), attempt, None);
            assert!(d >= base && d <= base * 5 / 4, "{attempt}: {d:?}");
        }
        assert_eq!(delay(&policy(), 10, None), Duration::from_secs(8));
        assert_eq!(delay(&policy(), 0, Some(Duration::from_secs(100))), Duration::from_secs(8));
    }

    #[test]
    fn retry_after_and_statuses() {
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert!(retryable_status(429) && retryable_status(503) && retryable_status(408));
        assert!(!retryable_status(400) && !retryable_status(401) && !retryable_status(404));
    }
}
