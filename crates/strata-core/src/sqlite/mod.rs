//! The SQLite engine: the only place that speaks SQL or names rusqlite (a test guards it).
//! It opens and migrates the file, writes the log and its projections, and answers each
//! feature's reads with its own statements. The domain it serves (what a memory is, the rules
//! of a write, the forget cascade) lives outside, in the modules beside this one.
//!
//! One writer at a time: [`Db::write`] takes SQLite's write lock (`BEGIN IMMEDIATE`) across
//! processes; every write of the log happens inside that transaction ([`Tx`]).

pub(crate) mod adapter_use;
pub(crate) mod adapters;
pub(crate) mod curation;
pub(crate) mod dataset_load;
pub(crate) mod dataset_search;
pub(crate) mod dataset_sql;
pub(crate) mod datasets;
pub(crate) mod forget;
pub(crate) mod fts;
pub(crate) mod health;
pub(crate) mod log;
pub(crate) mod projection;
pub(crate) mod query;
pub(crate) mod reads;
pub(crate) mod rows;
pub(crate) mod runs;
pub mod schema;
/// A PostgreSQL store's table copied for SQL over it.
#[cfg(feature = "postgres")]
pub(crate) mod table_copy;
pub(crate) mod vector_index;
pub(crate) mod vector_scan;
pub(crate) mod vectors;

use std::ops::Deref;
use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use crate::error::{Error, Result};

/// An open SQLite database.
pub(crate) struct Db(Connection);

impl Deref for Db {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.0
    }
}

impl std::ops::DerefMut for Db {
    fn deref_mut(&mut self) -> &mut Connection {
        &mut self.0
    }
}

impl Db {
    /// Opens or creates the database file at `path` and brings its schema up to date.
    pub(crate) fn open(path: &Path) -> Result<Db> {
        schema::open(path).map(Db)
    }

    /// A new in-memory database.
    pub(crate) fn in_memory() -> Result<Db> {
        schema::open_in_memory().map(Db)
    }

    /// Starts the one write transaction: SQLite's write lock, held until commit or drop.
    pub(crate) fn write(&mut self) -> Result<Tx<'_>> {
        Ok(Tx(self.0.transaction_with_behavior(TransactionBehavior::Immediate)?))
    }

    /// Whether another connection holds the write lock now: asked by taking it without
    /// waiting and letting it go at once.
    pub(crate) fn writer_busy(&self) -> Result<bool> {
        self.0.busy_timeout(std::time::Duration::ZERO)?;
        let tried = self.0.execute_batch("BEGIN IMMEDIATE; ROLLBACK;");
        self.0.busy_timeout(schema::BUSY_TIMEOUT)?;
        match tried.map_err(Error::from) {
            Ok(()) => Ok(false),
            Err(Error::Busy) => Ok(true),
            Err(e) => Err(e),
        }
    }
}

/// A write transaction (see [`Db::write`]); dropped without [`Tx::commit`], it rolls back.
pub(crate) struct Tx<'a>(rusqlite::Transaction<'a>);

impl Deref for Tx<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.0
    }
}

impl Tx<'_> {
    /// Commits the transaction.
    pub(crate) fn commit(self) -> Result<()> {
        Ok(self.0.commit()?)
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ffi::ErrorCode;
        match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Error::Busy,
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => Error::Corrupt(e.to_string()),
            _ => Error::Storage(e.to_string()),
        }
    }
}
