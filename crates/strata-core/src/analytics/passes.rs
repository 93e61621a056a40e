//! What each compaction pass changed: the engine records a pass's counts when it has written
//! it; analytics lists the passes in a range.

use serde::{Deserialize, Serialize};

/// One compaction pass: what it changed and the compaction ratio of what it wrote.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CompactionPass {
    /// When it was written (RFC 3339; set when read back).
    pub at: String,
    /// A full pass (every memory grouped again) or an incremental one (new memories joined).
    pub full: bool,
    /// Concepts formed.
    pub formed: u32,
    /// Concepts whose members, name or summary changed.
    pub updated: u32,
    /// Concepts merged into another.
    pub merged: u32,
    /// Concepts whose members no longer form a group.
    pub dissolved: u32,
    /// Memories that joined a known concept.
    pub joined: u32,
    /// Live concepts afterwards.
    pub concepts: u32,
    /// Memories in a concept afterwards.
    pub grouped: u32,
    /// Tokens of what the members of the concepts it wrote say.
    pub member_tokens: u32,
    /// Tokens of those concepts' summaries.
    pub summary_tokens: u32,
}
