//! SQL over a table dataset kept on PostgreSQL: its rows copied into an in-memory SQLite
//! database, where the same statement runs under the same authorizer and limits as over a
//! SQLite store (`sqlite/dataset_sql.rs`), so a question's SQL means the same on both engines
//! and a statement can reach nothing of the server but that one table (decision 0008). The
//! copy is kept for the next statement while the dataset is unchanged.

use postgres::fallible_iterator::FallibleIterator;
use rusqlite::Connection;
use rusqlite::types::Value;

use super::Pg;
use super::datasets::{cell_at, quoted};
use crate::datasets::keeping::rows_table;
use crate::datasets::{Dataset, SqlAnswer};
use crate::error::Result;
use crate::sqlite::datasets::to_value;

/// A table dataset's rows, copied into SQLite.
pub(crate) struct TableCopy {
    /// The dataset's row id and when it last changed: the copy serves while both hold.
    rid: i64,
    updated_ms: i64,
    conn: Connection,
}

impl Pg {
    /// Runs `f` on a SQLite copy of the table dataset `rid` (made, or the one kept).
    pub(crate) fn with_table_copy(
        &self,
        rid: i64,
        d: &Dataset,
        f: &mut dyn FnMut(&mut Connection) -> Result<SqlAnswer>,
    ) -> Result<SqlAnswer> {
        let updated_ms = crate::clock::to_ms(d.updated_at);
        let mut kept = self.table_copy.borrow_mut();
        if !matches!(&*kept, Some(c) if c.rid == rid && c.updated_ms == updated_ms) {
            *kept = None;
            *kept = Some(TableCopy { rid, updated_ms, conn: self.copy_table(rid, d)? });
        }
        let copy = kept.as_mut().expect("a copy was just made");
        f(&mut copy.conn)
    }

    /// Copies the rows of the table dataset `rid` into a new in-memory SQLite database, as
    /// `main.dataset_rows_<rid>` declared as a SQLite store declares it.
    fn copy_table(&self, rid: i64, d: &Dataset) -> Result<Connection> {
        let table = rows_table(rid);
        let mut conn = Connection::open_in_memory()?;
        let declared: Vec<String> = d.columns.iter().map(|c| format!("\"{}\" {}", c.name, c.kind.sql())).collect();
        conn.execute_batch(&format!("CREATE TABLE {table} (row_number INTEGER PRIMARY KEY, {})", declared.join(", ")))?;
        let tx = conn.transaction()?;
        {
            let marks = vec!["?"; d.columns.len() + 1].join(", ");
            let mut insert = tx.prepare(&format!("INSERT INTO {table} VALUES ({marks})"))?;
            let mut client = self.client();
            let sql = format!("SELECT row_number, {} FROM {table} ORDER BY row_number", quoted(&d.columns));
            let mut rows =
                client.query_raw(sql.as_str(), std::iter::empty::<&(dyn postgres::types::ToSql + Sync)>())?;
            let mut values: Vec<Value> = Vec::with_capacity(d.columns.len() + 1);
            while let Some(row) = rows.next()? {
                values.clear();
                values.push(Value::Integer(row.try_get(0)?));
                for (i, c) in d.columns.iter().enumerate() {
                    values.push(to_value(&cell_at(&row, i + 1, c.kind)?));
                }
                insert.execute(rusqlite::params_from_iter(values.iter()))?;
            }
        }
        tx.commit()?;
        Ok(conn)
    }
}
