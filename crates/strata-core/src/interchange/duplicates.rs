//! What an import does with a memory that is already stored: the same concept key or
//! procedure name in the scope, or an identical episode (same time, words and session).
//! [`OnDuplicate`] chooses; [`ImportSummary`] counts what happened to each memory of a file.

use serde::Serialize;

use super::seed::ImportCounts;

use crate::model::{Content, MemoryKind};

use crate::names::named_enum;

named_enum! {
    /// What an import does when a memory of the file is already stored.
    #[derive(Default)]
    pub enum OnDuplicate ("choice for duplicates") {
        /// Stop with an error naming it; nothing is imported.
        #[default]
        Stop = "stop",
        /// Keep what is stored and count the memory as skipped.
        Skip = "skip",
        /// A concept takes the file's new and changed facts, a procedure its steps and
        /// context, as one content update; an identical memory is left as it is.
        Merge = "merge",
    }
}

/// What an import did with each memory of the file, per type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ImportSummary {
    /// New memories created.
    pub added: ImportCounts,
    /// Stored memories whose content the file changed (merge).
    pub merged: ImportCounts,
    /// Stored memories the file holds as they are (merge).
    pub unchanged: ImportCounts,
    /// Memories already stored and left alone (skip).
    pub skipped: ImportCounts,
}

/// What happened to one memory of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Added,
    Merged,
    Unchanged,
    Skipped,
}

impl ImportSummary {
    pub(crate) fn count(&mut self, outcome: Outcome, kind: MemoryKind) {
        let counts = match outcome {
            Outcome::Added => &mut self.added,
            Outcome::Merged => &mut self.merged,
            Outcome::Unchanged => &mut self.unchanged,
            Outcome::Skipped => &mut self.skipped,
        };
        counts.add(kind);
    }
}

/// `stored` with `incoming` merged in: a concept keeps its facts, takes the new ones and the
/// file's values for the ones that differ; a procedure takes the file's steps and context;
/// an episode stays as it is.
pub(crate) fn merged(stored: &Content, incoming: Content) -> Content {
    match (stored, incoming) {
        (Content::Semantic(s), Content::Semantic(i)) => {
            let mut out = s.clone();
            out.facts.extend(i.facts);
            Content::Semantic(out)
        }
        (Content::Procedural(_), incoming @ Content::Procedural(_)) => incoming,
        (stored, _) => stored.clone(),
    }
}

/// In words, for the person who imported: "3 added, 2 merged, 1 already there".
impl std::fmt::Display for ImportSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} added", self.added.total())?;
        let (merged, unchanged, skipped) = (self.merged.total(), self.unchanged.total(), self.skipped.total());
        if merged > 0 {
            write!(f, ", {merged} merged")?;
        }
        if unchanged > 0 {
            write!(f, ", {unchanged} already there")?;
        }
        if skipped > 0 {
            write!(f, ", {skipped} skipped (already there)")?;
        }
        Ok(())
    }
}

/// The stored memory in `scope` that `content` duplicates: the same key and type, or for an
/// episode the same time, body and session.
pub(crate) fn stored(
    tx: &crate::store::StoreTx<'_>,
    scope: &crate::model::Scope,
    content: &Content,
) -> crate::error::Result<Option<crate::model::Memory>> {
    use crate::storage::Log;
    if let Some(key) = content.key() {
        let found = tx.find_by_key(&scope.user_id, scope.agent_id.as_deref(), Some(content.kind()), key)?;
        return Ok(found.into_iter().next());
    }
    let Content::Episodic(e) = content else { return Ok(None) };
    let at = crate::clock::to_ms(e.occurred_at);
    let same = tx.tx.episodes_at(&scope.user_id, scope.agent_id.as_deref(), scope.session_id.as_deref(), at)?;
    Ok(same
        .into_iter()
        .find(|m| matches!(&m.content, Content::Episodic(s) if s.occurred_at == e.occurred_at && s.body == e.body)))
}
