//! Strata's engine core: the memory model, the event-sourced store with its projections,
//! replay and as-of reads, queries, and the import/export formats. No ML, no HTTP, no UI. The
//! SQL lives in one engine module ([`sqlite`]) behind the seam in `storage`.
#![deny(missing_docs)]

pub mod access;
pub mod adapters;
pub mod agent_runs;
pub mod agents;
pub mod analytics;
pub mod chat;
pub mod clock;
pub mod concepts;
pub mod curation;
pub mod datasets;
pub mod error;
pub mod event;
pub mod evolve;
pub mod extraction;
pub mod fence;
pub mod files;
mod forget;
pub mod interchange;
pub mod model;
mod names;
pub mod people;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod protocol;
pub mod query;
pub mod retrieval;
mod rules;
pub mod runs;
mod sql;
pub mod sqlite;
mod storage;
pub mod store;
pub mod temporal;
pub mod tiers;
pub mod time;
pub mod vectors;
pub mod words;

pub use adapters::{AdapterCheck, AdapterDay, AdapterEvent, AdapterRecord, AdapterStatus, NewAdapter, ScheduleEntry};
pub use chat::{
    ChatError, ChatErrorKind, ChatModel, ChatRequest, ChatResponse, ChosenAdapter, Message, Role, ToolCall, ToolSpec,
    Usage,
};
pub use clock::{Clock, ManualClock, SystemClock};
pub use curation::{Candidate, CandidateEvent, CandidateStatus, ExampleEdit, FlagCounts, Qualifying};
pub use error::{Error, Result};
pub use event::{Actor, Change, EventMeta, Expected, RecordedEvent};
pub use extraction::{Decision, DecisionAction, DecisionDetail, DecisionStatus};
pub use model::search_text;
pub use model::{
    Concept, Content, Episode, EpisodeBody, FactValue, Facts, Importance, Link, Memory, MemoryId, MemoryKind,
    Procedure, Scope, Source, Tier,
};
pub use protocol::{
    ListMemory, MemoryEntry, MemoryProtocol, QueryOptions, QueryResult, StoreMemory, UpdateContextResult,
};
pub use query::{AsOf, Filter, IMPORTED_APPS, Order, Origin, Page, SearchHit, SessionSummary, Snapshot, Stats};
pub use retrieval::{
    ASSISTANT_WEIGHT, Breakdown, Fusion, HybridOptions, Recalled, Relevance, TimeUse, said_by_assistant,
};
pub use store::{ForgetOutcome, Forgot, NewMemory, Store, StoreTx};
pub use tiers::{Move, TierPolicy};
pub use vectors::{Embedder, RecentQueries, VectorHit};
