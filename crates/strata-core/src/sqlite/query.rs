//! Lists, counts, sessions and keyword search on SQLite: the shared statements of `crate::sql`
//! for the first three; search over the FTS5 index with bm25, snippets by `snippet()`.

use rusqlite::types::Value;

use crate::clock::from_ms;
use crate::error::Result;
use crate::model::Memory;
use crate::query::{Filter, Order, SEARCH_WINDOW, SearchHit, SessionSummary, plan_terms};
use crate::sql::{self, Dialect, Sql, SqlValue};
use crate::sqlite::Db;
use crate::sqlite::rows::{MEMORY_COLUMNS, memory_from_row};
use crate::storage::{MemoryLists, PlainSql, TextSearch};

fn value(v: &SqlValue) -> Value {
    match v {
        SqlValue::Text(s) => Value::Text(s.clone()),
        SqlValue::Int(i) => Value::Integer(*i),
        SqlValue::Real(x) => Value::Real(*x),
        SqlValue::Vector(v) => Value::Blob(crate::sqlite::vector_index::to_blob(v)),
        SqlValue::Null => Value::Null,
    }
}

/// Appends `filter`'s conditions on `memories AS m` to a statement written here.
pub(crate) fn push_filter(filter: &Filter, sql: &mut String, params: &mut Vec<Value>) {
    let mut q = Sql::new(Dialect::Sqlite, "");
    filter.push_sql(&mut q);
    sql.push_str(&q.text);
    params.extend(q.values.iter().map(value));
}

fn params(q: &Sql) -> rusqlite::ParamsFromIter<Vec<Value>> {
    rusqlite::params_from_iter(q.values.iter().map(value).collect::<Vec<_>>())
}

impl PlainSql for rusqlite::Connection {
    fn execute(&self, q: &Sql) -> Result<u64> {
        Ok(self.prepare_cached(&q.text())?.execute(params(q))? as u64)
    }

    fn rows(&self, q: &Sql) -> Result<Vec<Vec<Option<SqlValue>>>> {
        let mut stmt = self.prepare_cached(&q.text())?;
        let columns = stmt.column_count();
        let rows = stmt.query_map(params(q), |r| (0..columns).map(|i| plain(r.get_ref(i)?)).collect())?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// A column's value as [`PlainSql`] reads it (blobs are not among the values it reads).
fn plain(v: rusqlite::types::ValueRef<'_>) -> rusqlite::Result<Option<SqlValue>> {
    use rusqlite::types::ValueRef;
    Ok(match v {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(SqlValue::Int(i)),
        ValueRef::Real(x) => Some(SqlValue::Real(x)),
        ValueRef::Text(t) => Some(SqlValue::Text(String::from_utf8_lossy(t).into_owned())),
        ValueRef::Blob(_) => {
            return Err(rusqlite::Error::InvalidColumnType(0, "blob".into(), rusqlite::types::Type::Blob));
        }
    })
}

impl MemoryLists for Db {
    fn scope_rows(&self, user_id: &str, agent_id: Option<&str>) -> Result<Vec<Memory>> {
        let q = sql::scope(user_id, agent_id, MEMORY_COLUMNS, Dialect::Sqlite);
        let mut stmt = self.prepare(&q.text())?;
        Ok(stmt.query_map(params(&q), memory_from_row)?.collect::<rusqlite::Result<_>>()?)
    }

    fn count(&self, filter: &Filter) -> Result<u64> {
        let q = sql::count(filter, Dialect::Sqlite);
        let n: i64 = self.prepare_cached(&q.text())?.query_row(params(&q), |r| r.get(0))?;
        Ok(n as u64)
    }

    fn list_rows(&self, filter: &Filter, order: Order, limit: usize, cursor: Option<&str>) -> Result<Vec<Memory>> {
        let q = sql::list(filter, order, limit, cursor, MEMORY_COLUMNS, Dialect::Sqlite)?;
        let mut stmt = self.prepare_cached(&q.text())?;
        Ok(stmt.query_map(params(&q), memory_from_row)?.collect::<rusqlite::Result<_>>()?)
    }

    fn sessions(&self, filter: &Filter, prefix: &str, limit: usize) -> Result<Vec<SessionSummary>> {
        let q = sql::sessions(filter, prefix, limit, Dialect::Sqlite);
        let mut stmt = self.prepare_cached(&q.text())?;
        let rows = stmt.query_map(params(&q), |r| {
            Ok(SessionSummary {
                session_id: r.get(0)?,
                memories: r.get::<_, i64>(1)? as u64,
                first: from_ms(r.get(2)?),
                last: from_ms(r.get(3)?),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl Db {
    /// The FTS5 query for `text` (see [`plan_terms`]): its chosen words OR-ed, bm25 ranking
    /// memories matching more and rarer words first.
    fn plan_query(&self, text: &str, typed: bool) -> Result<Option<String>> {
        let mut stmt =
            self.prepare_cached("SELECT count(*) FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ?1 LIMIT ?2)")?;
        let terms =
            plan_terms(text, typed, |t| Ok(stmt.query_row(rusqlite::params![t, SEARCH_WINDOW + 1], |r| r.get(0))?))?;
        let terms: Vec<String> = terms.into_iter().map(|(t, _)| t).collect();
        Ok((!terms.is_empty()).then(|| terms.join(" OR ")))
    }

    /// The FTS5 query and the best `limit` (memory, score, index rowid), or None for no words.
    #[allow(clippy::type_complexity)]
    fn rank(
        &self,
        text: &str,
        filter: &Filter,
        limit: usize,
        typed: bool,
    ) -> Result<Option<(String, Vec<(Memory, f64, i64)>)>> {
        let Some(q) = self.plan_query(text, typed)? else {
            return Ok(None);
        };
        let mut inner =
            "SELECT f.rowid AS rid, f.rank AS rank FROM memory_fts f JOIN memories AS m ON m.rid = f.rowid \
             WHERE memory_fts MATCH ?"
                .to_string();
        let mut params = vec![Value::Text(q.clone())];
        push_filter(filter, &mut inner, &mut params);
        inner.push_str(" ORDER BY f.rowid DESC LIMIT ?");
        params.push(Value::Integer(SEARCH_WINDOW));
        let sql = format!(
            "SELECT {MEMORY_COLUMNS}, -w.rank, w.rid FROM ({inner}) AS w JOIN memories AS m ON m.rid = w.rid \
             ORDER BY w.rank LIMIT ?"
        );
        params.push(Value::Integer(limit.clamp(1, 1000) as i64));
        let mut stmt = self.prepare_cached(&sql)?;
        let ranked: Vec<(Memory, f64, i64)> = stmt
            .query_map(rusqlite::params_from_iter(params), |r| Ok((memory_from_row(r)?, r.get(17)?, r.get(18)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(Some((q, ranked)))
    }
}

impl TextSearch for Db {
    fn search(
        &self,
        text: &str,
        filter: &Filter,
        limit: usize,
        typed: bool,
        marks: Option<(&str, &str)>,
    ) -> Result<Vec<SearchHit>> {
        let Some((q, ranked)) = self.rank(text, filter, limit, typed)? else {
            return Ok(Vec::new());
        };
        let Some(marks) = marks else {
            return Ok(ranked
                .into_iter()
                .map(|(memory, score, _)| SearchHit { memory, score, snippet: String::new() })
                .collect());
        };
        let mut snip = self.prepare_cached(
            "SELECT snippet(memory_fts, 1, ?1, ?2, '…', 16) FROM memory_fts WHERE memory_fts MATCH ?3 AND rowid = ?4",
        )?;
        ranked
            .into_iter()
            .map(|(memory, score, rid)| {
                let snippet = snip.query_row(rusqlite::params![marks.0, marks.1, q, rid], |r| r.get(0))?;
                Ok(SearchHit { memory, score, snippet })
            })
            .collect()
    }

    fn count_typed_matches(&self, text: &str, filter: &Filter, cap: u64) -> Result<u64> {
        let Some(q) = self.plan_query(text, true)? else { return Ok(0) };
        let mut inner =
            "SELECT 1 FROM memory_fts f JOIN memories AS m ON m.rid = f.rowid WHERE memory_fts MATCH ?".to_string();
        let mut params = vec![Value::Text(q)];
        push_filter(filter, &mut inner, &mut params);
        params.push(Value::Integer(i64::try_from(cap.saturating_add(1)).unwrap_or(i64::MAX)));
        let sql = format!("SELECT count(*) FROM ({inner} LIMIT ?)");
        let n: i64 = self.prepare_cached(&sql)?.query_row(rusqlite::params_from_iter(params), |r| r.get(0))?;
        Ok(n as u64)
    }
}
