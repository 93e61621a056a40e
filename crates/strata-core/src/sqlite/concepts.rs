//! SQLite's side of `crate::concepts`: its statements and row decoding.

use crate::error::Result;
use crate::store::{Store, StoreTx};
use rusqlite::{Connection, OptionalExtension};

/// How many grouping passes have written concepts (`concept_passes` in `settings`). A pass
/// reads it before it plans and writes only if it has not moved
/// ([`StoreTx::bump_concept_passes`]): two passes at once never both write (each would form
/// the same concepts again, every member in two).
fn passes(conn: &Connection) -> Result<i64> {
    let v: Option<String> = conn
        .prepare_cached("SELECT value FROM settings WHERE key = 'concept_passes'")?
        .query_row([], |r| r.get(0))
        .optional()?;
    Ok(v.and_then(|v| v.parse().ok()).unwrap_or(0))
}

impl Store {
    /// How many grouping passes have written concepts (see [`StoreTx::bump_concept_passes`]).
    pub fn concept_passes(&self) -> Result<i64> {
        passes(self.sqlite()?)
    }
}

impl StoreTx<'_> {
    /// Inside the transaction that writes a grouping pass: whether no other pass wrote since
    /// this one read [`Store::concept_passes`] as `seen` — then counts this pass and returns
    /// true; otherwise writes nothing and returns false.
    pub fn bump_concept_passes(&mut self, seen: i64) -> Result<bool> {
        if passes(self.conn()?)? != seen {
            return Ok(false);
        }
        self.conn()?.execute(
            "INSERT INTO settings (key, value) VALUES ('concept_passes', ?1) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [(seen + 1).to_string()],
        )?;
        Ok(true)
    }
}
