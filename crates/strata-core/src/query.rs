//! Reading the store: by id or key, filtered lists with cursors, full-text search, a memory's
//! history, its state as of a past time, and summary statistics.

use chrono::{DateTime, Utc};

use serde::Serialize;

use crate::clock::to_ms;

use crate::error::{Error, Result};

use crate::event::RecordedEvent;
use crate::evolve::{EvolveError, evolve};
use crate::model::{Memory, MemoryId, MemoryKind, Tier};
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
    pub(crate) fn column(self) -> &'static str {
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

pub(crate) fn encode_cursor(m: &Memory, order: Order) -> String {
    let k = order.key(m);
    format!("{}{}{:x}.{}", order.tag(), if k < 0 { "-" } else { "" }, k.unsigned_abs(), m.id)
}

pub(crate) fn decode_cursor(c: &str, order: Order) -> Result<(i64, String)> {
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
    let content: Vec<&str> = words.iter().copied().filter(|w| !crate::words::is_stopword(w)).collect();
    let chosen = if content.is_empty() { words } else { content };
    chosen.into_iter().map(|w| format!("\"{w}\"")).collect()
}

/// [`fts_terms`] of text still being typed: the last word, when nothing follows it, is also a
/// prefix (`"napo"*`), unless it is a single letter (which would match most of the index).
pub(crate) fn typed_terms(text: &str) -> Vec<String> {
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

/// Search ranks at most this many candidates (the newest that match), bounding its cost: bm25
/// costs about a microsecond per ranked row. A term matching more memories than this is
/// dropped from a query that has rarer terms — bm25 gives it little weight, yet it would make
/// the search rank thousands of weak matches (a stopword rule that needs no word list and works
/// in any language). Stores smaller than the window are always ranked exactly.
pub const SEARCH_WINDOW: i64 = 1_000;

/// Reads every engine serves ([`crate::storage::MemoryReads`]).
impl Store {
    /// The memory with this id.
    pub fn get(&self, id: MemoryId) -> Result<Memory> {
        let reads = self.engine.reads();
        match reads.load(id)? {
            Some(m) => Ok(m),
            None => Err(reads.gone(id)?),
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
        self.engine.reads().find_by_key(user_id, agent_id, kind, key)
    }

    /// The memories that link to `id`, with the relation: (source, relation).
    pub fn linking_to(&self, id: MemoryId) -> Result<Vec<(MemoryId, String)>> {
        self.engine.reads().linking_to(id)
    }

    /// Every event of a memory's stream, oldest first (redacted payloads show as such).
    pub fn history(&self, id: MemoryId) -> Result<Vec<RecordedEvent>> {
        let evs = self.engine.reads().stream_events(id, i64::MAX)?;
        if evs.is_empty() {
            return Err(Error::NotFound(id.to_string()));
        }
        Ok(evs)
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
        for ev in self.engine.reads().stream_events(id, max_seq)? {
            if to_ms(ev.recorded_at) > max_ms {
                break;
            }
            state = match evolve(state, &ev) {
                Ok(s) => s,
                Err(EvolveError::Redacted) => return Err(self.engine.reads().gone(id)?),
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
        self.engine.reads().events_after(after, limit)
    }

    /// The number of events in the log.
    pub fn event_count(&self) -> Result<u64> {
        self.engine.reads().event_count()
    }

    /// The projections' content in canonical order (see [`Snapshot`]).
    pub fn snapshot(&self) -> Result<Snapshot> {
        self.engine.reads().snapshot()
    }

    /// Summary counts.
    pub fn stats(&self) -> Result<Stats> {
        self.engine.reads().stats()
    }
}

/// Lists and keyword search, on every engine ([`crate::storage::MemoryLists`],
/// [`crate::storage::TextSearch`]).
impl Store {
    /// How many memories match `filter`.
    pub fn count(&self, filter: &Filter) -> Result<u64> {
        self.engine.lists().count(filter)
    }

    /// A page of memories matching `filter`, newest first. `limit` is capped at 1,000.
    pub fn list(&self, filter: &Filter, limit: usize, cursor: Option<&str>) -> Result<Page> {
        self.list_by(filter, Order::Added, limit, cursor)
    }

    /// [`Store::list`] in `order`, latest first; a cursor continues the order it came from.
    pub fn list_by(&self, filter: &Filter, order: Order, limit: usize, cursor: Option<&str>) -> Result<Page> {
        let limit = limit.clamp(1, 1000);
        let mut items = self.engine.lists().list_rows(filter, order, limit, cursor)?;
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
        self.engine.lists().sessions(filter, prefix, limit)
    }

    /// Keyword search, best first, with highlighted snippets. Ranks the newest
    /// [`SEARCH_WINDOW`] matching memories at most.
    pub fn search(&self, text: &str, filter: &Filter, limit: usize, marks: (&str, &str)) -> Result<Vec<SearchHit>> {
        self.engine.text().search(text, filter, limit, false, Some(marks))
    }

    /// [`Store::search`] without snippets (empty), for retrieval that shows no passage: each
    /// snippet costs a look-up in the index.
    pub fn search_ranked(&self, text: &str, filter: &Filter, limit: usize) -> Result<Vec<SearchHit>> {
        self.engine.text().search(text, filter, limit, false, None)
    }

    /// [`Store::search_ranked`] for text still being typed: its last word, unless followed by
    /// a space, also matches the words it begins ("napo" finds Napoleon).
    pub fn search_typed(&self, text: &str, filter: &Filter, limit: usize) -> Result<Vec<SearchHit>> {
        self.engine.text().search(text, filter, limit, true, None)
    }

    /// How many memories `filter` selects whose words match `text` as typed (the last word as
    /// a prefix), counted up to `cap` + 1: what a search box says it found, however many it
    /// shows, at a cost bounded on any store ("more than 10,000").
    pub fn count_typed_matches(&self, text: &str, filter: &Filter, cap: u64) -> Result<u64> {
        self.engine.text().count_typed_matches(text, filter, cap)
    }
}

/// The words a keyword search uses: those of `text` (the last as a prefix when `typed`),
/// without words so common they would only slow the search down — more than
/// [`SEARCH_WINDOW`] memories hold them (`frequency`, counted up to that bound) — unless the
/// rarest is such a word. With several words, each comes with how many memories hold it (up
/// to the bound); a single word is not counted.
pub(crate) fn plan_terms(
    text: &str,
    typed: bool,
    mut frequency: impl FnMut(&str) -> Result<i64>,
) -> Result<Vec<(String, Option<i64>)>> {
    let terms = if typed { typed_terms(text) } else { fts_terms(text) };
    if terms.len() <= 1 {
        return Ok(terms.into_iter().map(|t| (t, None)).collect());
    }
    let mut counted = Vec::with_capacity(terms.len());
    for t in terms {
        counted.push((frequency(&t)?, t));
    }
    let rarest = counted.iter().map(|(df, _)| *df).min().unwrap_or(0);
    Ok(counted
        .into_iter()
        .filter(|(df, _)| *df <= SEARCH_WINDOW || *df == rarest)
        .map(|(df, t)| (t, Some(df)))
        .collect())
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
}
