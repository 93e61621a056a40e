//! Lists, counts, sessions and keyword search on PostgreSQL: the shared statements of
//! `crate::sql` for the first three; search over the `tsvector` column with `ts_rank_cd`,
//! snippets by `ts_headline`.

use postgres::GenericClient;
use postgres::types::ToSql;

use super::Pg;
use super::projection::TEXT_CONFIG;
use super::rows::{MEMORY_COLUMNS, memory_from_row};
use crate::clock::from_ms;
use crate::error::Result;
use crate::model::{Memory, search_text};
use crate::query::{Filter, Order, SEARCH_WINDOW, SearchHit, SessionSummary, plan_terms};
use crate::sql::{self, Dialect, Sql, SqlValue};
use crate::storage::{MemoryLists, TextSearch};

/// The weights of the searchable text's parts, {D, C, B, A}: the title (A) three times the body
/// (B), an episode's context (C) 0.3 times, as SQLite's `bm25(3.0, 1.0, 0.3)` weighs its columns.
const RANK_WEIGHTS: &str = "{0.1, 0.1, 0.3333, 1.0}";

/// `ts_rank_cd`'s normalization: divided by the memory's length in words, so that a long text
/// repeating the words does not outrank a short one that says them once (bm25 normalizes by
/// length too).
const RANK_NORMALIZATION: i32 = 2;

/// Runs a shared statement.
pub(crate) fn query(c: &mut impl GenericClient, q: &Sql) -> Result<Vec<postgres::Row>> {
    let boxed: Vec<Box<dyn ToSql + Sync>> = q
        .values
        .iter()
        .map(|v| -> Box<dyn ToSql + Sync> {
            match v {
                SqlValue::Text(s) => Box::new(s.clone()),
                SqlValue::Int(i) => Box::new(*i),
                SqlValue::Vector(v) => Box::new(pgvector::Vector::from(v.clone())),
            }
        })
        .collect();
    let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
    Ok(c.query(&q.text(), &refs)?)
}

impl MemoryLists for Pg {
    fn count(&self, filter: &Filter) -> Result<u64> {
        let rows = query(&mut *self.client(), &sql::count(filter, Dialect::Postgres))?;
        Ok(rows[0].try_get::<_, i64>(0)? as u64)
    }

    fn list_rows(&self, filter: &Filter, order: Order, limit: usize, cursor: Option<&str>) -> Result<Vec<Memory>> {
        let q = sql::list(filter, order, limit, cursor, MEMORY_COLUMNS, Dialect::Postgres)?;
        query(&mut *self.client(), &q)?.iter().map(memory_from_row).collect()
    }

    fn sessions(&self, filter: &Filter, prefix: &str, limit: usize) -> Result<Vec<SessionSummary>> {
        let q = sql::sessions(filter, prefix, limit, Dialect::Postgres);
        query(&mut *self.client(), &q)?
            .iter()
            .map(|r| {
                Ok(SessionSummary {
                    session_id: r.try_get(0)?,
                    memories: r.try_get::<_, i64>(1)? as u64,
                    first: from_ms(r.try_get(2)?),
                    last: from_ms(r.try_get(3)?),
                })
            })
            .collect()
    }
}

/// Appends the text query of `terms` (`"word"`, or `"word"*` for a prefix) OR-ed.
fn push_tsquery(q: &mut Sql, terms: &[String]) {
    q.push("(");
    for (i, t) in terms.iter().enumerate() {
        if i > 0 {
            q.push(" || ");
        }
        let prefix = t.ends_with('*');
        let word = t.trim_end_matches('*').trim_matches('"').to_string();
        if prefix {
            // Words are letters and digits only (`fts_terms`): safe in to_tsquery's syntax.
            q.bind(&format!("to_tsquery('{TEXT_CONFIG}', ? || ':*')"), SqlValue::Text(word));
        } else {
            q.bind(&format!("plainto_tsquery('{TEXT_CONFIG}', ?)"), SqlValue::Text(word));
        }
    }
    q.push(")");
}

impl Pg {
    /// How many memories hold `term`, counted up to `cap` + 1.
    fn frequency(&self, term: &str, cap: i64) -> Result<i64> {
        let mut q = Sql::new(Dialect::Postgres, "SELECT count(*) FROM (SELECT 1 FROM memories AS m WHERE m.search @@ ");
        push_tsquery(&mut q, &[term.to_string()]);
        q.bind(" LIMIT ?) AS x", SqlValue::Int(cap + 1));
        Ok(query(&mut *self.client(), &q)?[0].try_get(0)?)
    }

    /// The terms a search uses (see [`plan_terms`]).
    fn plan(&self, text: &str, typed: bool) -> Result<Vec<String>> {
        plan_terms(text, typed, |t| self.frequency(t, SEARCH_WINDOW))
    }
}

impl TextSearch for Pg {
    fn search(
        &self,
        text: &str,
        filter: &Filter,
        limit: usize,
        typed: bool,
        marks: Option<(&str, &str)>,
    ) -> Result<Vec<SearchHit>> {
        let terms = self.plan(text, typed)?;
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        // The newest SEARCH_WINDOW matches are ranked, as on SQLite.
        let mut q = Sql::new(Dialect::Postgres, format!("SELECT m.id, ts_rank_cd('{RANK_WEIGHTS}', m.search, "));
        push_tsquery(&mut q, &terms);
        q.push(&format!(", {RANK_NORMALIZATION}) AS rank FROM memories AS m WHERE m.search @@ "));
        push_tsquery(&mut q, &terms);
        filter.push_sql(&mut q);
        q.bind(" ORDER BY m.created_at DESC, m.id DESC LIMIT ?", SqlValue::Int(SEARCH_WINDOW));
        let inner = std::mem::take(&mut q.text);
        q.text = format!(
            "SELECT {MEMORY_COLUMNS}, w.rank::float8 FROM ({inner}) AS w JOIN memories AS m ON m.id = w.id \
             ORDER BY w.rank DESC, m.id DESC LIMIT ?"
        );
        q.values.push(SqlValue::Int(limit.clamp(1, 1000) as i64));
        let rows = query(&mut *self.client(), &q)?;
        let mut hits = Vec::with_capacity(rows.len());
        for r in &rows {
            let memory = memory_from_row(r)?;
            let snippet = match marks {
                Some(marks) => self.snippet(&memory, &terms, marks)?,
                None => String::new(),
            };
            hits.push(SearchHit { memory, score: r.try_get(18)?, snippet });
        }
        Ok(hits)
    }

    fn count_typed_matches(&self, text: &str, filter: &Filter, cap: u64) -> Result<u64> {
        let terms = self.plan(text, true)?;
        if terms.is_empty() {
            return Ok(0);
        }
        let mut q = Sql::new(Dialect::Postgres, "SELECT count(*) FROM (SELECT 1 FROM memories AS m WHERE m.search @@ ");
        push_tsquery(&mut q, &terms);
        filter.push_sql(&mut q);
        q.bind(" LIMIT ?) AS x", SqlValue::Int(i64::try_from(cap.saturating_add(1)).unwrap_or(i64::MAX)));
        Ok(query(&mut *self.client(), &q)?[0].try_get::<_, i64>(0)? as u64)
    }
}

impl Pg {
    /// The passage of `m`'s body that best matches `terms`, its matches between `marks`.
    fn snippet(&self, m: &Memory, terms: &[String], marks: (&str, &str)) -> Result<String> {
        let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        let options =
            format!("StartSel={}, StopSel={}, MaxWords=16, MinWords=4, ShortWord=1", quote(marks.0), quote(marks.1));
        let mut q = Sql::new(Dialect::Postgres, "");
        q.bind(&format!("SELECT ts_headline('{TEXT_CONFIG}', ?, "), SqlValue::Text(search_text(&m.content).1));
        push_tsquery(&mut q, terms);
        q.bind(", ?)", SqlValue::Text(options));
        Ok(query(&mut *self.client(), &q)?[0].try_get(0)?)
    }
}
