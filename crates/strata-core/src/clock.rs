//! Time comes from an injected clock so that tiers, decay, as-of reads and tests are reproducible.

use std::sync::Mutex;

use chrono::{DateTime, Duration, TimeZone, Utc};

/// A source of the current time.
pub trait Clock: Send + Sync {
    /// Now, at millisecond precision (what the store keeps).
    fn now(&self) -> DateTime<Utc>;
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        truncate_ms(Utc::now())
    }
}

/// A clock that only moves when told to; for tests and deterministic maintenance runs.
#[derive(Debug)]
pub struct ManualClock(Mutex<DateTime<Utc>>);

impl ManualClock {
    /// A clock stopped at `start`.
    pub fn new(start: DateTime<Utc>) -> Self {
        ManualClock(Mutex::new(truncate_ms(start)))
    }

    /// A clock stopped at a Unix time in milliseconds.
    pub fn at_ms(ms: i64) -> Self {
        ManualClock::new(from_ms(ms))
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *t += by;
    }

    /// Sets the clock.
    pub fn set(&self, to: DateTime<Utc>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = truncate_ms(to);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Milliseconds since the Unix epoch, as stored.
pub fn to_ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

/// The inverse of [`to_ms`]; out-of-range values clamp to the epoch.
pub fn from_ms(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms).single().unwrap_or_default()
}

fn truncate_ms(t: DateTime<Utc>) -> DateTime<Utc> {
    from_ms(to_ms(t))
}
