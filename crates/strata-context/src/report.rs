//! The report of an assembly: tokens per section, every candidate's fate, budget use. The same
//! report feeds the chat screen, the MCP tool, the CLI and analytics.

use std::collections::BTreeMap;

use serde::Serialize;
use strata_core::{Breakdown, MemoryId, MemoryKind};

use crate::Placement;

/// A part of the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// The system prompt.
    System,
    /// Semantic memories.
    Facts,
    /// Procedures.
    Procedures,
    /// Episodes.
    Episodes,
    /// Passages from the person's files (datasets).
    Files,
    /// The conversation so far (and its summary).
    History,
    /// The user's new message.
    Message,
    /// What holds the rest together: message framing, the preamble, tags and headings.
    Framing,
}

impl Section {
    /// The section a memory of `kind` belongs to.
    pub fn of(kind: MemoryKind) -> Section {
        match kind {
            MemoryKind::Semantic => Section::Facts,
            MemoryKind::Procedural => Section::Procedures,
            MemoryKind::Episodic => Section::Episodes,
        }
    }

    /// Its heading inside the memory block.
    pub(crate) fn heading(self) -> &'static str {
        match self {
            Section::Facts => "Facts:\n",
            Section::Procedures => "Procedures:\n",
            Section::Files => "From the user's files (cite them by label):\n",
            _ => "Episodes:\n",
        }
    }
}

/// One section's part of the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct SectionReport {
    /// Tokens it costs.
    pub tokens: usize,
    /// Items in it (memories, or messages of the conversation).
    pub items: usize,
    /// The tokens its share reserved for it first (none for the fixed sections).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<usize>,
}

/// Why a candidate is where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum Reason {
    /// In the prompt.
    Included,
    /// Says what something already in the prompt says: another memory (its id) or a turn of
    /// the conversation (`conversation`).
    Duplicate {
        /// What it duplicates.
        of: String,
    },
    /// Did not fit in what was left of the budget.
    OverBudget,
    /// A member of a concept whose summary is in the prompt, left out for it (and not
    /// expanded afterwards: the room left went to more valuable memories).
    Covered {
        /// The concept.
        by: String,
    },
}

/// One candidate memory's fate.
#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    /// The memory.
    pub id: MemoryId,
    /// Its label in the prompt (`[3]`), when included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<usize>,
    /// Its section.
    pub section: Section,
    /// Its relevance.
    pub score: f64,
    /// What it costs in the prompt; a lower bound when `tokens_exact` is false (it was dropped
    /// without counting because even that did not fit).
    pub tokens: usize,
    /// Whether `tokens` was counted.
    pub tokens_exact: bool,
    /// Relevance per token.
    pub value_per_token: f64,
    /// Why.
    #[serde(flatten)]
    pub reason: Reason,
    /// Why recall found it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<Breakdown>,
}

/// One candidate passage's fate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassageDecision {
    /// The dataset it is from.
    pub dataset: String,
    /// The file.
    pub source: String,
    /// Where in the file.
    pub place: String,
    /// Its text (kept for the window and the answer's citations, not serialized: the prompt
    /// has it).
    #[serde(skip)]
    pub text: String,
    /// Its label in the prompt, when included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<usize>,
    /// Its relevance among the passages.
    pub score: f64,
    /// What it costs in the prompt (a lower bound when it was dropped uncounted).
    pub tokens: usize,
    /// Why.
    #[serde(flatten)]
    pub reason: Reason,
}

/// A concept in the prompt and what it stood for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConceptUse {
    /// The concept.
    pub id: MemoryId,
    /// What it costs in the prompt.
    pub tokens: usize,
    /// Its members among the candidates that were left out for it (`Covered`).
    pub covered: Vec<MemoryId>,
    /// What those members would have cost in the prompt.
    pub covered_tokens: usize,
    /// `covered_tokens - tokens`: the room it saved (negative when it cost more).
    pub saved: i64,
}

/// What happened to the conversation so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct HistoryReport {
    /// Messages in it.
    pub messages: usize,
    /// Messages kept (the newest).
    pub included: usize,
    /// Messages left out (the oldest).
    pub dropped: usize,
    /// Whether the summary of earlier turns was included.
    pub summarized: bool,
}

/// The report of one assembly.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The tokenizer that counted.
    pub tokenizer: String,
    /// False when the counts are an estimate.
    pub exact: bool,
    /// The most tokens the messages could cost.
    pub budget: usize,
    /// What they cost, counted by `tokenizer`.
    pub used: usize,
    /// What they cost by the provider's own count, when one was asked (never above `budget`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact_used: Option<usize>,
    /// Who gave `exact_used`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact_counter: Option<String>,
    /// `used / budget`.
    pub utilization: f64,
    /// Where the memories went.
    pub placement: Placement,
    /// Tokens per section; they add up to `used`.
    pub sections: BTreeMap<Section, SectionReport>,
    /// The memories in the prompt, in the order they appear.
    pub included: Vec<Decision>,
    /// The candidates left out, best first.
    pub dropped: Vec<Decision>,
    /// The passages from files offered: those in the prompt first, in the order they appear,
    /// then those left out, best first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub passages: Vec<PassageDecision>,
    /// The conversation so far.
    pub history: HistoryReport,
    /// The concepts in the prompt, in the order they appear, with the members they stood for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub concepts: Vec<ConceptUse>,
}
