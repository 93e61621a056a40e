//! The rules a change must keep, in one place. Every append is held to them
//! ([`crate::store::StoreTx::append`], so every command), and so is every event of a backup
//! being restored ([`LogCheck`]): a backup cannot bring in a state the commands refuse.
//! Commands only normalize what people type (trim a tag) before the rules check it.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::event::{Change, RecordedEvent};
use crate::evolve::{EvolveError, evolve};
use crate::model::{Memory, MemoryId, normalize_reason, normalize_relation, normalize_tag};

/// Checks `change` to memory `id`, whose state is `before`; `alive` answers whether another
/// memory exists and is not forgotten (a link's target), with the error to give when not.
pub(crate) fn check(
    id: MemoryId,
    change: &Change,
    before: Option<&Memory>,
    alive: &mut dyn FnMut(MemoryId) -> Result<()>,
) -> Result<()> {
    match change {
        Change::Created(c) => {
            c.content.validate()?;
            c.scope.validate()?;
            c.source.validate()?;
            c.tags.iter().try_for_each(|t| normal("a tag", t, normalize_tag))
        }
        Change::ContentUpdated { content } => content.validate(),
        Change::Tagged { tag } | Change::Untagged { tag } => normal("a tag", tag, normalize_tag),
        Change::TierChanged { from, reason, .. } => {
            normal("a tier change's reason", reason, normalize_reason)?;
            match before {
                Some(m) if m.tier != *from => Err(Error::invalid(format!(
                    "a tier change from {from} for memory {id}, which is in the {} tier",
                    m.tier
                ))),
                _ => Ok(()),
            }
        }
        Change::Expired { reason } => normal("an expiry's reason", reason, normalize_reason),
        Change::Linked { target, relation } => {
            normal("a link's relation", relation, normalize_relation)?;
            if *target == id {
                return Err(Error::invalid("a memory cannot link to itself"));
            }
            alive(*target)
        }
        Change::Unlinked { relation, .. } => normal("a link's relation", relation, normalize_relation),
        Change::ImportanceChanged { .. }
        | Change::Accessed { .. }
        | Change::Pinned
        | Change::Unpinned
        | Change::Forgotten { .. }
        | Change::Redacted { .. } => Ok(()),
    }
}

/// Refuses a value that is not already in the form `normalize` gives it (valid, trimmed).
fn normal(what: &str, value: &str, normalize: fn(&str) -> Result<String>) -> Result<()> {
    if normalize(value)? != value {
        return Err(Error::invalid(format!("{what} must not start or end with white space")));
    }
    Ok(())
}

/// One memory's stream so far, as a log check sees it.
enum Stream {
    /// Created and readable.
    Live(Box<Memory>),
    /// Created, its payloads erased by a `forgotten` event still to come: it existed.
    Erased {
        /// The line of its first event.
        line: usize,
    },
    /// Forgotten: nothing may follow.
    Forgotten,
}

/// A whole log checked event by event, in order, against [`check`] and the shape `forget`
/// leaves: each stream starts with its creation, a memory is forgotten once, after it was
/// created, with every earlier payload erased, and nothing follows.
#[derive(Default)]
pub(crate) struct LogCheck {
    streams: HashMap<MemoryId, Stream>,
}

impl LogCheck {
    /// Checks the next event, found at `line`. A refusal names the field at fault.
    pub(crate) fn next(&mut self, ev: &RecordedEvent, line: usize) -> std::result::Result<(), (&'static str, Error)> {
        let id = ev.stream_id;
        let structure = |message: String| ("type", Error::invalid(message));
        let created = matches!(ev.change, Change::Created(_))
            || matches!(&ev.change, Change::Redacted { event_type } if event_type.ends_with("_created"));
        if created != (ev.stream_version == 1) {
            return Err(structure(format!(
                "a memory's first event, and only that one, creates it (memory {id}, version {})",
                ev.stream_version
            )));
        }
        let next = match (self.streams.remove(&id), &ev.change) {
            (Some(Stream::Forgotten), _) => {
                return Err(structure(format!("memory {id} was already forgotten; nothing may follow")));
            }
            (None | Some(Stream::Erased { .. }), Change::Redacted { .. }) => Stream::Erased { line },
            (Some(Stream::Erased { .. }), Change::Forgotten { .. }) => Stream::Forgotten,
            (None, Change::Forgotten { .. }) => {
                return Err(structure(format!("memory {id} is forgotten but was never created")));
            }
            (Some(Stream::Live(_)), Change::Redacted { .. } | Change::Forgotten { .. })
            | (Some(Stream::Erased { .. }), _) => return Err(("redacted_at", partly_erased(id))),
            (Some(Stream::Live(m)), _) => self.apply(ev, Some(*m)).map_err(|e| ("payload", e))?,
            (None, _) => self.apply(ev, None).map_err(|e| ("payload", e))?,
        };
        self.streams.insert(id, next);
        Ok(())
    }

    /// Checks and applies an event to a memory that is not erased (`before`, taken out of
    /// the map: a link to itself is refused before its target is looked up).
    fn apply(&self, ev: &RecordedEvent, before: Option<Memory>) -> Result<Stream> {
        let streams = &self.streams;
        check(ev.stream_id, &ev.change, before.as_ref(), &mut |target| match streams.get(&target) {
            Some(Stream::Live(_) | Stream::Erased { .. }) => Ok(()),
            Some(Stream::Forgotten) => Err(Error::invalid(format!("memory {target} was forgotten before this"))),
            None => Err(Error::NotFound(target.to_string())),
        })?;
        match evolve(before, ev) {
            Ok(Some(m)) => Ok(Stream::Live(Box::new(m))),
            Ok(None) => Ok(Stream::Forgotten),
            Err(EvolveError::Inconsistent(m)) => Err(Error::invalid(m)),
            Err(EvolveError::Redacted) => Err(Error::invalid("a redacted event")),
        }
    }

    /// The first line of a memory whose payloads were erased but that was never forgotten.
    pub(crate) fn unfinished(&self) -> Option<(MemoryId, usize)> {
        self.streams
            .iter()
            .filter_map(|(id, s)| match s {
                Stream::Erased { line } => Some((*id, *line)),
                _ => None,
            })
            .min_by_key(|(_, line)| *line)
    }
}

fn partly_erased(id: MemoryId) -> Error {
    Error::invalid(format!(
        "memory {id} is partly erased: forgetting erases every earlier event of a memory and ends it"
    ))
}
