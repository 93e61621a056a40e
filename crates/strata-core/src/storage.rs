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
    /// Why a stream has no memory: [`Error::Forgotten`] (when) or [`Error::NotFound`].
    fn gone(&self, id: MemoryId) -> Result<Error>;
    /// Erases the payload of every event of `stream` not erased yet; returns how many.
    fn redact_stream(&self, stream: MemoryId, at: DateTime<Utc>) -> Result<u64>;
    /// The live memories of a user (and agent, and type) whose key is `key`.
    fn find_by_key(&self, user: &str, agent: Option<&str>, kind: Option<MemoryKind>, key: &str) -> Result<Vec<Memory>>;
    /// The memories that link to `id`, with each link's relation.
    fn linking_to(&self, id: MemoryId) -> Result<Vec<(MemoryId, String)>>;
    /// Empties every projection (the start of a replay).
    fn clear_projections(&self) -> Result<()>;
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
