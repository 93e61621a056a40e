//! SQL over a table dataset kept on PostgreSQL: its rows copied into SQLite beside the process
//! (`sqlite/table_copy.rs`), where the same statement runs under the same authorizer and limits
//! as over a SQLite store, so a question's SQL means the same on both engines and a statement
//! can reach nothing of the server but that one table (decision 0008). The copy is kept for the
//! next statement while the dataset is unchanged.

use postgres::fallible_iterator::FallibleIterator;

use super::Pg;
use super::datasets::{cell_at, quoted};
use crate::datasets::keeping::rows_table;
use crate::datasets::{Cell, Dataset, SqlAnswer, SqlLimits};
use crate::error::Result;
use crate::sqlite::table_copy::TableCopy;

impl Pg {
    /// Runs `sql` over a SQLite copy of the table dataset `rid` (made, or the one kept).
    pub(crate) fn sql_on_copy(&self, rid: i64, d: &Dataset, sql: &str, limits: SqlLimits) -> Result<SqlAnswer> {
        let updated_ms = crate::clock::to_ms(d.updated_at);
        let mut kept = self.table_copy.borrow_mut();
        if !matches!(&*kept, Some(c) if c.rid == rid && c.updated_ms == updated_ms) {
            *kept = None;
            *kept = Some(self.copy_table(rid, d)?);
        }
        kept.as_mut().expect("a copy was just made").run(d, sql, limits)
    }

    /// Streams the rows of the table dataset `rid`, in order, into a new copy.
    fn copy_table(&self, rid: i64, d: &Dataset) -> Result<TableCopy> {
        let mut client = self.client();
        let sql = format!("SELECT {} FROM {} ORDER BY row_number", quoted(&d.columns), rows_table(rid));
        let mut rows = client.query_raw(sql.as_str(), std::iter::empty::<&(dyn postgres::types::ToSql + Sync)>())?;
        let mut cells = std::iter::from_fn(|| match rows.next() {
            Ok(Some(row)) => Some(d.columns.iter().enumerate().map(|(i, c)| cell_at(&row, i, c.kind)).collect()),
            Ok(None) => None,
            Err(e) => Some(Err::<Vec<Cell>, _>(e.into())),
        });
        TableCopy::build(rid, d, &mut cells)
    }
}
