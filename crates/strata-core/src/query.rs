//! Reading the store: by id or key, filtered lists with cursors, full-text search, a memory's
//! history, its state as of a past time, and summary statistics.

use chrono::{DateTime, Utc};
use rusqlite::types::Value;
use serde::Serialize;

use crate::clock::{from_ms, to_ms};
use crate::error::{Error, Result};
use crate::event::RecordedEvent;
use crate::evolve::{EvolveError, evolve};
use crate::model::{Memory, MemoryId, MemoryKind, Tier};
use crate::rows::{EVENT_COLUMNS, MEMORY_COLUMNS, event_from_row, forgotten_error, memory_from_row};
use crate::store::Store;

/// Which memories a list or search covers. Empty fields do not filter.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only these types.
    pub kinds: Vec<MemoryKind>,
    /// Only this user's.
    pub user_id: Option<String>,
    /// Only this agent's.
    pub agent_id: Option<String>,
    /// Only what this agent may see: memories shared by all agents, and its own.
    pub visible_to_agent: Option<String>,
    /// Also memories that maintenance expired (hidden by default).
    pub include_expired: bool,
    /// Only this session's.
    pub session_id: Option<String>,
    /// Only memories with every one of these tags.
    pub tags: Vec<String>,
    /// Only these tiers.
    pub tiers: Vec<Tier>,
    /// Only memories that occurred at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only memories that occurred before this time.
    pub until: Option<DateTime<Utc>>,
    /// Only memories from this origin.
    pub origin: Option<Origin>,
    /// Leave out concepts (the groups Strata forms, [`crate::concepts::KEY_PREFIX`]): a list
    /// of what was said and known, which concepts would crowd after a grouping.
    pub without_concepts: bool,
}

/// Where memories came from, as a person sorts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Written by a person (in the app, with the command, through the API), not imported.
    Person,
    /// Imported from a file, or the built-in examples ([`IMPORTED_APPS`]).
    Imported,
    /// Recorded from a conversation with a model (the source names its provider).
    Conversation,
    /// Written by an AI tool over MCP.
    Tool,
}

/// The source apps of imported memories: a file, and Strata's own examples.
pub const IMPORTED_APPS: [&str; 2] = ["import", "examples"];

impl std::str::FromStr for Origin {
    type Err = Error;
    fn from_str(s: &str) -> Result<Origin> {
        match s {
            "person" => Ok(Origin::Person),
            "imported" => Ok(Origin::Imported),
            "conversation" => Ok(Origin::Conversation),
            "tool" => Ok(Origin::Tool),
            _ => Err(Error::invalid(format!("'{s}' is not an origin (person, imported, conversation, tool)"))),
        }
    }
}

/// The order of a list, newest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    /// By when it was added.
    #[default]
    Added,
    /// By when it happened (an episode's time; a fact's or procedure's is when it was added).
    Occurred,
    /// By when it was last recalled; never recalled last.
    Recalled,
}

impl Order {
    /// The column a list is ordered by.
    fn column(self) -> &'static str {
        match self {
            Order::Added => "m.created_at",
            Order::Occurred => "m.occurred_at",
            Order::Recalled => "coalesce(m.last_accessed_at, 0)",
        }
    }

    /// The cursor's prefix, so a cursor from another order is refused.
    fn tag(self) -> &'static str {
        match self {
            Order::Added => "",
            Order::Occurred => "o",
            Order::Recalled => "r",
        }
    }

    fn key(self, m: &Memory) -> i64 {
        match self {
            Order::Added => to_ms(m.created_at),
            Order::Occurred => to_ms(m.occurred_at()),
            Order::Recalled => m.last_accessed_at.map_or(0, to_ms),
        }
    }
}

impl std::str::FromStr for Order {
    type Err = Error;
    fn from_str(s: &str) -> Result<Order> {
        match s {
            "added" => Ok(Order::Added),
            "occurred" => Ok(Order::Occurred),
            "recalled" => Ok(Order::Recalled),
            _ => Err(Error::invalid(format!("'{s}' is not an order (added, occurred, recalled)"))),
        }
    }
}

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

/// A page of a list, newest first, with the cursor for the next page.
#[derive(Debug, Clone)]
pub struct Page {
    /// The memories on this page.
    pub items: Vec<Memory>,
    /// Pass to [`Store::list`] for the next page; `None` on the last page.
    pub next_cursor: Option<String>,
}

/// A session's memories in brief ([`Store::sessions`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary {
    /// The session.
    pub session_id: String,
    /// How many memories it holds.
    pub memories: u64,
    /// When its first one occurred.
    pub first: DateTime<Utc>,
    /// When its last one occurred.
    pub last: DateTime<Utc>,
}

/// A full-text search hit.
#[derive(Debug, Clone)]
pub struct SearchHit {
    /// The memory.
    pub memory: Memory,
    /// bm25 relevance (higher is better).
    pub score: f64,
    /// The best-matching passage with matches wrapped in the highlight markers.
    pub snippet: String,
}

/// Where to read a memory's past state.
#[derive(Debug, Clone, Copy)]
pub enum AsOf {
    /// After every event recorded at or before this time.
    Time(DateTime<Utc>),
    /// After every event with a global sequence number at or below this.
    Seq(i64),
}

/// Counts for `strata stats`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Stats {
    /// Live memories.
    pub memories: u64,
    /// Live memories per type.
    pub by_kind: Vec<(String, u64)>,
    /// Live memories per tier.
    pub by_tier: Vec<(String, u64)>,
    /// Distinct tags in use.
    pub tags: u64,
    /// Events in the log.
    pub events: u64,
    /// Memories forgotten.
    pub forgotten: u64,
    /// Time of the first event.
    pub first_event_at: Option<DateTime<Utc>>,
    /// Time of the latest event.
    pub last_event_at: Option<DateTime<Utc>>,
    /// Size of the database in bytes (pages in use times page size).
    pub db_bytes: u64,
}

/// Every projection's content in a canonical order: two stores with equal snapshots have equal
/// projections. Used to prove that replay reproduces the live state.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Every memory, by id.
    pub memories: Vec<Memory>,
    /// The full-text index: (memory id, title, body, context), by id.
    pub fts: Vec<(String, String, String, String)>,
}

fn encode_cursor(m: &Memory, order: Order) -> String {
    let k = order.key(m);
    format!("{}{}{:x}.{}", order.tag(), if k < 0 { "-" } else { "" }, k.unsigned_abs(), m.id)
}

fn decode_cursor(c: &str, order: Order) -> Result<(i64, String)> {
    let bad = || Error::invalid(format!("'{c}' is not a cursor from a previous page in this order"));
    let rest = c.strip_prefix(order.tag()).ok_or_else(bad)?;
    let (ms, id) = rest.split_once('.').ok_or_else(bad)?;
    let ms = i64::from_str_radix(ms, 16).map_err(|_| bad())?;
    id.parse::<MemoryId>().map_err(|_| bad())?;
    Ok((ms, id.to_string()))
}

/// The words of what a person types, split where the index's tokenizer splits (anything not
/// a letter or digit, so "Ana's" is "Ana" and "s"), without one-letter fragments, each quoted
/// so FTS5 operators in user text are harmless; duplicates removed.
pub fn fts_terms(text: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let words: Vec<&str> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 1 || w.chars().all(|c| c.is_ascii_digit()))
        .filter(|w| !w.is_empty() && seen.insert(w.to_lowercase()))
        .collect();
    // English function words say nothing about which memory is meant; in a small store bm25
    // still weighs them. Dropped unless nothing else is left.
    let content: Vec<&str> = words.iter().copied().filter(|w| !is_stopword(w)).collect();
    let chosen = if content.is_empty() { words } else { content };
    chosen.into_iter().map(|w| format!("\"{w}\"")).collect()
}

/// [`fts_terms`] of text still being typed: the last word, when nothing follows it, is also a
/// prefix (`"napo"*`), unless it is a single letter (which would match most of the index).
fn typed_terms(text: &str) -> Vec<String> {
    let mut terms = fts_terms(text);
    let last = text.rsplit(|c: char| !c.is_alphanumeric()).next().unwrap_or("");
    if last.chars().count() > 1 {
        let quoted = format!("\"{last}\"");
        if let Some(t) = terms.iter_mut().find(|t| t.to_lowercase() == quoted.to_lowercase()) {
            t.push('*');
        }
    }
    terms
}

/// English function words, sorted (binary search).
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been",
    "before", "being", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "during", "each", "for",
    "from", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into",
    "is", "it", "its", "just", "me", "more", "most", "my", "no", "nor", "not", "of", "on", "once", "only", "or",
    "other", "our", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the",
    "their", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up",
    "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with",
    "would", "you", "your",
];

/// Whether `word` is an English function word ("the", "your").
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word.to_lowercase().as_str()).is_ok()
}

/// Search ranks at most this many candidates (the newest that match), bounding its cost: bm25
/// costs about a microsecond per ranked row. A term matching more memories than this is
/// dropped from a query that has rarer terms — bm25 gives it little weight, yet it would make
/// the search rank thousands of weak matches (a stopword rule that needs no word list and works
/// in any language). Stores smaller than the window are always ranked exactly.
pub const SEARCH_WINDOW: i64 = 1_000;

impl Store {
    /// The memory with this id.
    pub fn get(&self, id: MemoryId) -> Result<Memory> {
        match crate::rows::load(&self.conn, id)? {
            Some(m) => Ok(m),
            None => Err(forgotten_error(&self.conn, id)?),
        }
    }

    /// Memories whose key (concept key or procedure name) is `key`, within a user's scope.
    pub fn find_by_key(
        &self,
        user_id: &str,
        agent_id: Option<&str>,
        kind: Option<MemoryKind>,
        key: &str,
    ) -> Result<Vec<Memory>> {
        crate::rows::find_by_key(&self.conn, user_id, agent_id, kind, key)
    }

    /// The memories that link to `id`, with the relation: (source, relation).
    pub fn linking_to(&self, id: MemoryId) -> Result<Vec<(MemoryId, String)>> {
        crate::rows::linking_to(&self.conn, id)
    }

    /// How many memories match `filter`.
    pub fn count(&self, filter: &Filter) -> Result<u64> {
        let mut sql = "SELECT count(*) FROM memories AS m WHERE 1 = 1".to_string();
        let mut params = Vec::new();
        filter.push_sql(&mut sql, &mut params);
        let n: i64 = self.conn.prepare_cached(&sql)?.query_row(rusqlite::params_from_iter(params), |r| r.get(0))?;
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
        let mut stmt = self.conn.prepare_cached(&sql)?;
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
        let mut stmt = self.conn.prepare_cached(&sql)?;
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
            .conn
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
        let mut snip = self.conn.prepare_cached(
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
        let n: i64 = self.conn.prepare_cached(&sql)?.query_row(rusqlite::params_from_iter(params), |r| r.get(0))?;
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
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let ranked: Vec<(Memory, f64, i64)> = stmt
            .query_map(rusqlite::params_from_iter(params), |r| Ok((memory_from_row(r)?, r.get(17)?, r.get(18)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(Some((q, ranked)))
    }

    /// Every event of a memory's stream, oldest first (redacted payloads show as such).
    pub fn history(&self, id: MemoryId) -> Result<Vec<RecordedEvent>> {
        let evs = self.stream_events(id, i64::MAX)?;
        if evs.is_empty() {
            return Err(Error::NotFound(id.to_string()));
        }
        Ok(evs)
    }

    fn stream_events(&self, id: MemoryId, max_seq: i64) -> Result<Vec<RecordedEvent>> {
        let sql =
            format!("SELECT {EVENT_COLUMNS} FROM events WHERE stream_id = ?1 AND seq <= ?2 ORDER BY stream_version");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut rows = stmt.query(rusqlite::params![id.to_string(), max_seq])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(event_from_row(row)?);
        }
        Ok(out)
    }

    /// The memory as it was at a past time or sequence number, folded from the log. A time cut
    /// ends the stream at its first event recorded after that time, so a clock that stepped
    /// back never makes a later event count as earlier.
    pub fn get_as_of(&self, id: MemoryId, at: AsOf) -> Result<Memory> {
        let (max_seq, max_ms, what) = match at {
            AsOf::Time(t) => (i64::MAX, to_ms(t), crate::time::format_time(t)),
            AsOf::Seq(s) => (s, i64::MAX, format!("sequence {s}")),
        };
        let mut state = None;
        for ev in self.stream_events(id, max_seq)? {
            if to_ms(ev.recorded_at) > max_ms {
                break;
            }
            state = match evolve(state, &ev) {
                Ok(s) => s,
                Err(EvolveError::Redacted) => return Err(forgotten_error(&self.conn, id)?),
                Err(EvolveError::Inconsistent(message)) => return Err(Error::BadEvent { seq: ev.seq, message }),
            };
        }
        match state {
            Some(m) => Ok(m),
            None => match self.get(id) {
                Err(e @ Error::Forgotten { .. }) => Err(e),
                _ => Err(Error::NotFound(format!("{id} as of {what} (it did not exist yet)"))),
            },
        }
    }

    /// Events with `seq > after`, at most `limit`, oldest first (for backups and tailing).
    pub fn events_after(&self, after: i64, limit: usize) -> Result<Vec<RecordedEvent>> {
        let sql = format!("SELECT {EVENT_COLUMNS} FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut rows = stmt.query(rusqlite::params![after, limit as i64])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(event_from_row(row)?);
        }
        Ok(out)
    }

    /// The number of events in the log.
    pub fn event_count(&self) -> Result<u64> {
        Ok(self.conn.query_row("SELECT count(*) FROM events", [], |r| r.get::<_, i64>(0))? as u64)
    }

    /// Summary counts.
    pub fn stats(&self) -> Result<Stats> {
        let c = &self.conn;
        let count = |sql: &str| -> Result<u64> { Ok(c.query_row(sql, [], |r| r.get::<_, i64>(0))? as u64) };
        let grouped = |sql: &str| -> Result<Vec<(String, u64)>> {
            let mut stmt = c.prepare(sql)?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        let (first, last): (Option<i64>, Option<i64>) =
            c.query_row("SELECT min(recorded_at), max(recorded_at) FROM events", [], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(Stats {
            memories: count("SELECT count(*) FROM memories")?,
            by_kind: grouped("SELECT kind, count(*) FROM memories GROUP BY kind ORDER BY kind")?,
            by_tier: grouped("SELECT tier, count(*) FROM memories GROUP BY tier ORDER BY tier")?,
            tags: count("SELECT count(DISTINCT tag) FROM memory_tags")?,
            events: count("SELECT count(*) FROM events")?,
            forgotten: count("SELECT count(*) FROM events WHERE event_type = 'forgotten'")?,
            first_event_at: first.map(from_ms),
            last_event_at: last.map(from_ms),
            db_bytes: count(
                "SELECT (SELECT page_count FROM pragma_page_count()) - (SELECT freelist_count FROM pragma_freelist_count())",
            )? * count("SELECT page_size FROM pragma_page_size()")?,
        })
    }

    /// The projections' content in canonical order (see [`Snapshot`]).
    pub fn snapshot(&self) -> Result<Snapshot> {
        let sql = format!("SELECT {MEMORY_COLUMNS} FROM memories AS m ORDER BY m.id");
        let mut stmt = self.conn.prepare(&sql)?;
        let memories = stmt.query_map([], memory_from_row)?.collect::<rusqlite::Result<_>>()?;
        let mut stmt = self.conn.prepare(
            "SELECT m.id, f.title, f.body, f.context FROM memory_fts f JOIN memories m ON m.rid = f.rowid ORDER BY m.id",
        )?;
        let fts = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let orphans: i64 = self.conn.query_row(
            "SELECT count(*) FROM memory_fts WHERE rowid NOT IN (SELECT rid FROM memories)",
            [],
            |r| r.get(0),
        )?;
        if orphans > 0 {
            return Err(Error::Corrupt(format!("{orphans} full-text rows belong to no memory")));
        }
        Ok(Snapshot { memories, fts })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_words_split_like_the_index_and_lose_function_words() {
        let cases: &[(&str, &[&str])] = &[
            ("What is the name of Ana's kitten?", &["\"name\"", "\"Ana\"", "\"kitten\""]),
            ("napoleon_bonaparte", &["\"napoleon\"", "\"bonaparte\""]),
            ("who is he", &["\"who\"", "\"is\"", "\"he\""]),
            ("tea TEA tea", &["\"tea\""]),
            ("born in 1769 (or 9)", &["\"born\"", "\"1769\"", "\"9\""]),
            ("\"quoted\" AND NOT", &["\"quoted\""]),
            ("AND OR NOT", &["\"AND\"", "\"OR\"", "\"NOT\""]),
            ("  ...  ", &[]),
        ];
        for (text, want) in cases {
            assert_eq!(fts_terms(text), *want, "{text}");
        }
    }

    #[test]
    fn the_stopword_list_is_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_stopword("The") && is_stopword("your") && !is_stopword("kitten"));
    }
}
