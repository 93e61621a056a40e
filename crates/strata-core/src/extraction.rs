//! What extraction keeps beside the memories (migration 0004): which episodes it has read, and
//! every decision it made about a fact — applied at once or proposed for a person — with its
//! reason and sources. The facts themselves are semantic memories linked to the episodes they
//! rest on ([`FACT_SOURCE`]) and to their subject's document ([`ABOUT`]); forgetting an episode
//! forgets the facts that rest on it alone (see [`StoreTx::forget`]).

use chrono::{DateTime, Utc};

use serde::{Deserialize, Serialize};

use crate::model::{MemoryId, Scope};

use crate::names::named_enum;

mod records;

/// A fact's link to an episode its current value rests on.
pub const FACT_SOURCE: &str = "extracted_from";

/// A fact's link to an episode one of its earlier values rested on (kept in its history).
pub const EARLIER_SOURCE: &str = "earlier_extracted_from";

/// A fact's link to its subject's document.
pub const ABOUT: &str = "about";

named_enum! {
    /// What a decision does to what is known about a subject.
    pub enum DecisionAction ("decision") {
        /// A new fact.
        Add = "add",
        /// A known fact changed: its old value is superseded and kept in its history.
        Update = "update",
        /// Already known: at most a new source is added.
        Noop = "noop",
    }
}

named_enum! {
    /// Where a decision stands.
    pub enum DecisionStatus ("decision status") {
        /// Waiting for a person; kept out of recall until accepted.
        Proposed = "proposed",
        /// Carried out (at once, or accepted by a person).
        Applied = "applied",
        /// Rejected by a person.
        Rejected = "rejected",
    }
}

/// What a decision says, beyond its action.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DecisionDetail {
    /// The fact, one sentence.
    pub fact: String,
    /// A short name for what the fact is about (`home`, `job`), the second half of its key.
    pub topic: String,
    /// The date the fact was stated (the conversation's date), `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated: Option<String>,
    /// The subject's name as said (`Ana`).
    #[serde(default)]
    pub subject_name: String,
    /// One sentence on who or what the subject is (for a new subject).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Why: the model's words, or the rule that decided.
    pub reason: String,
    /// The value it replaces (an update), as it was when decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<String>,
}

/// One decision of an extraction run.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Its id (a ULID); the events that carried it out have it as their correlation id.
    pub id: String,
    /// The run that made it.
    pub run_id: String,
    /// Whose memory it concerns (the session it came from included).
    pub scope: Scope,
    /// When it was made.
    pub made_at: DateTime<Utc>,
    /// `provider/model` that decided.
    pub model: String,
    /// Add, update or no-op.
    pub action: DecisionAction,
    /// The subject's key.
    pub subject: String,
    /// The fact memory it changes: known for updates and no-ops, for adds once applied.
    pub target: Option<MemoryId>,
    /// The fact, its reason and the rest.
    pub detail: DecisionDetail,
    /// The episodes it rests on.
    pub sources: Vec<MemoryId>,
    /// Proposed, applied or rejected.
    pub status: DecisionStatus,
    /// When a person decided (or when it was applied).
    pub decided_at: Option<DateTime<Utc>>,
    /// Who decided: a client name, or `automatic`.
    pub decided_by: Option<String>,
}
