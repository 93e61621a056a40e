//! Statements prepared once per connection: a statement given as text is parsed by the server
//! on every call, a round trip of its own before the one that runs it. Writes run several
//! statements per event (the event, the memory, its searchable text, its neighbour's), so a
//! ChatGPT export of 10,000 exchanges was 120,000 round trips (docs/benchmarks.md).

use std::cell::RefCell;
use std::collections::HashMap;

use postgres::types::ToSql;
use postgres::{GenericClient, Row, Statement};

use super::{Pg, PgTx};
use crate::error::Result;

/// How many prepared statements a connection keeps (the shapes of searches: a few per number of
/// words and filter); past it the cache starts again.
const STATEMENTS_KEPT: usize = 256;

/// A connection's prepared statements, by their text.
#[derive(Default)]
pub(crate) struct Prepared(RefCell<HashMap<String, Statement>>);

impl Prepared {
    /// The statement for `sql`, prepared on `c` the first time it is asked for.
    pub(crate) fn get(&self, c: &mut impl GenericClient, sql: &str) -> std::result::Result<Statement, postgres::Error> {
        if let Some(s) = self.0.borrow().get(sql) {
            return Ok(s.clone());
        }
        let s = c.prepare(sql)?;
        let mut kept = self.0.borrow_mut();
        if kept.len() >= STATEMENTS_KEPT {
            kept.clear();
        }
        kept.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    /// Forgets every statement (its connection is gone).
    pub(crate) fn clear(&self) {
        self.0.borrow_mut().clear();
    }
}

/// Parameters as the driver takes them.
pub(crate) type Params<'p> = &'p [&'p (dyn ToSql + Sync)];

/// What runs a statement given as text, prepared once: the store's connection for a read, its
/// write transaction for a write.
pub(crate) trait Runs {
    /// The rows `sql` returns.
    fn query(&self, sql: &str, params: Params<'_>) -> Result<Vec<Row>>;

    /// How many rows `sql` changed.
    fn execute(&self, sql: &str, params: Params<'_>) -> Result<u64>;

    /// The one row `sql` returns, if any (more than one is the statement's mistake: the first).
    fn query_opt(&self, sql: &str, params: Params<'_>) -> Result<Option<Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// The one row `sql` returns (an aggregate, `RETURNING`, `EXISTS`).
    fn query_one(&self, sql: &str, params: Params<'_>) -> Result<Row> {
        self.query_opt(sql, params)?
            .ok_or_else(|| crate::error::Error::Storage(format!("PostgreSQL returned no row for: {sql}")))
    }
}

impl Runs for PgTx<'_> {
    fn query(&self, sql: &str, params: Params<'_>) -> Result<Vec<Row>> {
        let mut tx = self.tx();
        let statement = self.prepared.get(&mut *tx, sql)?;
        Ok(tx.query(&statement, params)?)
    }

    fn execute(&self, sql: &str, params: Params<'_>) -> Result<u64> {
        let mut tx = self.tx();
        let statement = self.prepared.get(&mut *tx, sql)?;
        Ok(tx.execute(&statement, params)?)
    }
}

impl Runs for Pg {
    fn query(&self, sql: &str, params: Params<'_>) -> Result<Vec<Row>> {
        let mut client = self.client();
        let statement = self.statements.get(&mut *client, sql)?;
        Ok(client.query(&statement, params)?)
    }

    fn execute(&self, sql: &str, params: Params<'_>) -> Result<u64> {
        let mut client = self.client();
        let statement = self.statements.get(&mut *client, sql)?;
        Ok(client.execute(&statement, params)?)
    }
}
