//! Curation's records (migration 0008): the memories flagged as worth training into an adapter,
//! where each stands — waiting for a person, approved, rejected — and an event for everything
//! that happened to one (flagged, approved, rejected, reopened, withdrawn), with who and when.
//! Which memories qualify is the engine's rule (`strata_api::curation`); this module keeps what
//! it and the people decided. Forgetting a memory deletes its rows ([`forget_candidate_of`]).

use chrono::{DateTime, Utc};

use serde::{Deserialize, Serialize};

use crate::model::MemoryId;

use crate::names::named_enum;

named_enum! {
    /// Where a candidate stands.
    pub enum CandidateStatus ("candidate status") {
        /// Flagged by the criteria, waiting for a person.
        Flagged = "flagged",
        /// Approved for training by a person.
        Approved = "approved",
        /// Rejected by a person; not flagged again unless the memory changes.
        Rejected = "rejected",
    }
}

/// Who flags: the name recorded on the events that flagging writes.
pub const FLAGGING: &str = "flagging";

/// A memory in the curation queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The memory.
    pub memory_id: MemoryId,
    /// Where it stands.
    pub status: CandidateStatus,
    /// How worth training it is, 0 to 1.
    pub score: f64,
    /// Why it qualifies, in words.
    pub reasons: Vec<String>,
    /// When the memory had last changed (its `updated_at`) as flagged or decided: a memory
    /// changed since is not the one the flag or decision was about. (Not its version: being
    /// recalled adds events, and is no change.)
    pub changed_at: DateTime<Utc>,
    /// When it was last flagged.
    pub flagged_at: DateTime<Utc>,
    /// When a person decided, if one has.
    pub decided_at: Option<DateTime<Utc>>,
    /// Who decided.
    pub decided_by: Option<String>,
    /// What they said.
    pub note: Option<String>,
}

/// One event in a candidate's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateEvent {
    /// Order of all candidate events.
    pub seq: i64,
    /// The memory.
    pub memory_id: MemoryId,
    /// When.
    pub at: DateTime<Utc>,
    /// What: flagged, approved, rejected, reopened, withdrawn.
    pub kind: String,
    /// Who: a front end's name, or [`FLAGGING`].
    pub by: String,
    /// Details: score and reasons, the note, why it was withdrawn.
    pub detail: serde_json::Value,
}

/// A memory that meets the criteria, as flagging found it.
#[derive(Debug, Clone, PartialEq)]
pub struct Qualifying {
    /// The memory.
    pub memory_id: MemoryId,
    /// When it last changed (its `updated_at`).
    pub changed_at: DateTime<Utc>,
    /// Its score, 0 to 1.
    pub score: f64,
    /// Why, in words.
    pub reasons: Vec<String>,
}

/// What one flagging pass changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlagCounts {
    /// Memories newly in the queue.
    pub flagged: u64,
    /// Candidates still qualifying (their score and reasons refreshed).
    pub kept: u64,
    /// Decided candidates back in the queue because their memory changed since.
    pub reopened: u64,
    /// Candidates that stopped qualifying and left the queue.
    pub withdrawn: u64,
}

/// A person's edit of a memory's training examples.
#[derive(Debug, Clone, PartialEq)]
pub struct ExampleEdit {
    /// The memory's `updated_at` the edit is for.
    pub changed_at: DateTime<Utc>,
    /// The examples (JSON array, as the trainer writes them).
    pub examples: serde_json::Value,
    /// When.
    pub edited_at: DateTime<Utc>,
    /// Who.
    pub edited_by: String,
}
