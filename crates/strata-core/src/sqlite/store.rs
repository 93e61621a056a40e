//! SQLite's side of `crate::store`: reads inside a write transaction.

use rusqlite::Connection;

use crate::error::Result;
use crate::storage::EngineTx;
use crate::store::StoreTx;

impl StoreTx<'_> {
    /// The underlying connection (the SQLite engine's reads inside the transaction); a feature
    /// PostgreSQL does not serve yet answers [`crate::Error::Unsupported`].
    pub(crate) fn conn(&self) -> Result<&Connection> {
        match &self.tx {
            EngineTx::Sqlite(tx) => Ok(tx),
            #[cfg(feature = "postgres")]
            EngineTx::Postgres(_) => Err(crate::storage::not_on_postgres()),
        }
    }
}
