//! Context assembly: what goes into a model's prompt, within exactly how many tokens, and why.
//!
//! [`assemble`] takes the system prompt, the conversation so far, the user's new message, the
//! candidate memories recall found (with their scores) and a budget, and returns the messages to
//! send with a [`Report`]: tokens per section, every candidate included or dropped and why,
//! and how much of the budget is used. The messages never cost more than the budget, counted
//! with the target model's tokenizer ([`strata_tokens::count_messages`]).
#![deny(missing_docs)]

mod assemble;
mod memory;
mod render;
mod report;
mod similar;

pub use assemble::{assemble, assemble_with};
pub use memory::BudgetedMemory;
pub use render::{body_for, dated};
pub use report::{ConceptUse, Decision, HistoryReport, PassageDecision, Reason, Report, Section, SectionReport};
pub use similar::{Signature, near_duplicate_groups};

use serde::{Deserialize, Serialize};
use strata_core::chat::DEFAULT_PREAMBLE;
use strata_core::{Breakdown, Error, Memory, Message, Result};

/// A memory that may go into the prompt, and how relevant recall found it.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The memory.
    pub memory: Memory,
    /// Its relevance (higher is better).
    pub score: f64,
    /// Why recall found it, carried into the report.
    pub why: Option<Breakdown>,
}

impl From<strata_core::Recalled> for Candidate {
    /// A recalled memory with its score and why.
    fn from(r: strata_core::Recalled) -> Candidate {
        Candidate { score: r.breakdown.score, why: Some(r.breakdown), memory: r.memory }
    }
}

/// A passage of one of the person's files (a dataset's chunk or row) that may go into the
/// prompt beside memories, labelled with where it came from so that an answer can cite it.
#[derive(Debug, Clone, PartialEq)]
pub struct Passage {
    /// The dataset it belongs to (its name).
    pub dataset: String,
    /// The file it came from, as the person named it.
    pub source: String,
    /// Where in the file ("page 2, lines 3–5", "row 12").
    pub place: String,
    /// Its text.
    pub text: String,
    /// Its relevance among the passages (higher is better; on its own scale, not recall's).
    pub score: f64,
}

impl Passage {
    /// How the prompt and the report name it: "contract.pdf, page 2, lines 3–5".
    pub fn citation(&self) -> String {
        format!("{}, {}", self.source, self.place)
    }
}

/// Where the memories go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// A system message right after the system prompt.
    #[default]
    AfterSystem,
    /// A system message right before the user's new message.
    BeforeLastUser,
    /// After the user's new message, as the result of a `recall_memories` tool call.
    ToolResult,
}

impl std::str::FromStr for Placement {
    type Err = Error;
    fn from_str(s: &str) -> Result<Placement> {
        match s {
            "after_system" => Ok(Placement::AfterSystem),
            "before_last_user" => Ok(Placement::BeforeLastUser),
            "tool_result" => Ok(Placement::ToolResult),
            _ => Err(Error::invalid(format!(
                "unknown placement '{s}' (expected after_system, before_last_user or tool_result)"
            ))),
        }
    }
}

/// How candidates compete for the budget. Either way selection is budget-aware: a candidate
/// that does not fit is skipped and smaller ones after it still get the room left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Value per token, the value falling steeply with the score relative to the best
    /// candidate's: of two memories of the same score the shorter one goes first.
    ValuePerToken,
    /// Relevance first. The default: on LoCoMo it keeps as much evidence as value per token
    /// (0.876 against 0.877 of evidence within 2,000 tokens; 0.739 against 0.733 within 500).
    #[default]
    Score,
}

/// The share of the budget (after the system prompt and the new message) each section may
/// fill first. What a section leaves unused goes to the others, so shares are a floor for
/// each section under competition, not a cap when there is room.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Shares {
    /// Semantic memories.
    pub facts: f64,
    /// Procedures.
    pub procedures: f64,
    /// Episodes.
    pub episodes: f64,
    /// The conversation so far.
    pub history: f64,
    /// Passages from the person's files, when a request offers any: this share is set aside
    /// for them first and the four above are shares of the rest (with no passages it goes to
    /// the others whole).
    #[serde(default = "Shares::default_files")]
    pub files: f64,
}

impl Shares {
    fn default_files() -> f64 {
        0.3
    }
}

impl Default for Shares {
    fn default() -> Self {
        Shares { facts: 0.2, procedures: 0.1, episodes: 0.3, history: 0.4, files: Shares::default_files() }
    }
}

/// How to assemble.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextOptions {
    /// Each section's share of the budget.
    pub shares: Shares,
    /// Where the memories go.
    pub placement: Placement,
    /// The words before the memories.
    pub preamble: String,
    /// Word-set similarity (0–1) from which a memory counts as a near-duplicate of one already
    /// in the prompt (another memory or a turn of the conversation).
    pub duplicate_similarity: f64,
    /// How candidates compete.
    pub order: Order,
    /// Whether the engine offers concepts (compaction's summaries) as candidates: a concept in
    /// the prompt stands for its members, which come back only for room left over. Off by
    /// default: on LoCoMo, prompts with concepts held the answer less often at every budget
    /// (docs/benchmarks.md, "Compaction").
    #[serde(default)]
    pub concepts: bool,
}

impl Default for ContextOptions {
    fn default() -> Self {
        ContextOptions {
            shares: Shares::default(),
            placement: Placement::default(),
            preamble: DEFAULT_PREAMBLE.to_string(),
            duplicate_similarity: 0.8,
            order: Order::default(),
            concepts: false,
        }
    }
}

impl ContextOptions {
    /// Checks the shares and the similarity threshold.
    pub fn validate(&self) -> Result<()> {
        let s = self.shares;
        let all = [s.facts, s.procedures, s.episodes, s.history];
        if all.iter().any(|x| !x.is_finite() || *x < 0.0) || all.iter().sum::<f64>() > 1.0 + 1e-9 {
            return Err(Error::invalid("section shares must be between 0 and 1 and add up to at most 1"));
        }
        if !(0.0..=1.0).contains(&s.files) {
            return Err(Error::invalid("the files' share must be between 0 and 1"));
        }
        if !(0.0..=1.0).contains(&self.duplicate_similarity) {
            return Err(Error::invalid("the duplicate similarity must be between 0 and 1"));
        }
        Ok(())
    }
}

/// What to assemble.
#[derive(Debug, Clone, Default)]
pub struct ContextRequest {
    /// The system prompt, if any (never dropped).
    pub system: Option<String>,
    /// The conversation so far, oldest first (its oldest turns go first when short of room).
    pub history: Vec<Message>,
    /// A summary of the conversation's earlier turns, shown in place of the turns that do not
    /// fit (kept by the caller as the conversation grows).
    pub history_summary: Option<String>,
    /// The user's new message (never dropped).
    pub message: String,
    /// Candidate memories, in any order.
    pub candidates: Vec<Candidate>,
    /// Candidate passages from the person's files, in any order (they form their own section,
    /// [`Shares::files`]).
    pub passages: Vec<Passage>,
    /// The most tokens the messages may cost.
    pub budget: usize,
}

/// The assembled prompt and why it is what it is.
#[derive(Debug, Clone, Serialize)]
pub struct Assembled {
    /// The messages to send, in order.
    pub messages: Vec<Message>,
    /// The report.
    pub report: Report,
}
