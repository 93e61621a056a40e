//! Analytics' views on either engine: what the store holds and how it changed, what recall
//! did, how prompts used their budgets, what agents did, and the drill-downs behind each figure. Each statement
//! is written once with [`Sql`] (its dialect's few differences: a JSON field, a day from
//! milliseconds); SQLite reads its first view's counts from the rollups its triggers keep,
//! PostgreSQL counts the memories themselves.

mod agents;
mod drill;
mod memories;
mod recalls;

pub use agents::{AgentMetrics, AgentUse, RunsPoint};

use crate::error::Result;
use crate::model::MemoryId;
use crate::sql::{Dialect, Row, Sql, SqlValue};
use crate::store::Store;

use super::Range;

/// The app that wrote a memory, from its `source` column (`''`: none said).
fn app(dialect: Dialect, source: &str) -> String {
    format!("coalesce({}, '')", dialect.json_text(source, "app"))
}

/// Which memories a metric counts, as conditions on `memories m`: `user`'s, of the range's type
/// and client (the app that wrote them), with its tag.
fn memory_scope(q: &mut Sql, user: &str, range: &Range) {
    q.bind("m.user_id = ?", SqlValue::Text(user.into()));
    if let Some(kind) = range.kind {
        q.bind(" AND m.kind = ?", SqlValue::Text(kind.as_str().into()));
    }
    if let Some(client) = &range.client {
        let app = app(q.dialect, "m.source");
        q.bind(&format!(" AND {app} = ?"), SqlValue::Text(client.clone()));
    }
    tagged(q, range);
}

/// Only memories (`memories m`) with the range's tag, when it names one.
fn tagged(q: &mut Sql, range: &Range) {
    if let Some(tag) = &range.tag {
        q.bind(
            " AND EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_id = m.id AND t.tag = ?)",
            SqlValue::Text(tag.clone()),
        );
    }
}

/// Which recalls a metric counts, as conditions on `recalls r`: `user`'s in the range, run by
/// its client.
fn recall_scope(q: &mut Sql, user: &str, range: &Range) {
    let (since, until) = range.bounds();
    q.bind("r.user_id = ?", SqlValue::Text(user.into()))
        .bind(" AND r.at >= ?", SqlValue::Int(since))
        .bind(" AND r.at < ?", SqlValue::Int(until));
    if let Some(client) = &range.client {
        q.bind(" AND r.client = ?", SqlValue::Text(client.clone()));
    }
}

impl Store {
    fn statement(&self, text: impl Into<String>) -> Sql {
        Sql::new(self.engine.dialect(), text)
    }

    /// The rows `q` reads, each decoded by column.
    fn read(&self, q: &Sql, table: &'static str) -> Result<Vec<Row<'static>>> {
        Ok(self.engine.plain().rows(q)?.into_iter().map(|r| Row::new(r, table)).collect())
    }

    /// The one number `q` reads.
    fn count_of(&self, q: &Sql) -> Result<u64> {
        match self.read(q, "a count")?.first() {
            Some(r) => r.count(0),
            None => Ok(0),
        }
    }

    /// The memory ids `q` selects (its first column).
    fn ids(&self, q: &Sql) -> Result<Vec<MemoryId>> {
        self.read(q, "memories")?.iter().map(|r| r.parsed(0)).collect()
    }
}
