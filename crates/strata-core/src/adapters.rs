//! The adapter registry: LoRA adapters trained from memories, versioned in the store with
//! their provenance (base model hash, training-set hash, source memory ids), hyperparameters,
//! evaluation metrics and status (candidate / active / retired), and an event for every change
//! (trained, evaluated, activated, deactivated, rolled back, retired). At most one is active.
//! Forgetting a memory retires every adapter trained from it and deletes its files: an adapter
//! holds what it learned, so forget must reach it too.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use serde::{Deserialize, Serialize};

use crate::names::named_enum;

named_enum! {
    /// Where an adapter stands.
    pub enum AdapterStatus ("adapter status") {
        /// Trained, not in use.
        Candidate = "candidate",
        /// Used by the on-device model.
        Active = "active",
        /// Withdrawn (rolled back, or a source memory was forgotten).
        Retired = "retired",
    }
}

/// A registered adapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdapterRecord {
    /// Its id (`ad_` and a ULID).
    pub id: String,
    /// When it was registered.
    pub created_at: DateTime<Utc>,
    /// The base model's name.
    pub base_model: String,
    /// SHA-256 of the base model file.
    pub base_hash: String,
    /// SHA-256 of the training set.
    pub dataset_hash: String,
    /// The memories it was trained from.
    pub sources: Vec<String>,
    /// How it was trained.
    pub hyperparameters: serde_json::Value,
    /// Its evaluation report, once evaluated.
    pub metrics: Option<serde_json::Value>,
    /// Whether it passed the evaluation gate, once evaluated.
    pub passed: Option<bool>,
    /// Where it stands.
    pub status: AdapterStatus,
    /// The folder of its files.
    pub path: PathBuf,
    /// Its size on disk.
    pub bytes: u64,
}

/// One event in an adapter's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdapterEvent {
    /// Order of all adapter events.
    pub seq: i64,
    /// The adapter.
    pub adapter_id: String,
    /// When.
    pub at: DateTime<Utc>,
    /// What happened: trained, evaluated, activated, deactivated, rolled_back, retired.
    pub kind: String,
    /// Details (JSON).
    pub detail: serde_json::Value,
}

/// What to register after training.
#[derive(Debug, Clone)]
pub struct NewAdapter {
    /// Its id, from [`Store::new_adapter_id`] (its files' folder is usually named by it).
    pub id: String,
    /// Base model name.
    pub base_model: String,
    /// Base model SHA-256.
    pub base_hash: String,
    /// Training set SHA-256.
    pub dataset_hash: String,
    /// Source memory ids.
    pub sources: Vec<String>,
    /// Hyperparameters.
    pub hyperparameters: serde_json::Value,
    /// The folder of its files.
    pub path: PathBuf,
    /// Size on disk.
    pub bytes: u64,
    /// Training details for the `trained` event (steps, seconds, loss).
    pub trained: serde_json::Value,
}

/// Where adapters, training sets and checkpoints live: beside the database `db`
/// (`strata.db` → `strata.adapters/`).
pub fn adapters_root(db: &Path) -> PathBuf {
    db.with_extension("adapters")
}

/// An adapter in use, checked again.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AdapterCheck {
    /// When.
    pub at: DateTime<Utc>,
    /// Share of its held-out questions answered with what the memories say now.
    pub recall: f64,
    /// Questions asked.
    pub questions: u64,
    /// Facts whose value changed since it was trained.
    pub changed: u64,
    /// Facts whose memory was forgotten or expired since.
    pub gone: u64,
}

/// How an adapter in use fared on one day: how often questions chose it, and what people said
/// of the answers it gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdapterDay {
    /// The day (UTC), `YYYY-MM-DD`.
    pub day: String,
    /// Answers it gave.
    pub chosen: u64,
    /// Of those, marked helpful.
    pub helpful: u64,
    /// Of those, marked wrong (not helpful).
    pub wrong: u64,
}

/// One thing the training schedule did, as its history shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScheduleEntry {
    /// Order of all entries.
    pub seq: i64,
    /// When.
    pub at: DateTime<Utc>,
    /// What: `looked`, `trained`, `promoted`, `waiting`, `kept`, `rolled_back`, `failed`, `paused`.
    pub kind: String,
    /// The adapter it is about, if one.
    pub adapter_id: Option<String>,
    /// Its numbers and reasons (counts and ids, never a memory's words).
    pub detail: serde_json::Value,
}
