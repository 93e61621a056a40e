//! The people a server over one store lets in (migration 0010 on SQLite, 0003 on PostgreSQL):
//! each by a token of their own, made here and shown once; the store keeps only its SHA-256, so
//! neither the database, a backup nor a log holds a token that works. Each person has their
//! own limits (requests a minute, bytes a request). A revoked person keeps their row without a
//! token, so the list still says who had access and until when; adding them again gives them a
//! new token.
//!
//! Tokens are looked up in the database on every request (no process keeps them): a token
//! revoked through one server, or the CLI, is refused by every server over the store at once.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::clock::{from_ms, to_ms};
use crate::error::{Error, Result};
use crate::sql::{Row, Sql, SqlValue};
use crate::store::Store;

/// The most bytes one request may carry on Strata's servers; a person's limit is at most this.
pub const MAX_REQUEST_BYTES: u32 = 1 << 20;

/// The most requests a minute a person may be allowed.
pub const MAX_PER_MINUTE: u32 = 100_000;

/// What one person may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Requests a minute (a burst of this many, refilled evenly over the minute).
    pub per_minute: u32,
    /// Bytes of one request's body.
    pub max_request_bytes: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { per_minute: 120, max_request_bytes: MAX_REQUEST_BYTES }
    }
}

impl Limits {
    /// The limits, checked: each at least 1 and at most the servers' own ceiling.
    pub fn checked(self) -> Result<Limits> {
        if !(1..=MAX_PER_MINUTE).contains(&self.per_minute) {
            return Err(Error::Invalid(format!(
                "requests a minute must be between 1 and {MAX_PER_MINUTE}, not {}",
                self.per_minute
            )));
        }
        if !(1..=MAX_REQUEST_BYTES).contains(&self.max_request_bytes) {
            return Err(Error::Invalid(format!(
                "a request's size limit must be between 1 byte and {MAX_REQUEST_BYTES} bytes (1 MiB), not {}",
                self.max_request_bytes
            )));
        }
        Ok(self)
    }
}

/// Someone a server lets in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Person {
    /// Their name: also the agent id their private memories are kept under.
    pub name: String,
    /// What they may send.
    pub limits: Limits,
    /// When their token was made.
    pub created_at: DateTime<Utc>,
    /// When their token was revoked (then they have none).
    pub revoked_at: Option<DateTime<Utc>>,
}

/// `name` as a person's name: 1–64 lowercase letters, digits, `.`, `-` or `_`, starting with a
/// letter or digit (it names their private memories' scope, and shows in logs and metrics).
pub fn person_name(name: &str) -> Result<String> {
    let name = name.trim().to_lowercase();
    let ok = (1..=64).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if !ok {
        return Err(Error::Invalid(format!(
            "'{}' is not a person's name: use 1 to 64 letters, digits, '.', '-' or '_', starting with a letter or digit",
            crate::error::bounded(&name)
        )));
    }
    Ok(name)
}

/// The SHA-256 of a token, as the store keeps it (hex). Tokens are 32 random bytes, so a fast
/// hash is enough: there is nothing to guess.
pub fn token_sha256(token: &str) -> String {
    Sha256::digest(token.trim().as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

const COLUMNS: &str = "name, per_minute, max_request_bytes, created_at, revoked_at";

fn person_of(values: Vec<Option<SqlValue>>) -> Result<Person> {
    let row = Row::new(values, "people");
    let limit = |i: usize| row.int(i).map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    Ok(Person {
        limits: Limits { per_minute: limit(1)?, max_request_bytes: limit(2)? },
        created_at: from_ms(row.int(3)?),
        revoked_at: row.opt_int(4)?.map(from_ms),
        name: row.text(0)?,
    })
}

impl Store {
    /// Lets `name` in with `limits`: returns their new token, which the store does not keep
    /// (only its SHA-256). Someone who already has a token must be revoked first; someone
    /// revoked gets a new one.
    pub fn add_person(&mut self, name: &str, limits: Limits) -> Result<String> {
        let name = person_name(name)?;
        let limits = limits.checked()?;
        let token = crate::access::new_token();
        let dialect = self.engine.dialect();
        let mut q = Sql::new(dialect, "");
        q.bind(
            "INSERT INTO people (name, token_sha256, per_minute, max_request_bytes, created_at) VALUES (?, ",
            SqlValue::Text(name.clone()),
        )
        .bind("?, ", SqlValue::Text(token_sha256(&token)))
        .bind("?, ", SqlValue::Int(limits.per_minute.into()))
        .bind("?, ", SqlValue::Int(limits.max_request_bytes.into()))
        .bind("?) ", SqlValue::Int(to_ms(self.clock.now())))
        .push(
            "ON CONFLICT (name) DO UPDATE SET token_sha256 = excluded.token_sha256, per_minute = excluded.per_minute, \
                 max_request_bytes = excluded.max_request_bytes, created_at = excluded.created_at, revoked_at = NULL \
                 WHERE people.revoked_at IS NOT NULL",
        );
        if self.engine.plain().execute(&q)? == 0 {
            return Err(Error::Invalid(format!(
                "{name} already has a token: revoke it first (strata people revoke {name}) to give them a new one"
            )));
        }
        Ok(token)
    }

    /// Takes `name`'s token away: every server over the store refuses it from the next request.
    pub fn revoke_person(&mut self, name: &str) -> Result<()> {
        let name = person_name(name)?;
        let mut q = Sql::new(self.engine.dialect(), "");
        q.bind("UPDATE people SET token_sha256 = NULL, revoked_at = ? ", SqlValue::Int(to_ms(self.clock.now())))
            .bind("WHERE name = ? AND revoked_at IS NULL", SqlValue::Text(name.clone()));
        if self.engine.plain().execute(&q)? == 0 {
            return Err(Error::Invalid(format!(
                "nobody named '{name}' has a token to revoke (strata people list shows who has one)"
            )));
        }
        Ok(())
    }

    /// Everyone let in, or once let in, by name.
    pub fn people(&self) -> Result<Vec<Person>> {
        let q = Sql::new(self.engine.dialect(), format!("SELECT {COLUMNS} FROM people ORDER BY name"));
        self.engine.plain().rows(&q)?.into_iter().map(person_of).collect()
    }

    /// Whether the store answers (a round trip that reads the people table): what a server's
    /// readiness check asks.
    pub fn ping(&self) -> Result<()> {
        let q = Sql::new(self.engine.dialect(), "SELECT count(*) FROM people WHERE name = ''");
        self.engine.plain().rows(&q).map(drop)
    }

    /// Takes one request from `name`'s allowance of `per_minute` in the store itself, shared by
    /// every server over it: `None` where the store keeps no allowances (a SQLite file, whose
    /// servers each keep their own), else `Err(seconds)` to wait when none is left.
    pub fn take_request(&self, name: &str, per_minute: u32) -> Result<Option<std::result::Result<(), u64>>> {
        #[cfg(not(feature = "postgres"))]
        let _ = (name, per_minute);
        match &self.engine {
            crate::storage::Engine::Sqlite(_) => Ok(None),
            #[cfg(feature = "postgres")]
            crate::storage::Engine::Postgres(pg) => pg.take_request(name, per_minute).map(Some),
        }
    }

    /// Whose token `token` is (none: nobody's, or revoked).
    pub fn person_with_token(&self, token: &str) -> Result<Option<Person>> {
        let mut q = Sql::new(self.engine.dialect(), "");
        q.push(&format!("SELECT {COLUMNS} FROM people WHERE "))
            .bind("token_sha256 = ? AND revoked_at IS NULL", SqlValue::Text(token_sha256(token)));
        self.engine.plain().rows(&q)?.into_iter().next().map(person_of).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_and_lowercased() {
        assert_eq!(person_name(" Alice ").unwrap(), "alice");
        assert_eq!(person_name("ana.m-2_x").unwrap(), "ana.m-2_x");
        for bad in ["", "-ana", "ana smith", "ana/x", &"a".repeat(65)] {
            assert!(person_name(bad).unwrap_err().to_string().contains("is not a person's name"), "{bad}");
        }
    }

    #[test]
    fn limits_are_bounded_by_the_servers_ceiling() {
        assert!(Limits::default().checked().is_ok());
        let too_big = Limits { max_request_bytes: MAX_REQUEST_BYTES + 1, ..Limits::default() };
        assert!(too_big.checked().unwrap_err().to_string().contains("1 MiB"));
        assert!(Limits { per_minute: 0, ..Limits::default() }.checked().is_err());
    }

    #[test]
    fn a_token_is_kept_as_its_sha256() {
        // The SHA-256 of "abc" (FIPS 180-2, appendix B.1).
        assert_eq!(token_sha256("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
