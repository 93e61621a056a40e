//! A table dataset's rows copied into an in-memory SQLite database, for a store that keeps them
//! elsewhere (PostgreSQL): SQL over the copy runs as over a SQLite store's file, under the same
//! authorizer and limits (`dataset_sql.rs`; decision 0008).

use rusqlite::Connection;

use crate::datasets::keeping::rows_table;
use crate::datasets::{Cell, Dataset, SqlAnswer, SqlLimits};
use crate::error::Result;
use crate::sqlite::datasets::to_value;

/// A table dataset's rows in SQLite, as `main.dataset_rows_<rid>`.
pub(crate) struct TableCopy {
    /// The dataset's row id in its store, and when it last changed: the copy serves while both
    /// hold.
    pub(crate) rid: i64,
    pub(crate) updated_ms: i64,
    conn: Connection,
}

impl TableCopy {
    /// Copies `rows` (each as long as `d`'s columns, in order) into a new in-memory database.
    pub(crate) fn build(rid: i64, d: &Dataset, rows: &mut dyn Iterator<Item = Result<Vec<Cell>>>) -> Result<TableCopy> {
        let table = rows_table(rid);
        let mut conn = Connection::open_in_memory()?;
        let declared: Vec<String> = d.columns.iter().map(|c| format!("\"{}\" {}", c.name, c.kind.sql())).collect();
        conn.execute_batch(&format!("CREATE TABLE {table} (row_number INTEGER PRIMARY KEY, {})", declared.join(", ")))?;
        let tx = conn.transaction()?;
        {
            let marks = vec!["?"; d.columns.len() + 1].join(", ");
            let mut insert = tx.prepare(&format!("INSERT INTO {table} VALUES ({marks})"))?;
            let mut values = Vec::with_capacity(d.columns.len() + 1);
            for (i, row) in rows.enumerate() {
                values.clear();
                values.push(rusqlite::types::Value::Integer(i as i64 + 1));
                values.extend(row?.iter().map(to_value));
                insert.execute(rusqlite::params_from_iter(values.iter()))?;
            }
        }
        tx.commit()?;
        Ok(TableCopy { rid, updated_ms: crate::clock::to_ms(d.updated_at), conn })
    }

    /// Runs one read-only statement over the copy (see `dataset_sql::run_over`).
    pub(crate) fn run(&mut self, d: &Dataset, sql: &str, limits: SqlLimits) -> Result<SqlAnswer> {
        crate::sqlite::dataset_sql::run_over(&mut self.conn, self.rid, d, sql, limits)
    }
}
