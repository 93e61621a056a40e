//! The seam between the domain and a storage engine.
//!
//! The write path ([`crate::StoreTx`]: a version check, the rules, `evolve`, projections kept
//! with the log, forget's cascade) is written once, over the [`Log`] primitives below. An
//! engine gives them inside its one write transaction; the SQLite engine ([`crate::sqlite`]) is
//! the first. Reads are the engine's own statements, one module per feature under
//! `crate::sqlite`.
//!
//! **One writer at a time.** Every `Log` call happens inside a write transaction that no other
//! writer of the same store can interleave with: SQLite gives it with its database write lock
//! (`BEGIN IMMEDIATE`, across processes). A server engine must give the same guarantee its own
//! way (for example a per-user advisory lock taken at the transaction's start): stream versions
//! and the projections assume it.

use chrono::{DateTime, Utc};

use crate::error::{Error, Result};
use crate::event::RecordedEvent;
use crate::model::{Memory, MemoryId, MemoryKind};

/// The write primitives of an engine, called inside its one write transaction.
pub(crate) trait Log {
    /// The current version of a stream (0 when it does not exist).
    fn stream_version(&self, stream: MemoryId) -> Result<u64>;
    /// Whether any event but a recorded read (`accessed`) came after `version` of `stream`.
    fn changed_since(&self, stream: MemoryId, version: u64) -> Result<bool>;
    /// Appends an event (its `seq` is ignored) and returns its sequence number. A second
    /// version 1 of a stream is refused as [`Error::Conflict`].
    fn append_event(&self, event: &RecordedEvent) -> Result<i64>;
    /// Takes back the event just appended (its projection was refused).
    fn unappend(&self, seq: i64) -> Result<()>;
    /// Projects a memory's change, old → new (none: created or deleted).
    fn project(&self, old: Option<&Memory>, new: Option<&Memory>) -> Result<()>;
    /// A memory as projected, if it exists.
    fn load(&self, id: MemoryId) -> Result<Option<Memory>>;
    /// Whether a memory exists (is projected).
    fn exists(&self, id: MemoryId) -> Result<bool>;
    /// Every memory not expired (maintenance's input).
    fn live_memories(&self) -> Result<Vec<Memory>>;
    /// Why a stream has no memory: [`Error::Forgotten`] (when) or [`Error::NotFound`].
    fn gone(&self, id: MemoryId) -> Result<Error>;
    /// Erases the payload of every event of `stream` not erased yet; returns how many.
    fn redact_stream(&self, stream: MemoryId, at: DateTime<Utc>) -> Result<u64>;
    /// The live memories of a user (and agent, and type) whose key is `key`.
    fn find_by_key(&self, user: &str, agent: Option<&str>, kind: Option<MemoryKind>, key: &str) -> Result<Vec<Memory>>;
    /// The memories that link to `id`, with each link's relation.
    fn linking_to(&self, id: MemoryId) -> Result<Vec<(MemoryId, String)>>;
    /// The live episodes of a user (and agent, and session) that happened at `occurred_ms`
    /// (what an imported episode is compared with).
    fn episodes_at(
        &self,
        user: &str,
        agent: Option<&str>,
        session: Option<&str>,
        occurred_ms: i64,
    ) -> Result<Vec<Memory>>;
    /// Empties every projection (the start of a replay).
    fn clear_projections(&self) -> Result<()>;
    /// How many events the log holds.
    fn events_held(&self) -> Result<i64>;
    /// Writes a restored event as it was recorded, its `seq` included (a backup's restore; its
    /// payload already encoded at `schema_version`). [`Log::reindex`] runs after the last.
    fn restore_event(&self, event: &RecordedEvent, payload: &str, schema_version: i64) -> Result<()>;
    /// Calls `f` with every event of the log in order; returns how many.
    fn each_event(&self, f: &mut dyn FnMut(RecordedEvent) -> Result<()>) -> Result<u64>;
    /// After a replay: drops what the new projections no longer hold (vectors of memories gone)
    /// and rebuilds the indexes keyed by them.
    fn reindex(&self) -> Result<()>;
    /// Erases every record of `id` outside the log and its projections — usage, extraction,
    /// curation and training records, adapters' reports quoting it — and retires the adapters
    /// trained from it; returns their ids. Every side table an engine keeps is covered (the
    /// SQLite engine's test reads its schema to check).
    fn erase_records(&self, id: MemoryId, at: DateTime<Utc>) -> Result<Vec<String>>;
}

/// A memory row as every engine stores it (times in ms since the epoch, content and source as
/// JSON text), decoded once for all engines by [`MemoryRow::decode`].
pub(crate) struct MemoryRow {
    pub id: String,
    pub user_id: String,
    pub agent_id: Option<String>,
    pub session_id: Option<String>,
    pub tier: String,
    pub importance: f64,
    pub source: String,
    pub content: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub version: i64,
    pub access_count: i64,
    pub last_accessed_at: Option<i64>,
    pub pinned: bool,
    pub expired_at: Option<i64>,
    pub tags: Vec<String>,
    /// (target, relation) pairs.
    pub links: Vec<(String, String)>,
}

impl MemoryRow {
    /// The memory, or which column does not decode.
    pub(crate) fn decode(self) -> Result<Memory, String> {
        use crate::clock::from_ms;
        let json = |what: &str, e: serde_json::Error| format!("its {what} does not parse ({e})");
        let links = self
            .links
            .into_iter()
            .map(|(t, relation)| {
                t.parse::<MemoryId>()
                    .map(|target| crate::model::Link { target, relation })
                    .map_err(|e| format!("a link has a bad id '{t}' ({e})"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Memory {
            id: self.id.parse().map_err(|e| format!("bad id '{}' ({e})", self.id))?,
            scope: crate::model::Scope { user_id: self.user_id, agent_id: self.agent_id, session_id: self.session_id },
            tier: self.tier.parse().map_err(|e| format!("bad tier '{}' ({e})", self.tier))?,
            importance: crate::model::Importance::new(self.importance).map_err(|e| e.to_string())?,
            source: serde_json::from_str(&self.source).map_err(|e| json("source", e))?,
            content: serde_json::from_str(&self.content).map_err(|e| json("content", e))?,
            created_at: from_ms(self.created_at),
            updated_at: from_ms(self.updated_at),
            version: self.version as u64,
            access_count: self.access_count as u64,
            last_accessed_at: self.last_accessed_at.map(from_ms),
            pinned: self.pinned,
            expired_at: self.expired_at.map(from_ms),
            tags: self.tags.into_iter().collect(),
            links,
        })
    }
}

/// An event row as every engine stores it, decoded once for all by [`EventRow::decode`].
pub(crate) struct EventRow {
    pub seq: i64,
    pub event_id: String,
    pub stream_id: String,
    pub stream_version: i64,
    pub event_type: String,
    pub schema_version: i64,
    pub payload: String,
    pub actor: String,
    pub client: Option<String>,
    pub session_id: Option<String>,
    pub correlation_id: Option<String>,
    pub causation_id: Option<String>,
    pub recorded_at: i64,
    pub redacted_at: Option<i64>,
}

/// The columns an [`EventRow`] is read from, in order (the same names on every engine).
pub(crate) const EVENT_COLUMNS: &str = "seq, event_id, stream_id, stream_version, event_type, schema_version, payload, \
     actor, client, session_id, correlation_id, causation_id, recorded_at, redacted_at";

impl EventRow {
    /// The event with its payload decoded.
    pub(crate) fn decode(self) -> Result<RecordedEvent> {
        use crate::clock::from_ms;
        let seq = self.seq;
        let bad = |message: String| Error::BadEvent { seq, message };
        let event_type = &self.event_type;
        let change =
            crate::event::Change::decode(event_type, self.schema_version, &self.payload, self.redacted_at.is_some())
                .map_err(|m| bad(format!("{event_type}: {m}")))?;
        Ok(RecordedEvent {
            seq,
            event_id: self.event_id,
            stream_id: self.stream_id.parse().map_err(|_| bad(format!("bad stream id '{}'", self.stream_id)))?,
            stream_version: self.stream_version as u64,
            change,
            meta: crate::event::EventMeta {
                actor: self.actor.parse().map_err(|_| bad(format!("bad actor '{}'", self.actor)))?,
                client: self.client,
                session_id: self.session_id,
                correlation_id: self.correlation_id,
                causation_id: self.causation_id,
            },
            recorded_at: from_ms(self.recorded_at),
            redacted_at: self.redacted_at.map(from_ms),
        })
    }
}

/// Where an episode sits in its session: what the neighbour look-ups need.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Place {
    pub user_id: String,
    pub agent_id: String,
    pub session_id: String,
    pub occurred_ms: i64,
    pub id: String,
}

impl Place {
    /// The place of `m`, if it is an episode in a session.
    pub(crate) fn of(m: &Memory) -> Option<Place> {
        let crate::model::Content::Episodic(e) = &m.content else { return None };
        Some(Place {
            user_id: m.scope.user_id.clone(),
            agent_id: m.scope.agent_id.clone().unwrap_or_default(),
            session_id: m.scope.session_id.clone()?,
            occurred_ms: crate::clock::to_ms(e.occurred_at),
            id: m.id.to_string(),
        })
    }
}

/// The searchable body of a memory stored as `content_json` (an episode's context is the body
/// of the episode before it in its session).
pub(crate) fn body_of(content_json: &str) -> Result<String> {
    let content: crate::model::Content = serde_json::from_str(content_json)
        .map_err(|e| Error::Corrupt(format!("a stored memory does not parse: {e}")))?;
    Ok(crate::model::search_text(&content).1)
}

/// The engine a store runs on.
pub(crate) enum Engine {
    /// A SQLite file (or memory): the embedded default.
    Sqlite(crate::sqlite::Db),
    /// A PostgreSQL database with pgvector.
    #[cfg(feature = "postgres")]
    Postgres(Box<crate::postgres::Pg>),
}

/// The one write transaction of an [`Engine`].
pub(crate) enum EngineTx<'a> {
    Sqlite(crate::sqlite::Tx<'a>),
    #[cfg(feature = "postgres")]
    Postgres(crate::postgres::PgTx<'a>),
}

/// What training's records (adapters, curation, runs) answer on PostgreSQL, which does not
/// keep them (docs/decisions/0007-postgresql-engine.md).
#[cfg(feature = "postgres")]
pub(crate) fn not_on_postgres() -> Error {
    Error::Unsupported(
        "training (adapters, curation and training runs) stays with the desktop's SQLite store: a PostgreSQL store does not keep it; use a SQLite store for it".into(),
    )
}

impl Engine {
    /// Whether another writer holds the write lock now (asked without waiting).
    pub(crate) fn writer_busy(&self) -> Result<bool> {
        match self {
            Engine::Sqlite(db) => db.writer_busy(),
            #[cfg(feature = "postgres")]
            Engine::Postgres(pg) => pg.writer_busy(),
        }
    }

    /// Starts the one write transaction (see the module's note on one writer).
    pub(crate) fn write(&mut self) -> Result<EngineTx<'_>> {
        Ok(match self {
            Engine::Sqlite(db) => EngineTx::Sqlite(db.write()?),
            #[cfg(feature = "postgres")]
            Engine::Postgres(pg) => EngineTx::Postgres(pg.write()?),
        })
    }
}

/// Calls the same method on whichever engine's transaction this is.
macro_rules! on_engine {
    ($tx:expr, $t:ident => $call:expr) => {
        match $tx {
            EngineTx::Sqlite($t) => $call,
            #[cfg(feature = "postgres")]
            EngineTx::Postgres($t) => $call,
        }
    };
}

impl EngineTx<'_> {
    /// Commits the transaction.
    pub(crate) fn commit(self) -> Result<()> {
        on_engine!(self, t => t.commit())
    }

    /// The transaction's [`PlainSql`]: statements inside it.
    pub(crate) fn plain(&self) -> &dyn PlainSql {
        match self {
            EngineTx::Sqlite(tx) => &**tx,
            #[cfg(feature = "postgres")]
            EngineTx::Postgres(tx) => tx,
        }
    }

    /// How the transaction's engine writes the SQL both share.
    pub(crate) fn dialect(&self) -> crate::sql::Dialect {
        match self {
            EngineTx::Sqlite(_) => crate::sql::Dialect::Sqlite,
            #[cfg(feature = "postgres")]
            EngineTx::Postgres(_) => crate::sql::Dialect::Postgres,
        }
    }
}

impl Log for EngineTx<'_> {
    fn stream_version(&self, stream: MemoryId) -> Result<u64> {
        on_engine!(self, t => t.stream_version(stream))
    }
    fn changed_since(&self, stream: MemoryId, version: u64) -> Result<bool> {
        on_engine!(self, t => t.changed_since(stream, version))
    }
    fn append_event(&self, event: &RecordedEvent) -> Result<i64> {
        on_engine!(self, t => t.append_event(event))
    }
    fn unappend(&self, seq: i64) -> Result<()> {
        on_engine!(self, t => t.unappend(seq))
    }
    fn project(&self, old: Option<&Memory>, new: Option<&Memory>) -> Result<()> {
        on_engine!(self, t => t.project(old, new))
    }
    fn load(&self, id: MemoryId) -> Result<Option<Memory>> {
        on_engine!(self, t => t.load(id))
    }
    fn exists(&self, id: MemoryId) -> Result<bool> {
        on_engine!(self, t => t.exists(id))
    }
    fn live_memories(&self) -> Result<Vec<Memory>> {
        on_engine!(self, t => t.live_memories())
    }
    fn gone(&self, id: MemoryId) -> Result<Error> {
        on_engine!(self, t => t.gone(id))
    }
    fn redact_stream(&self, stream: MemoryId, at: DateTime<Utc>) -> Result<u64> {
        on_engine!(self, t => t.redact_stream(stream, at))
    }
    fn find_by_key(&self, user: &str, agent: Option<&str>, kind: Option<MemoryKind>, key: &str) -> Result<Vec<Memory>> {
        on_engine!(self, t => t.find_by_key(user, agent, kind, key))
    }
    fn linking_to(&self, id: MemoryId) -> Result<Vec<(MemoryId, String)>> {
        on_engine!(self, t => t.linking_to(id))
    }
    fn episodes_at(
        &self,
        user: &str,
        agent: Option<&str>,
        session: Option<&str>,
        occurred_ms: i64,
    ) -> Result<Vec<Memory>> {
        on_engine!(self, t => t.episodes_at(user, agent, session, occurred_ms))
    }
    fn clear_projections(&self) -> Result<()> {
        on_engine!(self, t => t.clear_projections())
    }
    fn events_held(&self) -> Result<i64> {
        on_engine!(self, t => t.events_held())
    }
    fn restore_event(&self, event: &RecordedEvent, payload: &str, schema_version: i64) -> Result<()> {
        on_engine!(self, t => t.restore_event(event, payload, schema_version))
    }
    fn each_event(&self, f: &mut dyn FnMut(RecordedEvent) -> Result<()>) -> Result<u64> {
        on_engine!(self, t => t.each_event(f))
    }
    fn reindex(&self) -> Result<()> {
        on_engine!(self, t => t.reindex())
    }
    fn erase_records(&self, id: MemoryId, at: DateTime<Utc>) -> Result<Vec<String>> {
        on_engine!(self, t => t.erase_records(id, at))
    }
}

/// The reads of memories and their log that every engine serves: by id, key and link, a
/// stream's events (for history and as-of reads), the log in order (backups, tailing), and the
/// projections' content in canonical order (replay checks).
pub(crate) trait MemoryReads {
    /// A memory as projected, if it exists.
    fn load(&self, id: MemoryId) -> Result<Option<Memory>>;
    /// Why a stream has no memory: [`Error::Forgotten`] (when) or [`Error::NotFound`].
    fn gone(&self, id: MemoryId) -> Result<Error>;
    /// The live memories of a user (and agent, and type) whose key is `key`.
    fn find_by_key(&self, user: &str, agent: Option<&str>, kind: Option<MemoryKind>, key: &str) -> Result<Vec<Memory>>;
    /// The memories that link to `id`, with each link's relation.
    fn linking_to(&self, id: MemoryId) -> Result<Vec<(MemoryId, String)>>;
    /// A stream's events with `seq <= max_seq`, by stream version.
    fn stream_events(&self, id: MemoryId, max_seq: i64) -> Result<Vec<RecordedEvent>>;
    /// Events with `seq > after`, at most `limit`, oldest first.
    fn events_after(&self, after: i64, limit: usize) -> Result<Vec<RecordedEvent>>;
    /// The number of events in the log.
    fn event_count(&self) -> Result<u64>;
    /// The projections' content in canonical order.
    fn snapshot(&self) -> Result<crate::query::Snapshot>;
    /// Summary counts.
    fn stats(&self) -> Result<crate::query::Stats>;
}

impl Engine {
    /// The engine's [`MemoryReads`].
    pub(crate) fn reads(&self) -> &dyn MemoryReads {
        match self {
            Engine::Sqlite(db) => db,
            #[cfg(feature = "postgres")]
            Engine::Postgres(pg) => pg.as_ref(),
        }
    }
}

/// Lists, counts and sessions of the memories a filter selects.
pub(crate) trait MemoryLists {
    /// How many memories match `filter`.
    fn count(&self, filter: &crate::query::Filter) -> Result<u64>;
    /// Up to `limit` + 1 memories in `order` (latest first) after `cursor`.
    fn list_rows(
        &self,
        filter: &crate::query::Filter,
        order: crate::query::Order,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<Vec<Memory>>;
    /// The sessions whose id starts with `prefix`, the one used last first.
    fn sessions(
        &self,
        filter: &crate::query::Filter,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<crate::query::SessionSummary>>;
    /// Every memory of one scope — `user_id`'s shared ones (`agent_id` none) or one agent's
    /// private ones — expired ones included, in the order they happened.
    fn scope_rows(&self, user_id: &str, agent_id: Option<&str>) -> Result<Vec<Memory>>;
}

/// Keyword search over the memories' searchable text (title, body, an episode's context).
pub(crate) trait TextSearch {
    /// The best `limit` matches of `text` (the last word as a prefix when `typed`), best
    /// first; with a passage each, its matches between `marks`, when marks are given.
    fn search(
        &self,
        text: &str,
        filter: &crate::query::Filter,
        limit: usize,
        typed: bool,
        marks: Option<(&str, &str)>,
    ) -> Result<Vec<crate::query::SearchHit>>;
    /// How many memories match `text` as typed, counted up to `cap` + 1.
    fn count_typed_matches(&self, text: &str, filter: &crate::query::Filter, cap: u64) -> Result<u64>;
}

impl Engine {
    /// The engine's [`MemoryLists`].
    pub(crate) fn lists(&self) -> &dyn MemoryLists {
        match self {
            Engine::Sqlite(db) => db,
            #[cfg(feature = "postgres")]
            Engine::Postgres(pg) => pg.as_ref(),
        }
    }

    /// The engine's [`TextSearch`].
    pub(crate) fn text(&self) -> &dyn TextSearch {
        match self {
            Engine::Sqlite(db) => db,
            #[cfg(feature = "postgres")]
            Engine::Postgres(pg) => pg.as_ref(),
        }
    }
}

/// Statements over the small tables both engines hold alike (the people a server lets in),
/// written once with `?` placeholders; values come back plainly (`None` for NULL).
pub(crate) trait PlainSql {
    /// Runs a statement that returns no rows: how many it changed.
    fn execute(&self, q: &crate::sql::Sql) -> Result<u64>;
    /// Runs a query: each row's values, in the statement's column order.
    fn rows(&self, q: &crate::sql::Sql) -> Result<Vec<Vec<Option<crate::sql::SqlValue>>>>;
}

impl Engine {
    /// The engine's [`PlainSql`].
    pub(crate) fn plain(&self) -> &dyn PlainSql {
        match self {
            Engine::Sqlite(db) => &**db,
            #[cfg(feature = "postgres")]
            Engine::Postgres(pg) => pg.as_ref(),
        }
    }

    /// How the engine writes the SQL both share.
    pub(crate) fn dialect(&self) -> crate::sql::Dialect {
        match self {
            Engine::Sqlite(_) => crate::sql::Dialect::Sqlite,
            #[cfg(feature = "postgres")]
            Engine::Postgres(_) => crate::sql::Dialect::Postgres,
        }
    }
}
