//! SQLite's side of `crate::store`: reads inside a write transaction.

use rusqlite::Connection;

use super::rows::{MEMORY_COLUMNS, memory_from_row};
use crate::error::Result;
use crate::model::Memory;
use crate::store::StoreTx;

impl StoreTx<'_> {
    /// The underlying connection (the engine's reads inside the transaction).
    pub(crate) fn conn(&self) -> &Connection {
        &self.tx
    }

    /// Every memory not expired (maintenance's input).
    pub(crate) fn live_memories(&self) -> Result<Vec<Memory>> {
        let sql = format!("SELECT {MEMORY_COLUMNS} FROM memories AS m WHERE m.expired_at IS NULL");
        let mut stmt = self.conn().prepare(&sql)?;
        let rows = stmt.query_map([], memory_from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}
