//! The one definition of what an event does to a memory. Live projections, replay and as-of
//! reads all fold events through [`evolve`], so they cannot disagree.

use crate::event::{Change, RecordedEvent};
use crate::model::{Link, Memory};

/// Why an event could not be applied to the state before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvolveError {
    /// The stream's payloads were erased: the memory was forgotten.
    Redacted,
    /// The log is inconsistent (e.g. an update before the creation).
    Inconsistent(String),
}

/// The state of a memory after `event`, given the state before it (`None`: not created yet, or
/// forgotten).
pub fn evolve(state: Option<Memory>, event: &RecordedEvent) -> Result<Option<Memory>, EvolveError> {
    let at = event.recorded_at;
    let mut m = match (&event.change, state) {
        (Change::Created(c), None) => {
            let c = c.as_ref().clone();
            return Ok(Some(Memory {
                tags: c.tags,
                importance: c.importance,
                tier: c.tier,
                version: event.stream_version,
                ..Memory::new(event.stream_id, c.scope, c.content, c.source, at)
            }));
        }
        (Change::Created(_), Some(_)) => {
            return Err(EvolveError::Inconsistent(format!("memory {} created twice", event.stream_id)));
        }
        (Change::Forgotten { .. }, _) => return Ok(None),
        (Change::Redacted { .. }, _) => return Err(EvolveError::Redacted),
        (_, None) => {
            return Err(EvolveError::Inconsistent(format!(
                "{} for memory {} before it was created",
                event.change.event_type(),
                event.stream_id
            )));
        }
        (_, Some(m)) => m,
    };
    match &event.change {
        Change::ContentUpdated { content } => {
            if content.kind() != m.kind() {
                return Err(EvolveError::Inconsistent(format!(
                    "content of memory {} changed type from {} to {}",
                    m.id,
                    m.kind(),
                    content.kind()
                )));
            }
            m.content = content.clone();
            m.updated_at = at;
        }
        Change::Tagged { tag } => {
            m.tags.insert(tag.clone());
            m.updated_at = at;
        }
        Change::Untagged { tag } => {
            m.tags.remove(tag);
            m.updated_at = at;
        }
        Change::ImportanceChanged { importance } => {
            m.importance = *importance;
            m.updated_at = at;
        }
        Change::Accessed { count } => {
            m.access_count += u64::from(*count);
            m.last_accessed_at = Some(at);
        }
        Change::TierChanged { to, .. } => {
            m.tier = *to;
            m.expired_at = None;
            m.updated_at = at;
        }
        Change::Pinned => {
            m.pinned = true;
            m.expired_at = None;
            m.updated_at = at;
        }
        Change::Unpinned => {
            m.pinned = false;
            m.updated_at = at;
        }
        Change::Expired { .. } => {
            m.expired_at = Some(at);
        }
        Change::Linked { target, relation } => {
            m.links.insert(Link { target: *target, relation: relation.clone() });
        }
        Change::Unlinked { target, relation } => {
            m.links.remove(&Link { target: *target, relation: relation.clone() });
        }
        Change::Created(_) | Change::Forgotten { .. } | Change::Redacted { .. } => {
            unreachable!("handled above")
        }
    }
    m.version = event.stream_version;
    Ok(Some(m))
}
