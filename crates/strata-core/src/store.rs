//! The event-sourced store: appends with optimistic concurrency, projections updated in the
//! same transaction, forget with redaction, batched access recording. The write path is
//! written here once, over the engine's [`Log`] primitives (`crate::storage`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::clock::{Clock, SystemClock, to_ms};
use crate::error::{Error, Result};
use crate::event::{Change, Created, EventMeta, Expected, RecordedEvent};
use crate::evolve::{EvolveError, evolve};
use crate::model::{
    Content, Importance, Link, Memory, MemoryId, MemoryKind, Scope, Source, Tier, normalize_reason, normalize_relation,
    normalize_tag,
};
use crate::sqlite::Db;
use crate::storage::{Engine, EngineTx, Log};
use crate::tiers::{self, Move, TierPolicy};

pub use crate::forget::{FORGET_COVERS, ForgetOutcome, Forgot, SCRUB_PATIENCE, finish_scrub};

/// A Strata database: the event log and its projections.
pub struct Store {
    pub(crate) engine: Engine,
    pub(crate) clock: Arc<dyn Clock>,
    path: Option<PathBuf>,
    pending_access: HashMap<MemoryId, u32>,
    /// When the oldest pending access was noted (by the store's clock).
    pending_since: Option<chrono::DateTime<chrono::Utc>>,
    last_id: Option<ulid::Ulid>,
    /// Vector searches so far, and the in-memory copy of a user's vectors made from the second.
    pub(crate) vector_searches: std::cell::Cell<u32>,
    pub(crate) vector_cache: std::cell::RefCell<Option<crate::sqlite::vector_scan::UserVectors>>,
    /// The int8 copy of the vectors of the datasets last searched (either engine).
    pub(crate) dataset_vector_cache: std::cell::RefCell<Option<crate::sqlite::vector_scan::UserVectors>>,
    /// Keeps every file Strata writes off this database while it is open.
    _guard: Option<crate::files::Guard>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish_non_exhaustive()
    }
}

/// Whether `location` names a PostgreSQL database (`postgres://` or `postgresql://`) rather
/// than a file.
pub fn is_database_url(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// What a new memory starts with besides its content.
#[derive(Debug, Clone, Default)]
pub struct NewMemory {
    /// Whose it is.
    pub scope: Scope,
    /// Initial tags.
    pub tags: Vec<String>,
    /// Initial importance (default 0.5).
    pub importance: Option<Importance>,
    /// Initial tier (default by type: episodes short, the rest medium).
    pub tier: Option<Tier>,
    /// Where it came from.
    pub source: Source,
}

/// Pending accesses are written once this many distinct memories have been read…
const ACCESS_FLUSH_AT: usize = 256;

/// … or once the oldest of them is this old (seconds), at the next read or by a program's
/// periodic [`Store::flush_due_accesses`]: counts reach the file within seconds and survive a
/// kill, while a burst of searches (a person typing) costs one write, not one a keystroke.
pub const ACCESS_FLUSH_AFTER_SECS: i64 = 2;

impl Store {
    /// A store on `engine`; a file's path keeps every file Strata writes off it while open.
    fn on(engine: Engine, clock: Arc<dyn Clock>, path: Option<PathBuf>) -> Store {
        Store {
            engine,
            clock,
            _guard: path.as_deref().map(crate::files::guard_database),
            path,
            pending_access: HashMap::new(),
            pending_since: None,
            last_id: None,
            vector_searches: Default::default(),
            vector_cache: Default::default(),
            dataset_vector_cache: Default::default(),
        }
    }

    /// Opens or creates the database at `path` with the system clock.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        Store::open_with_clock(path, Arc::new(SystemClock))
    }

    /// Opens or creates the database at `path` with the given clock.
    pub fn open_with_clock(path: impl AsRef<Path>, clock: Arc<dyn Clock>) -> Result<Store> {
        let path = path.as_ref();
        let conn = Db::open(path)?;
        Ok(Store::on(Engine::Sqlite(conn), clock, Some(path.to_path_buf())))
    }

    /// An in-memory database (tests, benchmarks).
    pub fn in_memory(clock: Arc<dyn Clock>) -> Result<Store> {
        Ok(Store::on(Engine::Sqlite(Db::in_memory()?), clock, None))
    }

    /// Opens the store at `location`: a `postgres://` (or `postgresql://`) URL, or a database
    /// file's path.
    pub fn open_location(location: &str, clock: Arc<dyn Clock>) -> Result<Store> {
        if !is_database_url(location) {
            return Store::open_with_clock(location, clock);
        }
        #[cfg(feature = "postgres")]
        return Store::open_postgres(location, clock);
        #[cfg(not(feature = "postgres"))]
        Err(Error::Unsupported("this build of Strata has no PostgreSQL engine".into()))
    }

    /// Connects to a PostgreSQL database (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`),
    /// checks the server (PostgreSQL 16+, pgvector 0.7+) and brings its schema up to date.
    #[cfg(feature = "postgres")]
    pub fn open_postgres(url: &str, clock: Arc<dyn Clock>) -> Result<Store> {
        Ok(Store::on(Engine::Postgres(Box::new(crate::postgres::Pg::open(url)?)), clock, None))
    }

    /// Another store on the same database, with the same clock: a connection of its own (for
    /// another caller, or another thread). An in-memory database has no second connection.
    pub fn open_another(&self) -> Result<Store> {
        match &self.engine {
            Engine::Sqlite(_) => match &self.path {
                Some(path) => Store::open_with_clock(path, self.clock.clone()),
                None => Err(Error::invalid("an in-memory database has no second connection")),
            },
            #[cfg(feature = "postgres")]
            Engine::Postgres(pg) => Ok(Store::on(Engine::Postgres(Box::new(pg.another()?)), self.clock.clone(), None)),
        }
    }

    /// Whether [`Store::open_another`] can open a second connection (not to an in-memory
    /// database).
    pub fn has_second_connection(&self) -> bool {
        !matches!(self.engine, Engine::Sqlite(_)) || self.path.is_some()
    }

    /// Where the store is, as a person reads it: the file's path, or the database's URL
    /// without its password.
    pub fn location(&self) -> String {
        match &self.engine {
            Engine::Sqlite(_) => self.path.as_ref().map_or_else(|| ":memory:".into(), |p| p.display().to_string()),
            #[cfg(feature = "postgres")]
            Engine::Postgres(pg) => pg.shown.clone(),
        }
    }

    /// Whether this store keeps training's records (adapters, curation, runs): the desktop's
    /// SQLite does; a PostgreSQL store does not (docs/decisions/0007-postgresql-engine.md).
    pub fn keeps_training(&self) -> bool {
        matches!(self.engine, Engine::Sqlite(_))
    }

    /// The SQLite database, for training's records (adapters, curation, runs), which only the
    /// SQLite engine keeps, and its own vector search.
    pub(crate) fn sqlite(&self) -> Result<&Db> {
        match &self.engine {
            Engine::Sqlite(db) => Ok(db),
            #[cfg(feature = "postgres")]
            Engine::Postgres(_) => Err(crate::storage::not_on_postgres()),
        }
    }

    /// The database file, if not in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The store's clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Starts a write transaction holding the database's write lock (one writer at a time,
    /// across processes; others wait up to the busy timeout).
    pub fn write(&mut self) -> Result<StoreTx<'_>> {
        let tx = self.engine.write()?;
        Ok(StoreTx {
            tx,
            clock: self.clock.as_ref(),
            last_id: &mut self.last_id,
            recent: None,
            poisoned: None,
            appended: 0,
        })
    }

    /// Runs `f` in one write transaction and commits it; on error nothing is written.
    pub fn transact<T>(&mut self, f: impl FnOnce(&mut StoreTx<'_>) -> Result<T>) -> Result<T> {
        let mut tx = self.write()?;
        let out = f(&mut tx)?;
        tx.commit()?;
        Ok(out)
    }

    /// Creates a memory.
    pub fn create(&mut self, content: Content, new: NewMemory, meta: &EventMeta) -> Result<Memory> {
        self.transact(|tx| tx.create(content, new, meta))
    }

    /// Copies the WAL into the main file and truncates it. Returns false when another
    /// process's open read kept it from completing (it completes at a later checkpoint).
    /// Waits at most ~100 ms for readers.
    pub fn checkpoint(&self) -> Result<bool> {
        match &self.engine {
            Engine::Sqlite(db) => crate::sqlite::forget::checkpoint(db),
            // PostgreSQL has no WAL file of Strata's to copy back: nothing to do.
            #[cfg(feature = "postgres")]
            Engine::Postgres(_) => Ok(true),
        }
    }

    /// Notes that memories were retrieved; written in batches (see [`Store::flush_accesses`]).
    pub fn note_access(&mut self, ids: impl IntoIterator<Item = MemoryId>) -> Result<()> {
        for id in ids {
            *self.pending_access.entry(id).or_insert(0) += 1;
            self.pending_since.get_or_insert_with(|| self.clock.now());
        }
        if self.pending_access.len() >= ACCESS_FLUSH_AT {
            self.flush_accesses()?;
        } else {
            self.flush_due_accesses()?;
        }
        Ok(())
    }

    /// Writes the pending accesses if the oldest is [`ACCESS_FLUSH_AFTER_SECS`] old: what a
    /// long-running program calls every second or so. While another writer holds the lock (a
    /// large file being kept) they wait for a later call: a read never waits for a write.
    pub fn flush_due_accesses(&mut self) -> Result<usize> {
        let due =
            self.pending_since.is_some_and(|since| (self.clock.now() - since).num_seconds() >= ACCESS_FLUSH_AFTER_SECS);
        if due && !self.writer_busy()? { self.flush_accesses() } else { Ok(0) }
    }

    /// Whether another writer (another engine or process) holds the write lock now, asked
    /// without waiting: work that can be put off puts itself off.
    pub fn writer_busy(&self) -> Result<bool> {
        self.engine.writer_busy()
    }

    /// Writes the pending accesses, one `accessed` event per memory, in one transaction.
    pub fn flush_accesses(&mut self) -> Result<usize> {
        if self.pending_access.is_empty() {
            return Ok(0);
        }
        self.pending_since = None;
        let mut pending: Vec<_> = std::mem::take(&mut self.pending_access).into_iter().collect();
        pending.sort();
        let meta = EventMeta::actor(crate::event::Actor::System);
        self.transact(|tx| {
            let mut n = 0;
            for (id, count) in &pending {
                match tx.append(*id, Expected::Any, Change::Accessed { count: *count }, &meta) {
                    Ok(_) => n += 1,
                    // Forgotten or gone meanwhile: nothing to record.
                    Err(Error::Forgotten { .. } | Error::NotFound(_)) => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(n)
        })
    }

    /// Applies the tier rule at the store clock's current time, in one transaction, and
    /// returns the moves (each recorded as a `tier_changed` or `expired` event with its
    /// reason). With `apply` false nothing is written: a preview.
    pub fn maintain(&mut self, policy: &TierPolicy, apply: bool) -> Result<Vec<Move>> {
        self.maintain_with(policy, apply, &mut crate::interchange::no_tick)
    }

    /// [`Store::maintain`], reporting the moves applied to `tick`; an error from `tick` rolls
    /// every move back.
    pub fn maintain_with(
        &mut self,
        policy: &TierPolicy,
        apply: bool,
        tick: crate::interchange::Tick,
    ) -> Result<Vec<Move>> {
        let now = self.clock.now();
        let meta = EventMeta { client: Some("maintenance".into()), ..EventMeta::actor(crate::event::Actor::System) };
        self.transact(|tx| {
            let memories = tx.tx.live_memories()?;
            let moves = tiers::plan(&memories, now, policy);
            let total = moves.len() as u64;
            tick(0, total)?;
            if apply {
                for (done, mv) in moves.iter().enumerate() {
                    if (done as u64).is_multiple_of(crate::interchange::TICK_EVERY) {
                        tick(done as u64, total)?;
                    }
                    match mv {
                        Move::Tier { id, to, reason, .. } => {
                            tx.set_tier(*id, *to, reason, &meta)?;
                        }
                        Move::Expire { id, reason } => {
                            tx.append(*id, Expected::Any, Change::Expired { reason: reason.clone() }, &meta)?;
                        }
                    }
                }
            }
            tick(total, total)?;
            Ok(moves)
        })
    }

    /// Rebuilds every projection from the log. Returns (events read, memories projected).
    pub fn replay(&mut self) -> Result<(u64, u64)> {
        let tx = self.engine.write()?;
        let out = rebuild(&tx)?;
        tx.commit()?;
        Ok(out)
    }
}

/// Empties the projections and folds the whole log into them again (inside the caller's
/// transaction). Returns (events read, memories projected).
pub(crate) fn rebuild(log: &impl Log) -> Result<(u64, u64)> {
    log.clear_projections()?;
    let mut states: indexmap::IndexMap<MemoryId, Option<Memory>> = indexmap::IndexMap::new();
    let events = log.each_event(&mut |ev| {
        if ev.redacted_at.is_some() {
            return Ok(()); // a forgotten stream; its `forgotten` event ends it
        }
        let slot = states.entry(ev.stream_id).or_insert(None);
        *slot = evolve(slot.take(), &ev).map_err(|e| bad_log(&ev, e))?;
        Ok(())
    })?;
    let mut memories = 0u64;
    for m in states.values().flatten() {
        log.project(None, Some(m))?;
        memories += 1;
    }
    log.reindex()?;
    Ok((events, memories))
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Err(e) = self.flush_accesses() {
            tracing::warn!(error = %e, "could not record pending memory accesses");
        }
    }
}

fn bad_log(ev: &RecordedEvent, e: EvolveError) -> Error {
    let message = match e {
        EvolveError::Redacted => "its payload was redacted".to_string(),
        EvolveError::Inconsistent(m) => m,
    };
    Error::BadEvent { seq: ev.seq, message }
}

/// A write transaction. Dropping it without [`StoreTx::commit`] rolls everything back.
pub struct StoreTx<'a> {
    pub(crate) tx: EngineTx<'a>,
    pub(crate) clock: &'a dyn Clock,
    last_id: &'a mut Option<ulid::Ulid>,
    /// The state of the memory last read or written in this transaction: a command's check and
    /// its append (or a chain of commands on one memory) read it once. Every projection write
    /// in the transaction goes through [`StoreTx::append`], which keeps it current.
    recent: Option<Memory>,
    /// Set when a write failed after changing something: the transaction cannot commit.
    poisoned: Option<String>,
    /// Events appended so far (counted in [`events_appended`] once committed).
    appended: u64,
}

/// Events this process has appended to any store's log (committed ones), for monitoring.
static APPENDED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many events this process has appended and committed, to every store it opened.
pub fn events_appended() -> u64 {
    APPENDED.load(std::sync::atomic::Ordering::Relaxed)
}

impl StoreTx<'_> {
    /// Commits every append made in this transaction at once. Refused (and rolled back) when
    /// a write failed midway.
    pub fn commit(self) -> Result<()> {
        if let Some(why) = self.poisoned {
            return Err(Error::invalid(format!("nothing was saved: a write failed midway ({why})")));
        }
        self.tx.commit()?;
        APPENDED.fetch_add(self.appended, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// A new memory id, increasing within a millisecond so ids sort in creation order.
    fn new_id(&mut self) -> MemoryId {
        let ms = to_ms(self.clock.now()) as u64;
        let id = match *self.last_id {
            Some(last) if last.timestamp_ms() == ms => last.increment(),
            _ => None,
        }
        .unwrap_or_else(|| ulid::Ulid::from_parts(ms, rand::random::<u128>() >> 1));
        *self.last_id = Some(id);
        MemoryId::from_ulid(id)
    }

    /// The current version of a stream (0 when it does not exist).
    pub fn stream_version(&self, stream: MemoryId) -> Result<u64> {
        self.tx.stream_version(stream)
    }

    /// Whether anything but reads happened to `stream` after its version `version`: recorded
    /// reads (`accessed`, written every few seconds) change nothing a writer saw, so a write
    /// expecting `version` still goes ahead after them.
    pub fn changed_since(&self, stream: MemoryId, version: u64) -> Result<bool> {
        self.tx.changed_since(stream, version)
    }

    /// Appends one event to a stream, checking the expected version, and updates the
    /// projections. Returns the recorded event and the memory's new state. `forgotten` and
    /// redacted events are refused: only [`StoreTx::forget`] writes them, with the redaction.
    pub fn append(
        &mut self,
        stream: MemoryId,
        expected: Expected,
        change: Change,
        meta: &EventMeta,
    ) -> Result<(RecordedEvent, Option<Memory>)> {
        if matches!(change, Change::Forgotten { .. } | Change::Redacted { .. }) {
            return Err(Error::invalid("forgetting goes through forget(), which also erases the content"));
        }
        self.write_event(stream, expected, change, meta)
    }

    pub(crate) fn write_event(
        &mut self,
        stream: MemoryId,
        expected: Expected,
        change: Change,
        meta: &EventMeta,
    ) -> Result<(RecordedEvent, Option<Memory>)> {
        if let Some(why) = &self.poisoned {
            return Err(Error::invalid(format!("this transaction was abandoned after a failed write: {why}")));
        }
        // A new stream needs no lookup: UNIQUE (stream_id, stream_version) refuses version 1
        // of a stream that exists, which `insert_event` reports as a conflict.
        let current = if expected == Expected::NoStream { 0 } else { self.stream_version(stream)? };
        let ok = match expected {
            Expected::Any => true,
            Expected::NoStream => current == 0,
            Expected::Exact(v) => current == v || (current > v && !self.changed_since(stream, v)?),
        };
        if !ok {
            return Err(Error::Conflict {
                stream: stream.to_string(),
                expected: expected.to_string(),
                actual: current,
            });
        }
        let old = if current == 0 { None } else { self.load(stream)? };
        if current > 0 && old.is_none() {
            return Err(self.tx.gone(stream)?);
        }
        if current == 0 && !matches!(change, Change::Created(_)) {
            return Err(Error::NotFound(stream.to_string()));
        }
        crate::rules::check(stream, &change, old.as_ref(), &mut |target| self.current(target).map(drop))?;
        let mut event = RecordedEvent {
            seq: 0,
            event_id: crate::event::new_event_id(self.clock),
            stream_id: stream,
            stream_version: current + 1,
            change,
            meta: meta.clone(),
            recorded_at: self.clock.now(),
            redacted_at: None,
        };
        let new = evolve(old.clone(), &event).map_err(|e| match e {
            EvolveError::Inconsistent(m) => Error::invalid(m),
            EvolveError::Redacted => Error::invalid("cannot append a redacted event"),
        })?;
        event.seq = self.tx.append_event(&event).map_err(|e| match e {
            Error::Conflict { stream, actual, .. } => {
                Error::Conflict { stream, expected: expected.to_string(), actual }
            }
            e => e,
        })?;
        self.appended += 1;

        // Projections after the event row: a conflicting append fails before touching them. If
        // the projection refuses (a duplicate key), the event goes too, so a caller that goes
        // on with the transaction never commits an event without its projection.
        // A duplicate key is refused by the first statement of the projection write, before
        // anything changed; any other failure may come midway, and then the transaction can
        // only be rolled back.
        if let Err(e) = self.tx.project(old.as_ref(), new.as_ref()) {
            if !matches!(e, Error::DuplicateKey { .. }) {
                self.poisoned = Some(e.to_string());
            }
            self.tx.unappend(event.seq)?;
            return Err(e);
        }
        // A creation is rarely followed by more writes to the same memory in one transaction
        // (bulk imports); caching it would cost a clone per memory for nothing.
        self.recent = if current == 0 { None } else { new.clone() };
        Ok((event, new))
    }

    pub(crate) fn load(&mut self, id: MemoryId) -> Result<Option<Memory>> {
        if let Some(m) = self.recent.as_ref().filter(|m| m.id == id) {
            return Ok(Some(m.clone()));
        }
        let m = self.tx.load(id)?;
        self.recent = m.clone();
        Ok(m)
    }

    /// The current state of an existing memory, or why there is none.
    pub fn current(&mut self, id: MemoryId) -> Result<Memory> {
        match self.load(id)? {
            Some(m) => Ok(m),
            None => Err(self.tx.gone(id)?),
        }
    }

    /// Fails with [`Error::Forgotten`] (or [`Error::NotFound`]) unless every memory of `ids`
    /// still exists. Work that read memories before its transaction (extraction, grouping,
    /// training sets) calls this in the transaction that writes its result, so forgetting wins
    /// over work in flight: what it read and was forgotten meanwhile is never written back.
    pub fn still_live(&mut self, ids: &[MemoryId]) -> Result<()> {
        for id in ids {
            if !self.tx.exists(*id)? {
                return Err(self.tx.gone(*id)?);
            }
        }
        Ok(())
    }

    /// Creates a memory with a new id.
    pub fn create(&mut self, content: Content, new: NewMemory, meta: &EventMeta) -> Result<Memory> {
        let tags = new.tags.iter().map(|t| normalize_tag(t)).collect::<Result<_>>()?;
        let kind = content.kind();
        let created = Created {
            content,
            scope: new.scope,
            tags,
            importance: new.importance.unwrap_or(Importance::DEFAULT),
            tier: new.tier.unwrap_or(Tier::default_for(kind)),
            source: new.source,
        };
        let id = self.new_id();
        let (_, m) = self.append(id, Expected::NoStream, Change::Created(Box::new(created)), meta)?;
        m.ok_or_else(|| Error::invalid("creation produced no memory"))
    }

    /// Replaces a memory's content (same type). No event when nothing changed.
    pub fn update_content(
        &mut self,
        id: MemoryId,
        content: Content,
        expected: Expected,
        meta: &EventMeta,
    ) -> Result<Memory> {
        let m = self.current(id)?;
        if m.kind() != content.kind() {
            return Err(Error::invalid(format!(
                "memory {id} is {}; its content cannot become {}",
                m.kind(),
                content.kind()
            )));
        }
        if m.content == content {
            return Ok(m);
        }
        self.apply(id, expected, Change::ContentUpdated { content }, meta)
    }

    /// Adds a tag; returns whether anything changed.
    pub fn tag(&mut self, id: MemoryId, tag: &str, meta: &EventMeta) -> Result<bool> {
        let tag = normalize_tag(tag)?;
        if self.current(id)?.tags.contains(&tag) {
            return Ok(false);
        }
        self.apply(id, Expected::Any, Change::Tagged { tag }, meta).map(|_| true)
    }

    /// Removes a tag; returns whether anything changed.
    pub fn untag(&mut self, id: MemoryId, tag: &str, meta: &EventMeta) -> Result<bool> {
        let tag = normalize_tag(tag)?;
        if !self.current(id)?.tags.contains(&tag) {
            return Ok(false);
        }
        self.apply(id, Expected::Any, Change::Untagged { tag }, meta).map(|_| true)
    }

    /// Sets the importance (no event when unchanged).
    pub fn set_importance(&mut self, id: MemoryId, importance: Importance, meta: &EventMeta) -> Result<Memory> {
        let m = self.current(id)?;
        if m.importance == importance {
            return Ok(m);
        }
        self.apply(id, Expected::Any, Change::ImportanceChanged { importance }, meta)
    }

    /// Moves a memory to another tier, with the reason (no event when already there).
    pub fn set_tier(&mut self, id: MemoryId, to: Tier, reason: &str, meta: &EventMeta) -> Result<Memory> {
        let m = self.current(id)?;
        if m.tier == to {
            return Ok(m);
        }
        let reason = normalize_reason(reason)?;
        self.apply(id, Expected::Any, Change::TierChanged { from: m.tier, to, reason }, meta)
    }

    /// Records provenance: `id` relates to `target` (e.g. `derived_from`).
    pub fn link(&mut self, id: MemoryId, target: MemoryId, relation: &str, meta: &EventMeta) -> Result<Memory> {
        let link = Link { target, relation: normalize_relation(relation)? };
        let m = self.current(id)?;
        if m.links.contains(&link) {
            return Ok(m);
        }
        self.apply(id, Expected::Any, Change::Linked { target, relation: link.relation }, meta)
    }

    /// [`Store::find_by_key`] inside this transaction.
    pub fn find_by_key(
        &self,
        user_id: &str,
        agent_id: Option<&str>,
        kind: Option<MemoryKind>,
        key: &str,
    ) -> Result<Vec<Memory>> {
        self.tx.find_by_key(user_id, agent_id, kind, key)
    }

    /// [`Store::linking_to`] inside this transaction.
    pub fn linking_to(&self, id: MemoryId) -> Result<Vec<(MemoryId, String)>> {
        self.tx.linking_to(id)
    }

    /// Removes a link; returns whether there was one.
    pub fn unlink(&mut self, id: MemoryId, target: MemoryId, relation: &str, meta: &EventMeta) -> Result<bool> {
        let link = Link { target, relation: relation.trim().to_string() };
        if !self.current(id)?.links.contains(&link) {
            return Ok(false);
        }
        self.apply(id, Expected::Any, Change::Unlinked { target, relation: link.relation }, meta).map(|_| true)
    }

    /// Pins a memory (maintenance never moves it down); returns whether anything changed.
    pub fn pin(&mut self, id: MemoryId, meta: &EventMeta) -> Result<bool> {
        if self.current(id)?.pinned {
            return Ok(false);
        }
        self.apply(id, Expected::Any, Change::Pinned, meta).map(|_| true)
    }

    /// Unpins a memory; returns whether anything changed.
    pub fn unpin(&mut self, id: MemoryId, meta: &EventMeta) -> Result<bool> {
        if !self.current(id)?.pinned {
            return Ok(false);
        }
        self.apply(id, Expected::Any, Change::Unpinned, meta).map(|_| true)
    }

    /// The time now, by this store's clock.
    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.clock.now()
    }

    fn apply(&mut self, id: MemoryId, expected: Expected, change: Change, meta: &EventMeta) -> Result<Memory> {
        let (_, m) = self.append(id, expected, change, meta)?;
        m.ok_or_else(|| Error::NotFound(id.to_string()))
    }
}
