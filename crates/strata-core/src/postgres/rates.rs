//! Each person's request rate on PostgreSQL, shared by every server over the store: the same
//! bucket as `access::RateLimiter` (their minute's allowance, refilled evenly), kept in
//! `rate_buckets` and taken from in one statement, so two servers cannot both spend the last
//! request. Time is the database's clock, one for every server.

use super::Pg;
use crate::error::Result;

/// Takes one request if one is left (the bucket refilled up to now first); returns the row
/// only then. `$1` the person, `$2` their requests a minute.
const TAKE: &str = "WITH now AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms) \
    INSERT INTO rate_buckets AS b (name, tokens, at) SELECT $1, $2::float8 - 1, now.ms FROM now \
    ON CONFLICT (name) DO UPDATE \
    SET tokens = least($2::float8, b.tokens + greatest(excluded.at - b.at, 0) * $2::float8 / 60000.0) - 1, \
        at = excluded.at \
    WHERE least($2::float8, b.tokens + greatest(excluded.at - b.at, 0) * $2::float8 / 60000.0) >= 1 - 1e-9 \
    RETURNING tokens";

/// What is left of the person's allowance now.
const LEFT: &str = "SELECT least($2::float8, tokens + greatest((extract(epoch FROM clock_timestamp()) * 1000)::bigint \
    - at, 0) * $2::float8 / 60000.0) FROM rate_buckets WHERE name = $1";

impl Pg {
    /// Takes one request from `name`'s allowance of `per_minute`: `Err(seconds)` to wait (at
    /// least 1) when none is left.
    pub(crate) fn take_request(&self, name: &str, per_minute: u32) -> Result<std::result::Result<(), u64>> {
        let per_minute = f64::from(per_minute.max(1));
        if !self.client().query(TAKE, &[&name, &per_minute])?.is_empty() {
            return Ok(Ok(()));
        }
        let left: f64 = self.client().query_opt(LEFT, &[&name, &per_minute])?.map_or(0.0, |r| r.get(0));
        Ok(Err(((1.0 - left) / (per_minute / 60.0)).ceil().max(1.0) as u64))
    }
}
