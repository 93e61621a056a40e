//! SQLite's side of `crate::query`: its statements and row decoding.

use crate::clock::{from_ms, to_ms};
use crate::error::Result;
use crate::model::Memory;
use crate::sqlite::rows::{MEMORY_COLUMNS, memory_from_row};
use crate::store::Store;
use rusqlite::types::Value;

use crate::query::*;

impl Filter {
    /// SQL conditions on `memories AS m`, appended to `sql`, with their parameters.
    pub(crate) fn push_sql(&self, sql: &mut String, params: &mut Vec<Value>) {
        push_in(sql, params, "m.kind", self.kinds.iter().map(|k| k.as_str()));
        push_in(sql, params, "m.tier", self.tiers.iter().map(|t| t.as_str()));
        for (col, v) in [("user_id", &self.user_id), ("agent_id", &self.agent_id), ("session_id", &self.session_id)] {
            if let Some(v) = v {
                sql.push_str(&format!(" AND m.{col} = ?"));
                params.push(Value::Text(v.clone()));
            }
        }
        if !self.include_expired {
            sql.push_str(" AND m.expired_at IS NULL");
        }
        if self.without_concepts {
            sql.push_str(&format!(" AND (m.key IS NULL OR m.key NOT LIKE '{}%')", crate::concepts::KEY_PREFIX));
        }
        if let Some(a) = &self.visible_to_agent {
            sql.push_str(" AND (m.agent_id IS NULL OR m.agent_id = ?)");
            params.push(Value::Text(a.clone()));
        }
        for t in &self.tags {
            sql.push_str(" AND EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_id = m.id AND t.tag = ?)");
            params.push(Value::Text(t.trim().to_string()));
        }
        if let Some(s) = self.since {
            sql.push_str(" AND m.occurred_at >= ?");
            params.push(Value::Integer(to_ms(s)));
        }
        if let Some(u) = self.until {
            sql.push_str(" AND m.occurred_at < ?");
            params.push(Value::Integer(to_ms(u)));
        }
        let (app, provider) = ("json_extract(m.source, '$.app')", "json_extract(m.source, '$.provider')");
        let imported = format!("{app} IN ('{}', '{}')", IMPORTED_APPS[0], IMPORTED_APPS[1]);
        match self.origin {
            None => {}
            Some(Origin::Imported) => sql.push_str(&format!(" AND {imported}")),
            Some(Origin::Conversation) => sql.push_str(&format!(" AND {provider} IS NOT NULL")),
            Some(Origin::Tool) => sql.push_str(&format!(" AND {provider} IS NULL AND {app} LIKE 'mcp%'")),
            Some(Origin::Person) => {
                sql.push_str(&format!(" AND {provider} IS NULL AND {app} NOT LIKE 'mcp%' AND NOT {imported}"))
            }
        }
    }
}

/// Appends ` AND col IN (?, …)` for a non-empty set of names.
fn push_in<'a>(sql: &mut String, params: &mut Vec<Value>, col: &str, names: impl Iterator<Item = &'a str>) {
    let names: Vec<&str> = names.collect();
    if names.is_empty() {
        return;
    }
    sql.push_str(&format!(" AND {col} IN ({})", vec!["?"; names.len()].join(", ")));
    params.extend(names.into_iter().map(|n| Value::Text(n.to_string())));
}

impl Store {
    /// How many memories match `filter`.
    pub fn count(&self, filter: &Filter) -> Result<u64> {
        let mut sql = "SELECT count(*) FROM memories AS m WHERE 1 = 1".to_string();
        let mut params = Vec::new();
        filter.push_sql(&mut sql, &mut params);
        let n: i64 =
            self.sqlite()?.prepare_cached(&sql)?.query_row(rusqlite::params_from_iter(params), |r| r.get(0))?;
        Ok(n as u64)
    }

    /// A page of memories matching `filter`, newest first. `limit` is capped at 1,000.
    pub fn list(&self, filter: &Filter, limit: usize, cursor: Option<&str>) -> Result<Page> {
        self.list_by(filter, Order::Added, limit, cursor)
    }

    /// [`Store::list`] in `order`, latest first; a cursor continues the order it came from.
    pub fn list_by(&self, filter: &Filter, order: Order, limit: usize, cursor: Option<&str>) -> Result<Page> {
        let limit = limit.clamp(1, 1000);
        let mut sql = format!("SELECT {MEMORY_COLUMNS} FROM memories AS m WHERE 1 = 1");
        let mut params = Vec::new();
        filter.push_sql(&mut sql, &mut params);
        let col = order.column();
        if let Some(c) = cursor {
            let (ms, id) = decode_cursor(c, order)?;
            sql.push_str(&format!(" AND ({col}, m.id) < (?, ?)"));
            params.push(Value::Integer(ms));
            params.push(Value::Text(id));
        }
        sql.push_str(&format!(" ORDER BY {col} DESC, m.id DESC LIMIT ?"));
        params.push(Value::Integer(limit as i64 + 1));
        let mut stmt = self.sqlite()?.prepare_cached(&sql)?;
        let mut items: Vec<Memory> =
            stmt.query_map(rusqlite::params_from_iter(params), memory_from_row)?.collect::<rusqlite::Result<_>>()?;
        let next_cursor = if items.len() > limit {
            items.truncate(limit);
            items.last().map(|m| encode_cursor(m, order))
        } else {
            None
        };
        Ok(Page { items, next_cursor })
    }

    /// The sessions whose id starts with `prefix` that hold memories matching `filter`, the
    /// one used last first, at most `limit`.
    pub fn sessions(&self, filter: &Filter, prefix: &str, limit: usize) -> Result<Vec<SessionSummary>> {
        let mut sql = "SELECT m.session_id, count(*), min(m.occurred_at), max(m.occurred_at) FROM memories AS m \
                       WHERE m.session_id IS NOT NULL AND substr(m.session_id, 1, ?) = ?"
            .to_string();
        let mut params = vec![Value::Integer(prefix.chars().count() as i64), Value::Text(prefix.to_string())];
        filter.push_sql(&mut sql, &mut params);
        sql.push_str(" GROUP BY m.session_id ORDER BY max(m.occurred_at) DESC, m.session_id DESC LIMIT ?");
        params.push(Value::Integer(limit.clamp(1, 1000) as i64));
        let mut stmt = self.sqlite()?.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(params), |r| {
            Ok(SessionSummary {
                session_id: r.get(0)?,
                memories: r.get::<_, i64>(1)? as u64,
                first: from_ms(r.get(2)?),
                last: from_ms(r.get(3)?),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The FTS5 query for `text`: its words OR-ed (bm25 ranks memories matching more and rarer
    /// words first), without words so common they would only slow the search down.
    fn plan_query(&self, text: &str, typed: bool) -> Result<Option<String>> {
        let terms = if typed { typed_terms(text) } else { fts_terms(text) };
        if terms.len() <= 1 {
            return Ok(terms.into_iter().next());
        }
        let cap = SEARCH_WINDOW;
        let mut stmt = self
            .sqlite()?
            .prepare_cached("SELECT count(*) FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ?1 LIMIT ?2)")?;
        let mut counted = Vec::with_capacity(terms.len());
        for t in terms {
            let df: i64 = stmt.query_row(rusqlite::params![t, cap + 1], |r| r.get(0))?;
            counted.push((df, t));
        }
        let rarest = counted.iter().map(|(df, _)| *df).min().unwrap_or(0);
        let kept: Vec<String> =
            counted.into_iter().filter(|(df, _)| *df <= cap || *df == rarest).map(|(_, t)| t).collect();
        Ok(Some(kept.join(" OR ")))
    }

    /// Keyword search (FTS5, bm25), best first, with highlighted snippets. Ranks the newest
    /// [`SEARCH_WINDOW`] matching memories at most.
    pub fn search(&self, text: &str, filter: &Filter, limit: usize, marks: (&str, &str)) -> Result<Vec<SearchHit>> {
        let Some((q, ranked)) = self.rank(text, filter, limit, false)? else {
            return Ok(Vec::new());
        };
        let mut snip = self.sqlite()?.prepare_cached(
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

    /// [`Store::search`] without snippets (empty), for retrieval that shows no passage: each
    /// snippet costs a look-up in the index.
    pub fn search_ranked(&self, text: &str, filter: &Filter, limit: usize) -> Result<Vec<SearchHit>> {
        self.search_ranked_as(text, filter, limit, false)
    }

    /// [`Store::search_ranked`] for text still being typed: its last word, unless followed by
    /// a space, also matches the words it begins ("napo" finds Napoleon).
    pub fn search_typed(&self, text: &str, filter: &Filter, limit: usize) -> Result<Vec<SearchHit>> {
        self.search_ranked_as(text, filter, limit, true)
    }

    /// How many memories `filter` selects whose words match `text` as typed (the last word as
    /// a prefix), counted up to `cap` + 1: what a search box says it found, however many it
    /// shows, at a cost bounded on any store ("more than 10,000").
    pub fn count_typed_matches(&self, text: &str, filter: &Filter, cap: u64) -> Result<u64> {
        let Some(q) = self.plan_query(text, true)? else { return Ok(0) };
        let mut inner =
            "SELECT 1 FROM memory_fts f JOIN memories AS m ON m.rid = f.rowid WHERE memory_fts MATCH ?".to_string();
        let mut params = vec![Value::Text(q)];
        filter.push_sql(&mut inner, &mut params);
        params.push(Value::Integer(i64::try_from(cap.saturating_add(1)).unwrap_or(i64::MAX)));
        let sql = format!("SELECT count(*) FROM ({inner} LIMIT ?)");
        let n: i64 =
            self.sqlite()?.prepare_cached(&sql)?.query_row(rusqlite::params_from_iter(params), |r| r.get(0))?;
        Ok(n as u64)
    }

    fn search_ranked_as(&self, text: &str, filter: &Filter, limit: usize, typed: bool) -> Result<Vec<SearchHit>> {
        let Some((_, ranked)) = self.rank(text, filter, limit, typed)? else {
            return Ok(Vec::new());
        };
        Ok(ranked.into_iter().map(|(memory, score, _)| SearchHit { memory, score, snippet: String::new() }).collect())
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
        filter.push_sql(&mut inner, &mut params);
        inner.push_str(" ORDER BY f.rowid DESC LIMIT ?");
        params.push(Value::Integer(SEARCH_WINDOW));
        let sql = format!(
            "SELECT {MEMORY_COLUMNS}, -w.rank, w.rid FROM ({inner}) AS w JOIN memories AS m ON m.rid = w.rid \
             ORDER BY w.rank LIMIT ?"
        );
        params.push(Value::Integer(limit.clamp(1, 1000) as i64));
        let mut stmt = self.sqlite()?.prepare_cached(&sql)?;
        let ranked: Vec<(Memory, f64, i64)> = stmt
            .query_map(rusqlite::params_from_iter(params), |r| Ok((memory_from_row(r)?, r.get(17)?, r.get(18)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(Some((q, ranked)))
    }
}
