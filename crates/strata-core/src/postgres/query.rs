//! Lists, counts, sessions and keyword search on PostgreSQL: the shared statements of
//! `crate::sql` for the first three; search over the `tsvector` column ranked by bm25,
//! snippets by `ts_headline`.

use postgres::types::ToSql;

use super::Pg;
use super::prepared::Runs;
use super::projection::TEXT_CONFIG;
use super::rows::{MEMORY_COLUMNS, memory_from_row};
use crate::clock::from_ms;
use crate::error::Result;
use crate::model::{Memory, search_text};
use crate::query::{Filter, Order, SEARCH_WINDOW, SearchHit, SessionSummary, fts_terms, plan_terms, typed_terms};
use crate::sql::{self, Dialect, Sql, SqlValue};
use crate::storage::{MemoryLists, PlainSql, TextSearch};

/// bm25's parameters, as SQLite's FTS5 uses them: term-frequency saturation `k1`, and `b`,
/// how much a long memory's length discounts its matches.
const BM25_K1: f64 = 1.2;
const BM25_B: f64 = 0.75;

/// How much a word counts in each part of the searchable text, as SQLite's `bm25(3.0, 1.0,
/// 0.3)` weighs its columns: the title (A) 3, the body (B) 1, an episode's context (C) 0.3.
const PART_WEIGHT: &str = "CASE w WHEN 'A' THEN 3.0 WHEN 'B' THEN 1.0 WHEN 'C' THEN 0.3 ELSE 0.0 END";

/// NULL bound to a parameter of any type (the driver checks a typed `None` against the
/// column's type; NULL fits every column).
#[derive(Debug)]
struct Null;

impl ToSql for Null {
    fn to_sql(
        &self,
        _: &postgres::types::Type,
        _: &mut postgres::types::private::BytesMut,
    ) -> std::result::Result<postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        Ok(postgres::types::IsNull::Yes)
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

/// The statement's values as the driver binds them.
pub(crate) fn values(q: &Sql) -> Vec<Box<dyn ToSql + Sync>> {
    q.values
        .iter()
        .map(|v| -> Box<dyn ToSql + Sync> {
            match v {
                SqlValue::Text(s) => Box::new(s.clone()),
                SqlValue::Int(i) => Box::new(*i),
                SqlValue::Real(x) => Box::new(*x),
                SqlValue::Vector(v) => Box::new(pgvector::Vector::from(v.clone())),
                SqlValue::Null => Box::new(Null),
            }
        })
        .collect()
}

impl Pg {
    /// Runs a shared statement on the store's connection, prepared once per text: a search is
    /// several statements, and planning each afresh cost 2–3 ms apiece (measured).
    pub(crate) fn run(&self, q: &Sql) -> Result<Vec<postgres::Row>> {
        self.run_as(q, Plan::Kept)
    }

    /// Runs a shared statement, planned for its values each time (see [`Plan::Each`]).
    pub(crate) fn run_planned(&self, q: &Sql) -> Result<Vec<postgres::Row>> {
        self.run_as(q, Plan::Each)
    }

    fn run_as(&self, q: &Sql, plan: Plan) -> Result<Vec<postgres::Row>> {
        match self.run_once(q, plan) {
            // A read is safe to repeat: once more, on a new connection.
            Err(e) if super::is_lost(&e) => {
                tracing::info!("a read lost its connection to PostgreSQL ({e}); trying it again");
                self.reconnect();
                Ok(self.run_once(q, plan)?)
            }
            other => Ok(other?),
        }
    }

    fn run_once(&self, q: &Sql, plan: Plan) -> std::result::Result<Vec<postgres::Row>, postgres::Error> {
        let text = q.text();
        let boxed = values(q);
        let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
        let mut client = self.client();
        if plan == Plan::Each {
            return client.query(text.as_str(), &refs);
        }
        let statement = self.statements.get(&mut *client, &text)?;
        client.query(&statement, &refs)
    }
}

/// How a statement is planned.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// Prepared once per text; PostgreSQL may settle on one plan for every value.
    Kept,
    /// Planned for its values each time: a keyword search, whose best plan depends on how
    /// rare its words are (a backward scan of the newest memories for common words, the text
    /// index for rare ones). A plan kept for every value took 137 ms where the values' own took
    /// 39 ms, at 1,000,000 memories (docs/benchmarks.md).
    Each,
}

impl PlainSql for Pg {
    fn execute(&self, q: &Sql) -> Result<u64> {
        let boxed = values(q);
        let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
        Runs::execute(self, q.text().as_str(), &refs)
    }

    fn rows(&self, q: &Sql) -> Result<Vec<Vec<Option<SqlValue>>>> {
        plain_rows(&self.run(q)?)
    }
}

impl PlainSql for super::PgTx<'_> {
    fn execute(&self, q: &Sql) -> Result<u64> {
        let boxed = values(q);
        let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
        Runs::execute(self, q.text().as_str(), &refs)
    }

    fn rows(&self, q: &Sql) -> Result<Vec<Vec<Option<SqlValue>>>> {
        let boxed = values(q);
        let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
        plain_rows(&Runs::query(self, q.text().as_str(), &refs)?)
    }
}

fn plain_rows(rows: &[postgres::Row]) -> Result<Vec<Vec<Option<SqlValue>>>> {
    rows.iter().map(|row| (0..row.len()).map(|i| plain(row, i)).collect()).collect()
}

/// Column `i` of `row` as [`PlainSql`] reads it: integers, floats and text (anything else as
/// its text).
fn plain(row: &postgres::Row, i: usize) -> Result<Option<SqlValue>> {
    use postgres::types::Type;
    let t = row.columns()[i].type_();
    Ok(if *t == Type::INT8 {
        row.try_get::<_, Option<i64>>(i)?.map(SqlValue::Int)
    } else if *t == Type::INT4 {
        row.try_get::<_, Option<i32>>(i)?.map(|v| SqlValue::Int(v.into()))
    } else if *t == Type::INT2 {
        row.try_get::<_, Option<i16>>(i)?.map(|v| SqlValue::Int(v.into()))
    } else if *t == Type::BOOL {
        row.try_get::<_, Option<bool>>(i)?.map(|v| SqlValue::Int(v.into()))
    } else if *t == Type::FLOAT8 {
        row.try_get::<_, Option<f64>>(i)?.map(SqlValue::Real)
    } else if *t == Type::FLOAT4 {
        row.try_get::<_, Option<f32>>(i)?.map(|v| SqlValue::Real(v.into()))
    } else {
        row.try_get::<_, Option<String>>(i)?.map(SqlValue::Text)
    })
}

impl MemoryLists for Pg {
    fn scope_rows(&self, user_id: &str, agent_id: Option<&str>) -> Result<Vec<Memory>> {
        let q = sql::scope(user_id, agent_id, MEMORY_COLUMNS, Dialect::Postgres);
        self.run(&q)?.iter().map(memory_from_row).collect()
    }

    fn count(&self, filter: &Filter) -> Result<u64> {
        let rows = self.run(&sql::count(filter, Dialect::Postgres))?;
        Ok(rows[0].try_get::<_, i64>(0)? as u64)
    }

    fn list_rows(&self, filter: &Filter, order: Order, limit: usize, cursor: Option<&str>) -> Result<Vec<Memory>> {
        let q = sql::list(filter, order, limit, cursor, MEMORY_COLUMNS, Dialect::Postgres)?;
        self.run(&q)?.iter().map(memory_from_row).collect()
    }

    fn sessions(&self, filter: &Filter, prefix: &str, limit: usize) -> Result<Vec<SessionSummary>> {
        let q = sql::sessions(filter, prefix, limit, Dialect::Postgres);
        self.run(&q)?
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

/// What a keyword search counts its words' rarity in.
#[derive(Clone, Copy)]
pub(crate) enum Corpus {
    /// The memories.
    Memories,
    /// Every dataset's chunks.
    DatasetChunks,
}

impl Corpus {
    fn table(self) -> &'static str {
        match self {
            Corpus::Memories => "memories",
            Corpus::DatasetChunks => "dataset_chunks",
        }
    }
}

/// Appends the text query of `terms` (`"word"`, or `"word"*` for a prefix) OR-ed.
pub(crate) fn push_tsquery(q: &mut Sql, terms: &[String]) {
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
    /// The terms a search uses (see [`plan_terms`]), each with its weight: its inverse
    /// document frequency as bm25 reckons it, from how many rows of `corpus` hold it (1 for a single
    /// term, whose weight would not change the order). PostgreSQL's own ranking counts how
    /// often and how close the words are, not how rare: without this, a speaker's name said in
    /// half the memories outranked the one rare word a question was about.
    pub(crate) fn plan(&self, corpus: Corpus, text: &str, typed: bool) -> Result<Vec<(String, f64)>> {
        let words = if typed { typed_terms(text) } else { fts_terms(text) };
        if words.len() <= 1 {
            return Ok(words.into_iter().map(|t| (t, 1.0)).collect());
        }
        let (n, counted) = self.frequencies(corpus, &words, SEARCH_WINDOW)?;
        let terms = plan_terms(text, typed, |t| {
            Ok(words.iter().position(|w| w == t).map_or(SEARCH_WINDOW + 1, |i| counted[i]))
        })?;
        Ok(terms
            .into_iter()
            .map(|(t, df)| {
                let df = df.unwrap_or(1) as f64;
                (t, (1.0 + (n as f64 - df + 0.5).max(0.0) / (df + 0.5)).ln())
            })
            .collect())
    }

    /// How many rows `corpus` holds, and how many hold each of `terms` (counted up to `cap` +
    /// 1), in one statement planned for its words: a round trip and a plan each cost more than
    /// the counting. The corpus's size is the planner's estimate on a large table
    /// (counting a million rows for each search would cost more than the search).
    fn frequencies(&self, corpus: Corpus, terms: &[String], cap: i64) -> Result<(i64, Vec<i64>)> {
        let table = corpus.table();
        let mut q = Sql::new(
            Dialect::Postgres,
            format!(
                "SELECT (SELECT CASE WHEN c.reltuples >= 10000 THEN c.reltuples::bigint \
                 ELSE (SELECT count(*) FROM {table}) END FROM pg_class c WHERE c.oid = '{table}'::regclass)"
            ),
        );
        for t in terms {
            q.push(&format!(", (SELECT count(*) FROM (SELECT 1 FROM {table} AS m WHERE m.search @@ "));
            push_tsquery(&mut q, std::slice::from_ref(t));
            q.bind(" LIMIT ?) AS x)", SqlValue::Int(cap + 1));
        }
        let row = self.run_planned(&q)?.pop().ok_or_else(|| crate::error::Error::Storage("no counts".into()))?;
        let counts = (1..=terms.len()).map(|i| row.try_get::<_, i64>(i)).collect::<std::result::Result<_, _>>()?;
        Ok((row.try_get(0)?, counts))
    }
}

/// `WITH … ranked (id, rank)`: the newest [`SEARCH_WINDOW`] memories within `filter` that hold
/// any of the terms (as on SQLite), scored by [`push_bm25`].
fn bm25(weighted: &[(String, f64)], filter: &Filter) -> Sql {
    let terms: Vec<String> = weighted.iter().map(|(t, _)| t.clone()).collect();
    let mut q = Sql::new(
        Dialect::Postgres,
        "WITH candidates AS (SELECT m.id, m.search, m.search_length AS dl FROM memories AS m WHERE m.search @@ ",
    );
    push_tsquery(&mut q, &terms);
    filter.push_sql(&mut q);
    q.bind(" ORDER BY m.created_at DESC, m.id DESC LIMIT ?), ", SqlValue::Int(SEARCH_WINDOW));
    push_bm25(&mut q, weighted);
    q
}

/// After a `candidates (id, search, dl)` expression: `… ranked (id, rank)`, each candidate
/// scored by bm25 as FTS5 computes it — each term's weighted frequency in it (its parts
/// weighted as [`PART_WEIGHT`] says), saturated by `k1`, discounted by its length `dl` against
/// the candidates' average, times the term's rarity. PostgreSQL's own `ts_rank_cd` has no
/// notion of rarity and no saturation (measured on LoCoMo, docs/benchmarks.md).
pub(crate) fn push_bm25(q: &mut Sql, weighted: &[(String, f64)]) {
    q.push("average AS (SELECT greatest(avg(dl), 1.0)::float8 AS a FROM candidates), query (stem, prefix, idf) AS (VALUES ");
    for (i, (t, idf)) in weighted.iter().enumerate() {
        let prefix = t.ends_with('*');
        let word = t.trim_end_matches('*').trim_matches('"').to_string();
        q.push(if i > 0 { ", " } else { "" });
        q.bind(
            &format!("((SELECT lexeme FROM unnest(to_tsvector('{TEXT_CONFIG}', ?)) LIMIT 1), {prefix}, "),
            SqlValue::Text(word),
        )
        .bind("?::float8)", SqlValue::Real(*idf));
    }
    // Only the query's words are kept from each candidate's words: by equality (a hash join)
    // unless a word is a typed prefix.
    let matches = if weighted.iter().any(|(t, _)| t.ends_with('*')) {
        "u.lexeme = q.stem OR (q.prefix AND starts_with(u.lexeme, q.stem))"
    } else {
        "u.lexeme = q.stem"
    };
    q.push(&format!(
        "), frequencies AS MATERIALIZED (SELECT c.id, c.dl, q.idf, (SELECT sum({PART_WEIGHT}) FROM unnest(u.weights) AS w) AS f \
         FROM candidates AS c CROSS JOIN LATERAL unnest(c.search) AS u JOIN query AS q ON {matches}), \
         ranked AS (SELECT f.id, sum(f.idf * f.f * {k1p1} / (f.f + {BM25_K1} * ({one_b} + {BM25_B} * f.dl / a.a))) AS rank \
         FROM frequencies AS f, average AS a GROUP BY f.id)",
        k1p1 = BM25_K1 + 1.0,
        one_b = 1.0 - BM25_B,
    ));
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
        let weighted = self.plan(Corpus::Memories, text, typed)?;
        if weighted.is_empty() {
            return Ok(Vec::new());
        }
        let terms: Vec<String> = weighted.iter().map(|(t, _)| t.clone()).collect();
        let mut q = bm25(&weighted, filter);
        let ranked = std::mem::take(&mut q.text);
        q.text = format!(
            "{ranked} SELECT {MEMORY_COLUMNS}, r.rank::float8 FROM ranked AS r JOIN memories AS m ON m.id = r.id \
             ORDER BY r.rank DESC, m.id DESC LIMIT ?"
        );
        q.values.push(SqlValue::Int(limit.clamp(1, 1000) as i64));
        let rows = self.run_planned(&q)?;
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
        let terms: Vec<String> = self.plan(Corpus::Memories, text, true)?.into_iter().map(|(t, _)| t).collect();
        if terms.is_empty() {
            return Ok(0);
        }
        let mut q = Sql::new(Dialect::Postgres, "SELECT count(*) FROM (SELECT 1 FROM memories AS m WHERE m.search @@ ");
        push_tsquery(&mut q, &terms);
        filter.push_sql(&mut q);
        q.bind(" LIMIT ?) AS x", SqlValue::Int(i64::try_from(cap.saturating_add(1)).unwrap_or(i64::MAX)));
        Ok(self.run_planned(&q)?[0].try_get::<_, i64>(0)? as u64)
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
        Ok(self.run(&q)?[0].try_get(0)?)
    }
}
