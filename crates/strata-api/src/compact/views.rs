//! What front ends are shown of concepts: a concept with its summary's sentences, and a
//! concept with its members.

use serde::Serialize;
use strata_core::concepts::{ConceptBody, members};
use strata_core::{Memory, Tier};

/// One sentence of a summary, with the member it came from.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SentenceView {
    /// The member's id (a sentence a model wrote: the first it cites).
    pub from: String,
    /// Its words.
    pub text: String,
    /// The other members a written sentence cites.
    pub also: Vec<String>,
}

/// A concept as front ends show it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ConceptView {
    /// Its memory id.
    pub id: String,
    /// Its key (`concept/…`).
    pub key: String,
    /// A name a person reads.
    pub name: String,
    /// Salient terms, most salient first.
    pub terms: Vec<String>,
    /// The summary.
    pub summary: Vec<SentenceView>,
    /// The model that wrote the summary (each sentence checked against the members it
    /// cites); none when the summary quotes the members.
    pub written_by: Option<String>,
    /// Its members' ids.
    pub members: Vec<String>,
    /// When its earliest member happened.
    pub first: String,
    /// When its latest member happened.
    pub last: String,
    /// Its tier.
    #[cfg_attr(feature = "specta", specta(type = crate::shapes::TierShape))]
    pub tier: Tier,
}

impl ConceptView {
    pub(crate) fn of(m: &Memory) -> Option<ConceptView> {
        let body = ConceptBody::read(m)?;
        Some(ConceptView {
            id: m.id.to_string(),
            key: m.content.key().unwrap_or_default().to_string(),
            name: body.name,
            terms: body.terms,
            summary: body
                .summary
                .into_iter()
                .map(|s| SentenceView {
                    from: s.from.to_string(),
                    text: s.text,
                    also: s.also.iter().map(ToString::to_string).collect(),
                })
                .collect(),
            written_by: body.written_by,
            members: members(m).iter().map(ToString::to_string).collect(),
            first: strata_core::time::format_time(body.first),
            last: strata_core::time::format_time(body.last),
            tier: m.tier,
        })
    }
}

/// A concept and its members (`expand_concept`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ExpandedConcept {
    /// The concept.
    pub concept: ConceptView,
    /// Its members, earliest first.
    pub members: Vec<crate::dto::MemoryView>,
    /// How many members the caller may see (more than `members` when a limit cut them).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub total: usize,
}
